"""Phi (Microsoft's Phi-1, Phi-1.5 and Phi-2): a decoder with one LayerNorm a layer, whose output both the attention
and the feed-forward network read (a parallel residual: out = x + Attention(LN(x)) + FFN(LN(x))), rotary positions
on the first share of each head's dimensions (partial_rotary_factor), separate q, k and v projections with biases,
and an output layer with a bias. Phi models that normalise q and k (qk_layernorm) are refused with the reason."""
from __future__ import annotations

from ...assets import ModelLoadError
from ...schema import Schema
from ..shapes import decoder_only
from .gpt_neox import rotary_share
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.phi", "Phi"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "phi"


def schema_of_config(c: dict) -> Schema:
    if c.get("qk_layernorm"):
        raise ModelLoadError("this Phi normalises q and k inside its attention (qk_layernorm): not supported; "
                             "Phi-1, Phi-1.5 and Phi-2 open")
    d, h, act = c.get("hidden_size", 2048), c.get("num_attention_heads", 32), str(c.get("hidden_act", "gelu_new"))
    return decoder_only("phi", c.get("num_hidden_layers", 24), d, h, c.get("intermediate_size") or 4 * d,
                        {"eos": "<|endoftext|>"}, norm_place="pre", positions="rotary",
                        n_kv_heads=c.get("num_key_value_heads") or h, scale_embedding=False,
                        activation="GELU" if act.startswith("gelu") else act.upper(),
                        tied=bool(c.get("tie_word_embeddings", False)), output_bias=True, parallel=True,
                        shared_norm=True, rotary_share=rotary_share(c, 0.5))


def max_len(config) -> int:
    return int(config.max_position_embeddings)


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap, rotary_function, separate_qkv
    m = model.model
    layers = [{"self": separate_qkv(l.input_layernorm, l.self_attn, "dense"),
               "ffn": Part(l.input_layernorm, down=l.mlp.fc2)} for l in m.layers]      # one norm for both
    return ModelMap([StackMap("dec", layers, m.layers[0], m.embed_tokens, 1.0, None, m.final_layernorm)],
                    m.rotary_emb, rotary_function(m.layers[0].self_attn), parallel=True)
