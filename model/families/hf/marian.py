"""Marian (MarianMTModel, the OPUS-MT translators): encoder-decoder, post-norm LayerNorm, sinusoidal positions (sin
and cos in two halves), embeddings scaled by √d_model."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import encoder_decoder
from .loaded import interface, translate  # noqa: F401 (translate: the family interface)

NAME, TITLE = "hf.marian", "Marian"
AUTO = "MarianMTModel"            # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "marian"


def schema_of_config(c: dict) -> Schema:
    return encoder_decoder("marian", c.get("encoder_layers", 6), c.get("decoder_layers", 6), c.get("d_model", 512),
                           c.get("encoder_attention_heads", 8), c.get("encoder_ffn_dim", 2048),
                           {"pad": "<pad>", "eos": "</s>", "unk": "<unk>"}, positions="sinusoidal",
                           scale_embedding=bool(c.get("scale_embedding", True)),
                           activation={"swish": "SiLU", "silu": "SiLU"}.get(c.get("activation_function", "swish"),
                                                                           str(c.get("activation_function")).upper()))


def _attn(a) -> dict:
    return {"q": a.q_proj, "k": a.k_proj, "v": a.v_proj}

schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap
    enc, dec = model.model.encoder, model.model.decoder
    enc_parts = [{"self": Part(l.self_attn_layer_norm, _attn(l.self_attn), scale=l.self_attn.scaling),
                  "ffn": Part(l.final_layer_norm, down=l.fc2)} for l in enc.layers]
    dec_parts = [{"self": Part(l.self_attn_layer_norm, _attn(l.self_attn), scale=l.self_attn.scaling),
                  "cross": Part(l.encoder_attn_layer_norm, _attn(l.encoder_attn), scale=l.encoder_attn.scaling),
                  "ffn": Part(l.final_layer_norm, down=l.fc2)} for l in dec.layers]
    return ModelMap([StackMap("enc", enc_parts, enc.layers[0], enc.embed_tokens, enc.embed_scale, enc.embed_positions),
                     StackMap("dec", dec_parts, dec.layers[0], dec.embed_tokens, dec.embed_scale, dec.embed_positions)])
