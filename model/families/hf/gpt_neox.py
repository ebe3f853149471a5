"""GPT-NeoX (EleutherAI's GPT-NeoX and Pythia): a pre-norm decoder with rotary positions on the first share of each
head's dimensions (rotary_pct, a quarter in Pythia), one fused q-k-v projection laid out head by head, and, in most
of them, a parallel residual: the feed-forward network reads the layer's input beside the attention, each through a
LayerNorm of its own, and both results are added to it (use_parallel_residual)."""
from __future__ import annotations

import json

from ...assets import ModelLoadError
from ...schema import Schema
from ..shapes import decoder_only
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.gpt_neox", "GPT-NeoX/Pythia"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "gpt_neox"


def rotary_share(c: dict, default: float = 0.25) -> float:
    """The share of each head's dimensions that rotary positions turn (older configs: rotary_pct, or
    partial_rotary_factor beside rope_theta); ModelLoadError naming it when it is no share (over 0, at most 1)."""
    rope = c.get("rope_parameters") or c.get("rope_scaling") or {}
    for where, key in ((rope, "partial_rotary_factor"), (c, "partial_rotary_factor"), (c, "rotary_pct")):
        if key in where:
            value = where[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise ModelLoadError(f"{key} is {json.dumps(value)}: the share of each head's dimensions that "
                                     "rotary positions turn must be over 0 and at most 1")
            return float(value)
    return default


def schema_of_config(c: dict) -> Schema:
    d, act = c.get("hidden_size", 6144), str(c.get("hidden_act", "gelu"))
    return decoder_only("gpt_neox", c.get("num_hidden_layers", 44), d, c.get("num_attention_heads", 64),
                        c.get("intermediate_size") or 4 * d, {"eos": "<|endoftext|>"}, norm_place="pre",
                        positions="rotary", scale_embedding=False,
                        activation="GELU" if act.startswith("gelu") else act.upper(),
                        tied=bool(c.get("tie_word_embeddings", False)), output_bias=False,
                        biases=bool(c.get("attention_bias", True)), ffn_biases=True,
                        parallel=bool(c.get("use_parallel_residual", True)), rotary_share=rotary_share(c))


def max_len(config) -> int:
    return int(config.max_position_embeddings)


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap, rotary_function
    m = model.gpt_neox
    layers = [{"self": Part(l.input_layernorm, {"qkv": l.attention.query_key_value}, scale=l.attention.scaling,
                            out=l.attention.dense, by_head=True),
               "ffn": Part(l.post_attention_layernorm, down=l.mlp.dense_4h_to_h)} for l in m.layers]
    return ModelMap([StackMap("dec", layers, m.layers[0], m.embed_in, 1.0, None, m.final_layer_norm)], m.rotary_emb,
                    rotary_function(m.layers[0].attention), parallel=bool(model.config.use_parallel_residual))
