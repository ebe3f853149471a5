"""T5: encoder-decoder, pre-norm RMSNorm, no position embeddings but a learned bias per head on the scores by
relative position (computed in the first layer, added in every layer), scores not scaled by 1/√d_k."""
from __future__ import annotations

from dataclasses import replace

from ...schema import RMS_NORM, Schema
from ..shapes import encoder_decoder
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.t5", "T5"
AUTO = "T5ForConditionalGeneration"     # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "t5"


def schema_of_config(c: dict) -> Schema:
    act = str(c.get("feed_forward_proj", "relu")).replace("gated-", "")
    tied = bool(c.get("tie_word_embeddings", True))
    schema = encoder_decoder("t5", c.get("num_layers", 6), c.get("num_decoder_layers") or c.get("num_layers", 6),
                             c.get("d_model", 512), c.get("num_heads", 8), c.get("d_ff", 2048),
                             {"pad": "<pad>", "eos": "</s>", "unk": "<unk>"}, norm=RMS_NORM, norm_place="pre",
                             positions="relative", scale_embedding=False, scale_scores=False,
                             activation="ReLU" if act == "relu" else act.upper(), biases=False,
                             tied=tied, output_bias=False)
    if tied:         # T5 scales the decoder's output by 1/√d_model before the tied output layer
        schema = replace(schema, output_equation=schema.output_equation.replace("h_t ", "(h_t / √d_model) "))
    return replace(schema, d_k=c.get("d_kv", 64))


schema_of_folder, open = interface(__name__)


def _attn(a) -> dict:
    return {"q": a.q, "k": a.k, "v": a.v}


def model_map(model):
    from .tracing import ModelMap, Part, StackMap
    enc, dec = model.encoder, model.decoder

    def ffn(block):
        return Part(block.layer[-1].layer_norm, down=block.layer[-1].DenseReluDense.wo)
    enc_parts = [{"self": Part(b.layer[0].layer_norm, _attn(b.layer[0].SelfAttention), scale=1.0,
                                  out=b.layer[0].SelfAttention.o), "ffn": ffn(b)}
                 for b in enc.block]
    dec_parts = [{"self": Part(b.layer[0].layer_norm, _attn(b.layer[0].SelfAttention), scale=1.0,
                               out=b.layer[0].SelfAttention.o),
                  "cross": Part(b.layer[1].layer_norm, _attn(b.layer[1].EncDecAttention), scale=1.0,
                                out=b.layer[1].EncDecAttention.o), "ffn": ffn(b)}
                 for b in dec.block]
    bias = {st: {"self": s.block[0].layer[0].SelfAttention.relative_attention_bias} for st, s in (("enc", enc),
                                                                                             ("dec", dec))}
    return ModelMap([StackMap("enc", enc_parts, enc.block[0], enc.embed_tokens, 1.0, None, enc.final_layer_norm,
                              bias["enc"]),
                     StackMap("dec", dec_parts, dec.block[0], dec.embed_tokens, 1.0, None, dec.final_layer_norm,
                              bias["dec"])], scale_scores=False)
