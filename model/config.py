"""One validated config for the encoder-decoder transformer; it is saved beside the weights."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

PE_KINDS = ("sinusoidal", "learned", "none")


def _real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ModelConfig:
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
        for name in ("scale_embedding", "scale_scores", "tie_output"):
            if not isinstance(getattr(self, name), bool):   # JSON "false" would otherwise read as True
                problems.append(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.pe not in PE_KINDS:
            problems.append(f"pe must be one of {', '.join(PE_KINDS)}, got {self.pe!r}")
        if problems:
            raise ValueError("invalid model config: " + "; ".join(problems))

    @property
    def d_k(self) -> int:
        return self.d_model // self.h

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> "ModelConfig":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
