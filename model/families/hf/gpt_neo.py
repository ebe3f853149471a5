"""GPT-Neo (EleutherAI's GPT-Neo, and the TinyStories models built on it): GPT-2's layout with separate q, k and v
projections without biases, scores not divided by √d_k, and layers that alternate global attention with local
attention over the last window_size tokens. Texts are read up to window_size tokens, where local attention is
causal attention, so that every layer's mask is the one the panels draw."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import decoder_only
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.gpt_neo", "GPT-Neo"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it


def recognises(config: dict) -> bool:
    return config.get("model_type") == "gpt_neo"


def schema_of_config(c: dict) -> Schema:
    d, act = c.get("hidden_size", 2048), str(c.get("activation_function", "gelu_new"))
    return decoder_only("gpt_neo", c.get("num_layers", 24), d, c.get("num_heads", 16),
                        c.get("intermediate_size") or 4 * d, {"eos": "<|endoftext|>"}, norm_place="pre",
                        positions="learned", scale_embedding=False, scale_scores=False,
                        activation="GELU" if act.startswith("gelu") else act.upper(), tied=True, output_bias=False,
                        biases=False, ffn_biases=True)


def max_len(config) -> int:
    """The tokens its positions cover, and no more than a local layer's window: past it, local attention is not the
    causal attention drawn (2048 positions and a window of 256 in GPT-Neo 125M: 256 tokens)."""
    n = int(config.max_position_embeddings)
    return min(n, int(config.window_size)) if "local" in getattr(config, "attention_layers", ()) else n


def cut_by(config) -> str:
    """Why a text is cut before its positions run out ("" when it is not): the note had said "the model's 24
    tokens" of a model with 64 positions (QA as a researcher)."""
    if max_len(config) >= int(config.max_position_embeddings):
        return ""
    return (f"its local attention window, window_size; it has {int(config.max_position_embeddings):,} positions, but "
            "past the window its local layers' attention is not the causal attention drawn")


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap
    t = model.transformer
    layers = [{"self": Part(b.ln_1, {"q": b.attn.attention.q_proj, "k": b.attn.attention.k_proj,
                                     "v": b.attn.attention.v_proj}, scale=1.0, out=b.attn.attention.out_proj),
               "ffn": Part(b.ln_2, down=b.mlp.c_proj)} for b in t.h]
    return ModelMap([StackMap("dec", layers, t.h[0], t.wte, 1.0, t.wpe, t.ln_f)], scale_scores=False)
