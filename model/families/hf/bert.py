"""BERT: encoder-only, post-norm LayerNorm, learned positions, GELU feed-forward; masked-token predictions in the
output panel when the folder has the masked-LM head (BertForMaskedLM, BertForPreTraining)."""
from __future__ import annotations

from ...schema import Schema
from ..shapes import encoder_only
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.bert", "BERT"


def recognises(config: dict) -> bool:
    return config.get("model_type") == "bert"


def masked_lm(config: dict) -> bool:
    return any("MaskedLM" in a or "PreTraining" in a for a in config.get("architectures") or [])


def schema_of_config(c: dict, family: str = "bert", special: dict | None = None, position_offset: int = 0) -> Schema:
    """BERT's shape, and that of the families built as BERT is (RoBERTa: its own name, special tokens and the first
    row of its position table). x = LayerNorm(E[token] + P[i] + S[0]): the segment (token type) 0's vector is added
    and the sum normalised before the first layer."""
    return encoder_only(family, c.get("num_hidden_layers", 12), c.get("hidden_size", 768),
                        c.get("num_attention_heads", 12), c.get("intermediate_size", 3072),
                        special or {"pad": "[PAD]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
                        masked_lm=masked_lm(c), positions="learned", scale_embedding=False,
                        activation=str(c.get("hidden_act", "gelu")).upper(), embed_norm=True, segments=True,
                        position_offset=position_offset)


def auto_class(config: dict) -> str:
    return "BertForMaskedLM" if masked_lm(config) else "BertModel"


schema_of_folder, open = interface(__name__)


def model_map(model, base: str = "bert"):
    """Where BERT's parts sit; base: the attribute of a model with a head that holds the BERT-built model."""
    from .tracing import ModelMap, Part, StackMap
    bert = getattr(model, base, model)
    emb, layers = bert.embeddings, bert.encoder.layer
    parts = [{"self": Part(l.attention.output.LayerNorm, {"q": l.attention.self.query, "k": l.attention.self.key,
                                                          "v": l.attention.self.value}, scale=l.attention.self.scaling,
                                   out=l.attention.output.dense),
              "ffn": Part(l.output.LayerNorm, down=l.output.dense)} for l in layers]
    return ModelMap([StackMap("enc", parts, layers[0], emb.word_embeddings, 1.0, emb.position_embeddings)])
