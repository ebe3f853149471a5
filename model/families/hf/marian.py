"""Marian (MarianMTModel, the OPUS-MT translators): encoder-decoder, post-norm LayerNorm, sinusoidal positions (sin
and cos in two halves), embeddings scaled by √d_model."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import encoder_decoder
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.marian", "Marian"
AUTO = "MarianMTModel"            # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "marian"


def schema_of_config(c: dict) -> Schema:
    return encoder_decoder("marian", c.get("encoder_layers", 6), c.get("decoder_layers", 6), c.get("d_model", 512),
                           c.get("encoder_attention_heads", 8), c.get("encoder_ffn_dim", 2048),
                           {"pad": "<pad>", "eos": "</s>", "unk": "<unk>"}, positions="sinusoidal",
                           scale_embedding=bool(c.get("scale_embedding", True)),
                           tied=bool(c.get("tie_word_embeddings", True)),        # plus final_logits_bias
                           activation={"swish": "SiLU", "silu": "SiLU"}.get(c.get("activation_function", "swish"),
                                                                           str(c.get("activation_function")).upper()))


schema_of_folder, open = interface(__name__)


def _attn(a) -> dict:
    return {"q": a.q_proj, "k": a.k_proj, "v": a.v_proj}


def seq2seq_map(enc, dec, enc_scale: float = 1.0, dec_scale: float = 1.0, final_norms: bool = False):
    """The map of Marian, BART and mBART (same module names; mBART adds a final norm to each stack)."""
    from .tracing import ModelMap, Part, StackMap
    enc_parts = [{"self": Part(l.self_attn_layer_norm, _attn(l.self_attn), scale=l.self_attn.scaling,
                               out=l.self_attn.out_proj),
                  "ffn": Part(l.final_layer_norm, down=l.fc2)} for l in enc.layers]
    dec_parts = [{"self": Part(l.self_attn_layer_norm, _attn(l.self_attn), scale=l.self_attn.scaling,
                               out=l.self_attn.out_proj),
                  "cross": Part(l.encoder_attn_layer_norm, _attn(l.encoder_attn), scale=l.encoder_attn.scaling,
                                out=l.encoder_attn.out_proj),
                  "ffn": Part(l.final_layer_norm, down=l.fc2)} for l in dec.layers]
    return ModelMap([StackMap("enc", enc_parts, enc.layers[0], enc.embed_tokens, enc_scale, enc.embed_positions,
                              enc.layer_norm if final_norms else None),
                     StackMap("dec", dec_parts, dec.layers[0], dec.embed_tokens, dec_scale, dec.embed_positions,
                              dec.layer_norm if final_norms else None)])


def model_map(model):
    enc, dec = model.model.encoder, model.model.decoder
    return seq2seq_map(enc, dec, enc.embed_scale, dec.embed_scale)      # Marian scales outside its embedding
