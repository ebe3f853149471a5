"""Gemma, Gemma 2 and Gemma 3 (Google): decoders as Llama's (pre-norm RMSNorm, rotary positions, grouped-query
heads, a gated MLP) with their own ways:

- the token embedding scaled by √d_model inside the model (its embedding module's output is the scaled one);
- each RMSNorm multiplies by 1 + w (its stored weights start at 0): the panels show γ = 1 + w;
- Gemma 2 normalises each sublayer's output too before adding it (out = x + RMSNorm(f(RMSNorm(x)))), caps the
  attention scores and the logits softly (c · tanh(s / c), its attn_logit_softcapping and final_logit_softcapping),
  and alternates global layers with layers that see a sliding window: texts are read up to the window, within which
  it is the causal attention drawn;
- Gemma 3 (model type gemma3_text: the text model of Gemma 3, 270M and 1B) drops the caps, normalises each head's q
  and k (as Qwen3) and turns its local layers' q and k by a rotary base of their own: each layer's attention is
  computed with its own, and the Embeddings panel shows the global layers' table.

Gemma 3 models with bidirectional attention (EmbeddingGemma) are refused with the reason."""
from __future__ import annotations

from dataclasses import replace

from ...assets import ModelLoadError
from ...schema import GATED_MLP, RMS_NORM, Schema
from ..shapes import decoder_only
from .llama import cut_by, max_len  # noqa: F401 (the family interface: texts up to a sliding window)
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.gemma", "Gemma/Gemma 2/Gemma 3"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it
MODEL_TYPES = ("gemma", "gemma2", "gemma3_text")


def recognises(config: dict) -> bool:
    return config.get("model_type") in MODEL_TYPES


def schema_of_config(c: dict) -> Schema:
    if c.get("use_bidirectional_attention"):
        raise ModelLoadError("this Gemma 3 attends both ways (use_bidirectional_attention, as EmbeddingGemma): not "
                             "supported; Gemma 3's text models open")
    d, h, kind = c.get("hidden_size", 3072), c.get("num_attention_heads", 16), c.get("model_type", "gemma")
    second, third = kind == "gemma2", kind == "gemma3_text"
    act = str(c.get("hidden_activation") or c.get("hidden_act") or "gelu_pytorch_tanh")
    caps = dict(score_cap=float(c.get("attn_logit_softcapping") or 0), logit_cap=float(c.get(
        "final_logit_softcapping") or 0)) if second else {}
    d_k = c.get("head_dim") or d // h
    # Gemma 2 and 3 divide q·kᵀ by √query_pre_attn_scalar, d_k but in the 27B models (Gemma by √d_k)
    scalar = c.get("query_pre_attn_scalar") if second or third else None
    caps |= {"score_scalar": float(scalar)} if scalar and scalar != d_k else {}
    schema = decoder_only(c.get("model_type", "gemma"), c.get("num_hidden_layers", 28), d, h,
                          c.get("intermediate_size") or 8 * d, {"eos": "<eos>"}, norm=RMS_NORM, norm_place="pre",
                          positions="rotary", n_kv_heads=c.get("num_key_value_heads") or h, scale_embedding=True,
                          ffn=GATED_MLP, activation="GELU" if act.startswith("gelu") else act.upper(),
                          tied=bool(c.get("tie_word_embeddings", True)), output_bias=False,
                          biases=bool(c.get("attention_bias", False)), sandwich=second or third, qk_norm=third,
                          **caps)
    return replace(schema, d_k=d_k)


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap, rotary_function, separate_qkv
    m = model.model
    second = hasattr(m.layers[0], "pre_feedforward_layernorm")       # Gemma 2 and 3
    third = hasattr(m.layers[0].self_attn, "q_norm")                  # Gemma 3: q_norm's output is (H, T, d_k)
    parts = [{"self": separate_qkv(l.input_layernorm, l.self_attn, "o_proj", normed=third, heads_first=third,
                                   rotary_type=l.self_attn.layer_type if third else None,
                                   softcap=float(getattr(l.self_attn, "attn_logit_softcapping", None) or 0)),
              "ffn": Part(l.pre_feedforward_layernorm if second else l.post_attention_layernorm,
                          down=l.mlp.down_proj)} for l in m.layers]
    # the embedding module gives E[token] · √d_model: the scale is its own
    return ModelMap([StackMap("dec", parts, m.layers[0], m.embed_tokens, 1.0, None, m.norm)], m.rotary_emb,
                    rotary_function(m.layers[0].self_attn), gamma_offset=1.0)
