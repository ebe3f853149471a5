"""DistilBERT: BERT with half the layers and its own names (q_lin, sa_layer_norm, lin2, ...): encoder-only,
post-norm LayerNorm, learned positions (or the paper's sinusoids, with sinusoidal_pos_embds), GELU feed-forward;
masked-token predictions when the folder has the masked-LM head (DistilBertForMaskedLM)."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import encoder_only
from . import bert
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.distilbert", "DistilBERT"


def recognises(config: dict) -> bool:
    return config.get("model_type") == "distilbert"


def schema_of_config(c: dict) -> Schema:
    return encoder_only("distilbert", c.get("n_layers", 6), c.get("dim", 768), c.get("n_heads", 12),
                        c.get("hidden_dim", 3072), {"pad": "[PAD]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
                        masked_lm=bert.masked_lm(c),
                        positions="sinusoidal" if c.get("sinusoidal_pos_embds") else "learned",
                        scale_embedding=False, activation=str(c.get("activation", "gelu")).upper(),
                        embed_norm=True)                   # x = LayerNorm(E[token] + P[i]): no segments


def auto_class(config: dict) -> str:
    return "DistilBertForMaskedLM" if bert.masked_lm(config) else "DistilBertModel"


schema_of_folder, open = interface(__name__)


def model_map(model):
    from .tracing import ModelMap, Part, StackMap
    base = getattr(model, "distilbert", model)
    emb, layers = base.embeddings, base.transformer.layer
    parts = [{"self": Part(l.sa_layer_norm, {"q": l.attention.q_lin, "k": l.attention.k_lin, "v": l.attention.v_lin},
                           scale=l.attention.scaling, out=l.attention.out_lin),
              "ffn": Part(l.output_layer_norm, down=l.ffn.lin2)} for l in layers]
    return ModelMap([StackMap("enc", parts, layers[0], emb.word_embeddings, 1.0, emb.position_embeddings)])
