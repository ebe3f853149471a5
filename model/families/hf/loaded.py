"""An opened Hugging Face model with the surface the window and the commands use (as the seed family's LoadedModel):
name, path, model, src_tok/tgt_tok (encode, decode, pieces, vocab_size), schema, family, lock, weights_version,
positional (the positions switch), cfg.max_len and cfg.d_model."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...assets import ModelLoadError
from ...schema import Schema
from .folder import check_folder, read_config, transformers


@dataclass(frozen=True)
class Limits:
    """What the commands read off a model's config."""
    max_len: int           # longest sequence its positions cover
    d_model: int
    tgt_vocab_size: int


class HFTokenizer:
    """A transformers tokenizer behind the seed tokenizer's methods; pieces read as the seed's do (word starts bare)."""

    def __init__(self, tok):
        self.tok = tok
        backend = getattr(tok, "backend_tokenizer", None)
        self._decoder = getattr(backend, "decoder", None)
        self._special = set(tok.all_special_tokens)

    @property
    def vocab_size(self) -> int:
        return len(self.tok)

    def encode(self, text: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def piece(self, token: str | None) -> str:
        if token is None:
            return "<unk>"
        if token in self._special or self._decoder is None:
            return token
        try:
            text = self._decoder.decode([token])
        except Exception:          # a decoder that cannot read one piece alone: show it as stored
            text = token
        return text.strip() or ("␣" if text else token)

    def pieces(self, ids) -> list[str]:
        return [self.piece(t) for t in self.tok.convert_ids_to_tokens([int(i) for i in ids])]

    def decode(self, ids) -> str:
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=True).strip()


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
    positional: bool = field(default=True, compare=False)   # positions on (the window's switch; see tracing.run)

    @property
    def src_tok(self) -> HFTokenizer:
        return self._tok

    @property
    def tgt_tok(self) -> HFTokenizer:
        return self._tok

    def __post_init__(self) -> None:
        self._tok = HFTokenizer(self.tokenizer)


def open_model(folder: Path, name: str | None, fam) -> HFModel:
    """Open a folder with a family's module (fam): checks first, then weights (safetensors only, never remote code)."""
    check_folder(folder)
    config = read_config(folder)
    schema = fam.schema_of_config(config)
    tf = transformers()
    import torch
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except ImportError as e:
        raise ModelLoadError(f"{folder}: its tokenizer needs a package that is not installed "
                             f"({str(e).splitlines()[0][:160]})") from None
    except Exception as e:
        raise ModelLoadError(f"{folder}: cannot read its tokenizer ({str(e).splitlines()[0][:160]})") from None
    auto = getattr(tf, fam.auto_class(config) if hasattr(fam, "auto_class") else fam.AUTO)
    try:
        model = auto.from_pretrained(str(folder), local_files_only=True, use_safetensors=True, trust_remote_code=False,
                                     attn_implementation="eager", dtype=torch.float32)
    except Exception as e:     # shape mismatches, damaged tensors, configs transformers cannot read
        raise ModelLoadError(f"{folder}: cannot load the weights ({str(e).strip().splitlines()[0][:200]})") from None
    model.eval()
    c = model.config
    max_len = int(getattr(c, "max_position_embeddings", 0) or getattr(c, "n_positions", 0) or 512)
    limits = Limits(max_len, int(getattr(c, "d_model", 0) or c.hidden_size), len(tokenizer))
    return HFModel(name or str(folder), folder, model, tokenizer, schema, fam.NAME, limits, fam.model_map(model))


def schema_of_folder(folder: Path, fam) -> Schema:
    """A family's schema of a folder from its config.json alone (no weights, no torch)."""
    config = read_config(folder)
    try:
        return fam.schema_of_config(config)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise ModelLoadError(f"{folder / 'config.json'}: not a valid {fam.TITLE} config ({e})") from None


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
