"""An opened Hugging Face model with the surface the window and the commands use (as the seed family's LoadedModel):
name, path, model, src_tok/tgt_tok (encode, decode, pieces, vocab_size: the two sides of its tokenizer, tokenizer.py),
schema, family, lock, weights_version, positional (the positions switch), cfg.max_len and cfg.d_model."""
from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...assets import ModelLoadError, reason
from ...schema import ENCODER_DECODER, Schema
from .folder import TARGET_TOKENIZER, auto_class_name, check_folder, read_config, transformers
from .tokenizer import HFTokenizer, open_tokenizer


CAN_ABLATE = True     # every Hugging Face family can switch heads off (tracing.HeadsOff)


@dataclass(frozen=True)
class Limits:
    """What the commands read off a model's config."""
    max_len: int           # longest sequence its positions cover
    d_model: int
    tgt_vocab_size: int
    cut_by: str = ""       # what sets max_len when not the positions ("its local attention window, …")


@dataclass
class HFModel:
    name: str
    path: Path
    model: Any                    # the transformers model, in eval mode, eager attention
    tokenizer: Any                # the transformers tokenizer
    schema: Schema
    family: str                   # the family module's NAME ("hf.gpt2")
    cfg: Limits
    map: Any = None               # where the family's parts sit (tracing.ModelMap)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    weights_version: int = field(default=0, compare=False)
    target_tokenizer: Any = None  # the target side's, when the folder has its own (TARGET_TOKENIZER); else tokenizer
    previews: bool = False        # large enough that a run shows its input's attention before generating
    src_tok: HFTokenizer = field(default=None, repr=False, compare=False)    # the encoder's side (or the only one)
    tgt_tok: HFTokenizer = field(default=None, repr=False, compare=False)    # the side the output layer names
    positional: bool = field(default=True, compare=False)   # positions on (the window's switch; see tracing.run)

    PREVIEW_PARAMETERS = 40_000_000   # about 0.3 s a pass over 100 tokens on one core: worth a first look

    def __post_init__(self) -> None:
        if self.target_tokenizer is None:
            self.target_tokenizer = self.tokenizer


def open_model(folder: Path, name: str | None, fam) -> HFModel:
    """Open a folder with a family's module (fam): checks first, then weights (safetensors only, never remote code)."""
    config = read_config(folder)
    schema = schema_of_folder(folder, fam)       # a config value of the wrong type, named (the commands came here)
    auto_name = auto_class_name(fam, config)
    check_folder(folder, auto_name, name or str(folder.resolve()))
    tf = transformers()
    import torch
    try:                  # transformers' own reading of the config first: its errors came out as the tokenizer's
        tf.AutoConfig.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except Exception as e:
        raise ModelLoadError(f"{folder / 'config.json'}: not a valid {fam.TITLE} config for transformers "
                             f"({reason(e)})") from None
    if (folder / "generation_config.json").is_file():      # its errors read as the weights' (QA)
        try:
            tf.GenerationConfig.from_pretrained(str(folder), local_files_only=True)
        except Exception as e:
            raise ModelLoadError(f"{folder / 'generation_config.json'}: not valid for transformers "
                                 f"({reason(e)})") from None
    tokenizer = open_tokenizer(folder)
    schema = with_tokenizer_specials(schema, tokenizer)
    # a folder with two vocabularies keeps the target side's tokenizer in a folder of its own (as `convert` writes)
    target = open_tokenizer(folder / TARGET_TOKENIZER) if (folder / TARGET_TOKENIZER).is_dir() else None
    auto = getattr(tf, auto_name)
    try:
        model, info = auto.from_pretrained(str(folder), local_files_only=True, use_safetensors=True,
                                           trust_remote_code=False, attn_implementation="eager", dtype=torch.float32,
                                           output_loading_info=True)
    except Exception as e:     # shape mismatches, damaged tensors, configs transformers cannot read
        first = reason(e)
        if "ignore_mismatched_sizes" in first:     # its words point at a report it printed to nobody
            first = "the tensors' shapes do not match config.json's sizes (vocab_size, positions, widths)"
        raise ModelLoadError(f"{folder}: cannot load the weights ({first})") from None
    check_weights_complete(folder, model, info, tokenizer)
    model.eval()
    c = model.config
    max_len = fam.max_len(c) if hasattr(fam, "max_len") else \
        int(getattr(c, "max_position_embeddings", 0) or getattr(c, "n_positions", 0) or 512)
    head = model.get_output_embeddings()
    src = HFTokenizer(tokenizer)
    tgt = HFTokenizer(target or tokenizer, target=schema.layout == ENCODER_DECODER,
                      size=int(head.weight.shape[0]) if head is not None else None)
    limits = Limits(max_len, int(getattr(c, "d_model", 0) or c.hidden_size), tgt.vocab_size,
                    fam.cut_by(c) if hasattr(fam, "cut_by") else "")
    previews = sum(p.numel() for p in model.parameters()) >= HFModel.PREVIEW_PARAMETERS
    return HFModel(name or str(folder), folder, model, tokenizer, schema, fam.NAME, limits, fam.model_map(model),
                   target_tokenizer=target, previews=previews, src_tok=src, tgt_tok=tgt)


UNUSED_PARTS = ("pooler.",)     # tensors the app never runs: a checkpoint without them is complete for it


def check_weights_complete(folder: Path, model, info: dict, tokenizer) -> None:
    """ModelLoadError when the weights file lacks tensors the model runs (transformers would fill them at random, and
    every figure would be of an untrained model), or when the tokenizer's ids do not fit the embedding table."""
    missing = [k for k in info.get("missing_keys") or () if not any(part in k for part in UNUSED_PARTS)]
    if missing:
        raise ModelLoadError(f"{folder}: its weights lack {len(missing)} of the model's tensors ({missing[0]}"
                             f"{', …' if len(missing) > 1 else ''}); they would be random. Is the weights file of "
                             f"another model, or cut short?")
    table = model.get_input_embeddings().weight.shape[0]
    tokenizer_size = tokenizer.vocab_size      # its base vocabulary: added special tokens may lie beyond
    if tokenizer_size > table:
        raise ModelLoadError(f"{folder}: the tokenizer has {tokenizer_size:,} tokens but the model's embedding table "
                             f"only {table:,} rows: they are not a pair")


# the sizes a config may give, by the names the families use: each a whole number, 1 or more (or null where the
# family then takes a default, as GPT-2's n_inner). A string or a negative size read as Python's words or as
# transformers' tensor errors ("'<' not supported…", "negative dimension -4")
SIZE_KEYS = ("n_layer", "n_layers", "num_hidden_layers", "num_layers", "num_decoder_layers", "encoder_layers",
             "decoder_layers", "n_head", "n_heads", "num_attention_heads", "num_heads", "num_key_value_heads",
             "encoder_attention_heads", "decoder_attention_heads", "n_embd", "hidden_size", "d_model", "dim",
             "hidden_dim", "n_inner", "intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim",
             "d_kv", "head_dim", "vocab_size", "n_positions", "max_position_embeddings")
HEAD_SIZE_KEYS = ("d_kv", "head_dim")      # a head's width given apart from d_model / heads
# sizes whose null means "the family's default" (GPT-2's n_inner: 4 · n_embd; Llama's head_dim: d_model / heads)
NULLABLE = ("n_inner", "head_dim", "num_key_value_heads", "num_decoder_layers", "intermediate_size")
WIDTH_KEYS = ("n_embd", "hidden_size", "d_model", "dim")
HEAD_KEYS = ("n_head", "n_heads", "num_attention_heads", "num_heads", "encoder_attention_heads")


def check_sizes(folder: Path, config: dict) -> None:
    """ModelLoadError naming the first size in config.json that is not a whole number of 1 or more (null where the
    family has no default for it), or a head count that does not split the width."""
    for key in SIZE_KEYS:
        if key not in config or (config[key] is None and key in NULLABLE):
            continue
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelLoadError(f"{folder / 'config.json'}: {key} is {json.dumps(value)}; a size must be a whole "
                                 f"number, 1 or more")
    width = next((k for k in WIDTH_KEYS if k in config), None)
    heads = next((k for k in HEAD_KEYS if k in config), None)
    if width and heads and config[width] % config[heads] and not any(config.get(k) for k in HEAD_SIZE_KEYS):
        raise ModelLoadError(f"{folder / 'config.json'}: {width} {config[width]} cannot be split among "
                             f"{heads} {config[heads]} heads (each head takes {width} / heads of it: a whole number)")


def check_heads(folder: Path, config: dict, schema: Schema) -> None:
    """ModelLoadError when the heads cannot split the model's width: each head takes d_model / heads of it."""
    if schema.n_heads * schema.d_k != schema.d_model and not any(config.get(k) for k in HEAD_SIZE_KEYS):
        given = "" if any(k in config for k in HEAD_KEYS) else \
            f" (config.json gives no head count, and {schema.n_heads} is the family's default)"
        raise ModelLoadError(f"{folder / 'config.json'}: a width of {schema.d_model} cannot be split among "
                             f"{schema.n_heads} heads{given} (each head takes d_model / heads of it: a whole number)")


def schema_of_folder(folder: Path, fam) -> Schema:
    """A family's schema of a folder from its config.json alone (no weights, no torch)."""
    config = read_config(folder)
    check_sizes(folder, config)
    try:
        schema = fam.schema_of_config(config)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise ModelLoadError(f"{folder / 'config.json'}: not a valid {fam.TITLE} config ({e})") from None
    check_heads(folder, config, schema)
    return with_specials(schema, tokenizer_specials(folder))


def with_specials(schema: Schema, named: dict) -> Schema:
    """The schema with a tokenizer's special tokens by role ({"unk": "[UNK]", ...}) in place of the family's
    defaults: the roles the schema has, and the unknown token."""
    special = {**schema.special, **{role: token for role, token in named.items() if isinstance(token, str) and token
                                    and (role in schema.special or role == "unk")}}
    return schema if special == schema.special else dataclasses.replace(schema, special=special)


ROLES = ("pad", "bos", "eos", "unk", "cls", "sep", "mask")


def with_tokenizer_specials(schema: Schema, tokenizer) -> Schema:
    """The schema with the opened tokenizer's own special tokens: a folder whose tokenizer_config.json names none
    (distilbert-base-uncased ships {"do_lower_case": true}) kept the family's defaults, and an "[UNK]" went
    without the note on unknown pieces, which looked for "<unk>" (QA)."""
    named = getattr(tokenizer, "special_tokens_map", None) or {}
    return with_specials(schema, {role: named.get(f"{role}_token") for role in ROLES})


def tokenizer_specials(folder: Path) -> dict[str, str]:
    """The tokenizer's own special tokens by role ({"unk": "[UNK]", "mask": "<mask>", ...}) from its
    tokenizer_config.json (else special_tokens_map.json), without opening it. The family's defaults were taken: the
    note on unknown pieces looked for "<unk>" where BERT's is "[UNK]", and a BERT whose mask is "<mask>" and end
    "</s>" got "the text has no [MASK]" and no share on its end token (QA)."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        found = {}
        for role in ROLES:
            token = data.get(f"{role}_token")
            if isinstance(token, dict):          # an AddedToken written out: {"content": "[UNK]", ...}
                token = token.get("content")
            if isinstance(token, str) and token:
                found[role] = token
        if found:
            return found
    return {}


def interface(module_name: str):
    """A family module's schema_of_folder(folder) and open(folder, name), from its schema_of_config and model_map."""
    import sys

    def schema_of(folder: Path) -> Schema:
        return schema_of_folder(folder, sys.modules[module_name])

    def open_folder(folder: Path, name: str | None = None) -> HFModel:
        return open_model(folder, name, sys.modules[module_name])
    return schema_of, open_folder


def translate(lm: HFModel, text: str, *args, **kwargs):
    from .tracing import run
    return run(lm, lm.map, text, *args, **kwargs)
