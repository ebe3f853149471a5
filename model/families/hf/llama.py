"""The Llama family (Llama, Mistral, Qwen2, Qwen3, Phi-3): decoder-only, pre-norm RMSNorm, rotary positions,
grouped-query attention, a gated MLP (Phi-3: q, k and v in one projection, gate and up in another, rotary positions
on the share of each head its partial_rotary_factor gives). q and k are shown after the rotation, as the model
multiplies them (Qwen3's after its RMSNorm of each head's q and k too). Texts are read up to a sliding window where
layers have one (Mistral 7B v0.1: 4096 tokens): within it, its attention is the causal attention drawn."""
from __future__ import annotations

from dataclasses import replace

from ...schema import GATED_MLP, RMS_NORM, Schema
from ..shapes import decoder_only
from .gpt_neox import rotary_share
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.llama", "Llama/Mistral/Qwen/Phi-3"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it
MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "phi3")


def recognises(config: dict) -> bool:
    return config.get("model_type") in MODEL_TYPES


def schema_of_config(c: dict) -> Schema:
    d, h = c.get("hidden_size", 4096), c.get("num_attention_heads", 32)
    act = {"silu": "SiLU", "swish": "SiLU"}.get(c.get("hidden_act", "silu"), str(c.get("hidden_act")).upper())
    schema = decoder_only(c.get("model_type", "llama"), c.get("num_hidden_layers", 32), d, h,
                          c.get("intermediate_size", 4 * d), {}, norm=RMS_NORM, norm_place="pre", positions="rotary",
                          n_kv_heads=c.get("num_key_value_heads") or h, scale_embedding=False, ffn=GATED_MLP,
                          activation=act, tied=bool(c.get("tie_word_embeddings", False)), output_bias=False,
                          biases=bool(c.get("attention_bias", c.get("model_type") == "qwen2")),   # Qwen2: q, k, v
                          qk_norm=c.get("model_type") == "qwen3", rotary_share=rotary_share(c, 1.0))
    return replace(schema, d_k=c.get("head_dim") or d // h)


def max_len(config) -> int:
    """The tokens its positions cover, and no more than a sliding window where a layer has one (transformers sets
    sliding_window to None where the config turns it off, as Qwen's use_sliding_window does)."""
    n, window = int(config.max_position_embeddings), getattr(config, "sliding_window", None)
    slides = window and "sliding_attention" in (getattr(config, "layer_types", None) or ["sliding_attention"])
    return min(n, int(window)) if slides else n


def cut_by(config) -> str:
    """Why a text is cut before its positions run out ("" when it is not), as gpt_neo.cut_by."""
    if max_len(config) >= int(config.max_position_embeddings):
        return ""
    return (f"its sliding window; it has {int(config.max_position_embeddings):,} positions, but past the window its "
            "attention is not the causal attention drawn")


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap, rotary_function, separate_qkv
    m = model.model
    parts = [{"self": Part(l.input_layernorm, {"qkv": l.self_attn.qkv_proj}, scale=l.self_attn.scaling,
                           out=l.self_attn.o_proj) if hasattr(l.self_attn, "qkv_proj")         # Phi-3: fused
              else separate_qkv(l.input_layernorm, l.self_attn, "o_proj", normed=hasattr(l.self_attn, "q_norm")),
              "ffn": Part(l.post_attention_layernorm, down=l.mlp.down_proj)} for l in m.layers]
    return ModelMap([StackMap("dec", parts, m.layers[0], m.embed_tokens, 1.0, None, m.norm)], m.rotary_emb,
                    rotary_function(m.layers[0].self_attn))
