"""Validated settings: the model's shape (saved beside the weights), the special token ids, and how to decode."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

PE_KINDS = ("sinusoidal", "learned", "none")
PAD, UNK, BOS, EOS = 0, 1, 2, 3          # the special token ids every tokenizer and model agree on
METHODS = ("greedy", "beam", "sample")   # decoding methods


def _real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ModelConfig:
    """The shape and options of a seed-family model (config.json in its folder): vocabularies, d_model, heads,
    layers, positions, LayerNorm and tying."""
    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 256
    h: int = 4               # heads per attention sublayer
    d_ff: int = 1024
    N_enc: int = 3           # encoder layers
    N_dec: int = 3           # decoder layers
    max_len: int = 256       # longest sequence the positional encoding covers
    dropout: float = 0.1
    pe: str = "sinusoidal"   # sinusoidal | learned (a table stored with the weights) | none
    scale_embedding: bool = True   # multiply token embeddings by sqrt(d_model)
    scale_scores: bool = True      # divide QK^T by sqrt(d_k)
    tie_output: bool = False       # output projection shares the target embedding matrix
    share_embeddings: bool = False  # one vocabulary and one embedding matrix for source, target and output
    ln_eps: float = 1e-5

    def __post_init__(self) -> None:
        problems = []
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "h", "d_ff", "N_enc", "N_dec", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"{name} must be a positive integer, got {value!r}")
        if isinstance(self.d_model, int) and isinstance(self.h, int) and self.h > 0 and self.d_model % self.h:
            problems.append(f"d_model ({self.d_model}) must be divisible by h ({self.h})")
        if not _real(self.dropout) or not 0.0 <= self.dropout < 1.0:
            problems.append(f"dropout must be a number in [0, 1), got {self.dropout!r}")
        if not _real(self.ln_eps) or not 0.0 < self.ln_eps < 1.0:
            problems.append(f"ln_eps must be a number in (0, 1), got {self.ln_eps!r}")
        for name in ("scale_embedding", "scale_scores", "tie_output", "share_embeddings"):
            if not isinstance(getattr(self, name), bool):   # JSON "false" would otherwise read as True
                problems.append(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.share_embeddings is True and not (self.tie_output is True
                                                  and self.src_vocab_size == self.tgt_vocab_size):
            problems.append("share_embeddings needs tie_output and equal source and target vocabulary sizes")
        if self.pe not in PE_KINDS:
            problems.append(f"pe must be one of {', '.join(PE_KINDS)}, got {self.pe!r}")
        if problems:
            raise ValueError("invalid model config: " + "; ".join(problems))

    @property
    def shared_keys(self) -> set[str]:
        """State-dict entries that are another entry's tensor, so are neither stored nor loaded."""
        keys = {"generator.weight"} if self.tie_output else set()
        return keys | {"tgt_embed.weight"} if self.share_embeddings else keys

    @property
    def d_k(self) -> int:
        return self.d_model // self.h

    def to_json(self) -> str:
        """The config as config.json holds it."""
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        """A config from config.json's fields (unknown ones left out); ValueError for values out of range."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> "ModelConfig":
        """The config in a config.json file."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


@dataclass(frozen=True)
class DecodingSettings:
    """How a run writes its output: greedy, beam search (beam, length_penalty) or sampling (temperature, top_k,
    seed), at most max_new tokens (None: the model's length). ValueError for values out of range."""
    method: str = "greedy"       # greedy | beam | sample
    beam: int = 4                # beam width, for method="beam"
    temperature: float = 1.0     # for method="sample" (and the output panel's distribution)
    top_k: int = 0               # 0 = no top-k cut, for method="sample"
    seed: int = 0                # makes sampling repeatable
    max_new: int | None = None   # default: grows with the source length, bounded by the model

    def __post_init__(self) -> None:
        def whole(v) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)
        if not (whole(self.beam) and whole(self.top_k) and whole(self.seed)
                and (self.max_new is None or whole(self.max_new))
                and isinstance(self.temperature, (int, float)) and not isinstance(self.temperature, bool)):
            raise ValueError("beam, top_k, seed and max_new must be whole numbers and temperature a number")
        if self.method not in METHODS:
            raise ValueError(f"decoding method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.beam < 1 or self.top_k < 0 or not self.temperature > 0:
            raise ValueError("beam must be >= 1, top_k >= 0 and temperature > 0")
        if self.max_new is not None and self.max_new < 1:      # (0 or -5 gave '' with no word: QA)
            raise ValueError(f"max_new must be >= 1 (the most tokens to write), or None for the model's length; "
                             f"got {self.max_new}")

    def describe(self) -> str:
        """The search in a few words, as a run's label and a figure's title give it: "greedy", "beam 4",
        "sampled, T = 0.8, top-k 10, seed 3"."""
        if self.method == "beam":
            return f"beam {self.beam}"
        if self.method == "sample":
            top_k = f", top-k {self.top_k}" if self.top_k else ""
            return f"sampled, T = {self.temperature:g}{top_k}, seed {self.seed}"
        return self.method
