"""GPT-2: decoder-only, pre-norm LayerNorm, learned positions, a fused q/k/v projection (c_attn), GELU MLP."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import decoder_only
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.gpt2", "GPT-2"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "gpt2"


def schema_of_config(c: dict) -> Schema:
    d = c.get("n_embd", 768)
    return decoder_only("gpt2", c.get("n_layer", 12), d, c.get("n_head", 12), c.get("n_inner") or 4 * d,
                        {"eos": "<|endoftext|>"}, norm_place="pre", positions="learned", scale_embedding=False,
                        activation="GELU", tied=True, output_bias=False)


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap
    t = model.transformer
    layers = [{"self": Part(b.ln_1, {"qkv": b.attn.c_attn}, scale=b.attn.scaling, out=b.attn.c_proj),
               "ffn": Part(b.ln_2, down=b.mlp.c_proj)} for b in t.h]
    return ModelMap([StackMap("dec", layers, t.h[0], t.wte, 1.0, t.wpe, t.ln_f)])
