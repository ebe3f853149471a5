"""RoBERTa and the models built as it is (XLM-RoBERTa, CamemBERT): BERT's layers under another name, with <s>, </s>
and <mask> for [CLS], [SEP] and [MASK], and positions counted from the pad token's id + 1, so that a model with
514 position rows reads 512 tokens."""
from __future__ import annotations

from ...schema import Schema
from . import bert
from .loaded import CAN_ABLATE, interface, translate  # noqa: F401 (the family interface)

NAME, TITLE = "hf.roberta", "RoBERTa/XLM-RoBERTa/CamemBERT"
MODEL_TYPES = ("roberta", "xlm-roberta", "camembert")
SPECIAL = {"pad": "<pad>", "cls": "<s>", "sep": "</s>", "mask": "<mask>"}


def recognises(config: dict) -> bool:
    return config.get("model_type") in MODEL_TYPES


def schema_of_config(c: dict) -> Schema:
    return bert.schema_of_config(c, c.get("model_type", "roberta"), SPECIAL, first_row(c.get("pad_token_id", 1)))


def first_row(pad_token_id) -> int:
    """The position table's row of place 0: the one after the pad token's id (2 for RoBERTa's pad id 1)."""
    return int(pad_token_id if pad_token_id is not None else 1) + 1


def auto_class(config: dict) -> str:
    return "AutoModelForMaskedLM" if bert.masked_lm(config) else "AutoModel"


def max_len(config) -> int:
    """The tokens its positions cover: position ids start after the pad token's id."""
    return int(config.max_position_embeddings) - first_row(config.pad_token_id)


schema_of_folder, open = interface(__name__)


def model_map(model):
    return bert.model_map(model, "roberta")
