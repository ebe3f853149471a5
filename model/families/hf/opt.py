"""OPT (Meta's Open Pre-trained Transformers): a decoder of GPT-2's layout with separate q, k and v projections,
learned positions whose table starts at row 2 (P[i + 2]) and a ReLU feed-forward network. OPT-350m, which projects
its embeddings into and out of a wider stream (word_embed_proj_dim), is refused with a message: its x is not e + p."""
from __future__ import annotations

from ...assets import ModelLoadError
from ...schema import Schema
from ..shapes import decoder_only
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.opt", "OPT"
AUTO = "AutoModelForCausalLM"     # the transformers class that opens it
POSITION_OFFSET = 2               # OPTLearnedPositionalEmbedding's offset


def recognises(config: dict) -> bool:
    return config.get("model_type") == "opt"


def schema_of_config(c: dict) -> Schema:
    d = c.get("hidden_size", 768)
    if c.get("word_embed_proj_dim", d) != d:
        raise ModelLoadError(f"this OPT projects its {c.get('word_embed_proj_dim')}-wide embeddings into a {d}-wide "
                             "stream (word_embed_proj_dim, as OPT-350m does): not supported; other OPT sizes open")
    act = str(c.get("activation_function", "relu"))
    return decoder_only("opt", c.get("num_hidden_layers", 12), d, c.get("num_attention_heads", 12),
                        c.get("ffn_dim") or 4 * d, {}, norm_place="pre" if c.get("do_layer_norm_before", True)
                        else "post", positions="learned", scale_embedding=False,
                        activation="ReLU" if act == "relu" else act.upper(),
                        tied=bool(c.get("tie_word_embeddings", True)), output_bias=False,
                        biases=bool(c.get("enable_bias", True)), position_offset=POSITION_OFFSET)


def max_len(config) -> int:
    return int(config.max_position_embeddings)


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap
    dec = model.model.decoder
    layers = [{"self": Part(l.self_attn_layer_norm, {"q": l.self_attn.q_proj, "k": l.self_attn.k_proj,
                                                     "v": l.self_attn.v_proj}, out=l.self_attn.out_proj),
               "ffn": Part(l.final_layer_norm, down=l.fc2)} for l in dec.layers]
    return ModelMap([StackMap("dec", layers, dec.layers[0], dec.embed_tokens, 1.0, dec.embed_positions,
                              dec.final_layer_norm)])
