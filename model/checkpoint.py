"""Model folders: weights in safetensors, config JSON and the two tokenizers' JSON. Nothing is unpickled."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from .assets import (ASSETS, CARD, CONFIG, MODELS_DIR, SRC_TOK, TGT_TOK, WEIGHTS,  # noqa: F401 (re-exported)
                     ModelLoadError, bundled_models, required_file)
from .config import ModelConfig
from .files import atomic_write
from .tokenizer import TextTokenizer
from .training_words import word_counts_and_problem
from .transformer import Transformer


@dataclass
class LoadedModel:
    """A model opened with model.load: its torch module, config, tokenizers and schema (load gives it; translate,
    generate_steps and the analysis functions take it)."""
    name: str
    path: Path | None
    model: Transformer
    src_tok: TextTokenizer
    tgt_tok: TextTokenizer
    # held while a thread runs or changes the model (the app translates in a worker while a gradient step may
    # change the weights on the GUI thread): a run never sees half-updated weights
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    weights_version: int = field(default=0, compare=False)   # +1 whenever the weights change after loading
    training_steps: int = field(default=0, compare=False)    # gradient steps on the weights since loading or reset
    family: str = "seed"                                       # the family that opened it (model/families)

    @property
    def cfg(self) -> ModelConfig:
        return self.model.cfg

    @cached_property
    def schema(self):
        """The model's shape as data (model/schema.py)."""
        from .families.seed_schema import schema
        return schema(self.cfg)

    @cached_property
    def training_words(self):
        """How often each word came in the sentences the model learnt from (model/training_words.py), read from
        its folder once; None for a model without that file, or with one that cannot be read."""
        return self._words_read[0]

    @property
    def training_words_problem(self) -> str | None:
        """Why the folder's word counts cannot be read (the note on rare words is then off); None when they can, or
        when there are none."""
        return self._words_read[1]

    @cached_property
    def _words_read(self):
        return word_counts_and_problem(self.path) if self.path is not None else (None, None)


def save_model(folder: str | Path, model: Transformer, src_tok: TextTokenizer, tgt_tok: TextTokenizer,
               half: bool = False, metadata: dict | None = None) -> Path:
    """Save a model folder; half=True stores float16 weights (loaded back as float32)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu", torch.float16 if half else torch.float32).contiguous().clone()
             for k, v in model.state_dict().items()}
    for key in model.cfg.shared_keys:
        state.pop(key, None)
    meta = {"format": "attention-visualizer/1", **{k: str(v) for k, v in (metadata or {}).items()}}
    atomic_write(folder / WEIGHTS, lambda tmp: save_file(state, tmp, metadata=meta))
    atomic_write(folder / CONFIG, lambda tmp: Path(tmp).write_text(model.cfg.to_json() + "\n", encoding="utf-8"))
    atomic_write(folder / SRC_TOK, lambda tmp: src_tok.save(tmp))
    atomic_write(folder / TGT_TOK, lambda tmp: tgt_tok.save(tmp))
    return folder


def step_counts(folder: str | Path) -> tuple[int, int]:
    """What a model folder's metadata says of its training: (where the learning-rate schedule stands, how many
    updates its weights had over all runs). A run started with --init-steps 0 restarts the schedule but not the
    count. A folder from before the count was kept gives its schedule position for both; no metadata, (0, 0)."""
    try:
        with safe_open(str(Path(folder) / WEIGHTS), framework="pt") as f:
            meta = f.metadata() or {}
    except (OSError, SafetensorError):
        return 0, 0
    try:
        schedule = int(meta.get("steps", 0))
        return schedule, int(meta.get("updates", schedule))
    except ValueError:
        return 0, 0


def layers_held(names, stack: str) -> int:
    """How many layers of a stack ("encoder") a weights file's tensor names hold: 1 + the largest i of "stack.i.…"."""
    indices = [int(parts[1]) for parts in (k.split(".", 2) for k in names)
               if len(parts) == 3 and parts[0] == stack and parts[1].isdigit()]
    return max(indices) + 1 if indices else 0


def load_model(folder: str | Path, name: str | None = None) -> LoadedModel:
    """Load a model folder, checking every tensor's name and shape; raises ModelLoadError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelLoadError(f"{folder}: not a model folder (it does not exist or is not a directory)")
    cfg_path = required_file(folder, CONFIG)
    try:
        cfg = ModelConfig.from_dict(json.loads(cfg_path.read_text(encoding="utf-8")))
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{cfg_path}: {e}".splitlines()[0]) from None
    toks = []
    for tok_name, size in ((SRC_TOK, cfg.src_vocab_size), (TGT_TOK, cfg.tgt_vocab_size)):
        path = required_file(folder, tok_name)
        try:
            tok = TextTokenizer.load(path)
        except Exception as e:  # the tokenizers library raises its own exception types
            raise ModelLoadError(f"{path}: not a valid tokenizer file ({str(e).splitlines()[0][:120]})") from None
        if tok.vocab_size != size:
            raise ModelLoadError(f"{path}: vocabulary has {tok.vocab_size} entries, config says {size}")
        toks.append(tok)
    w_path = required_file(folder, WEIGHTS)
    try:
        state = load_file(str(w_path))
    except (SafetensorError, OSError, ValueError) as e:
        raise ModelLoadError(f"{w_path}: not a readable safetensors file ({str(e).splitlines()[0][:120]})") from None
    for stack, key, held in (("encoder", "N_enc", layers_held(state, "encoder")),
                             ("decoder", "N_dec", layers_held(state, "decoder"))):
        if getattr(cfg, key) > held:        # before any layer is built: a config of 100,000,000 layers built them
            raise ModelLoadError(           # all, even on the meta device, and took 23 GB (QA)
                f"{cfg_path}: {key} is {getattr(cfg, key):,}, but {w_path.name} holds {held} {stack} layers")
    try:             # the shapes first, with no memory behind them: a config of absurd sizes (d_model 1048576)
        with torch.device("meta"):          # asked for 33 GB and read "unexpected RuntimeError" (QA)
            skeleton = Transformer(cfg)
    except (RuntimeError, ValueError) as e:
        raise ModelLoadError(f"{cfg_path}: cannot build a model of these sizes ({str(e).splitlines()[0][:120]})") \
            from None
    expected = {k: v for k, v in skeleton.state_dict().items() if k not in cfg.shared_keys}
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing:
        raise ModelLoadError(f"{w_path}: missing tensors: {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
    if unexpected:
        raise ModelLoadError(f"{w_path}: unexpected tensors: {', '.join(unexpected[:5])}{' …' if len(unexpected) > 5 else ''}")
    weights = {}
    for k, v in expected.items():
        if tuple(state[k].shape) != tuple(v.shape):
            raise ModelLoadError(f"{w_path}: tensor {k} has shape {tuple(state[k].shape)}, config needs {tuple(v.shape)}")
        weights[k] = state[k].float()
        if not torch.isfinite(weights[k]).all():
            raise ModelLoadError(f"{w_path}: tensor {k} holds NaN or infinite values")
    try:
        model = Transformer(cfg)
    except (RuntimeError, MemoryError) as e:
        raise ModelLoadError(f"{cfg_path}: this machine has not the memory for a model of these sizes "
                             f"({str(e).splitlines()[0][:120]})") from None
    model.load_state_dict(weights, strict=not cfg.shared_keys)
    model.eval()
    return LoadedModel(name or folder.name, folder, model, toks[0], toks[1])

