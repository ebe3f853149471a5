"""The Trace: everything one traced run computed, as plain numpy arrays and token strings.

Keys (one sentence, no batch axis; H heads, Ts source and Tt target positions):
  src.embedding, src.pe, src.x            (Ts, d_model)  scaled token embedding, positional encoding, their sum
  tgt.embedding, tgt.pe, tgt.x            (Tt, d_model)
  enc.{l}.self.*  dec.{l}.self.*  dec.{l}.cross.*   an attention sublayer:
      q (H, Tq, d_k)  k, v (H, Tk, d_k)  scores (H, Tq, Tk) scaled, before masking
      weights (H, Tq, Tk)  mask (Tq, Tk) bool, True = may attend  head_out (H, Tq, d_k)  out (Tq, d_model) = W_O output
      residual (Tq, d_model) = x + sublayer(x)  ln_mean, ln_sigma (Tq,)  gamma, beta (d_model,)  ln_out (Tq, d_model)
  enc.{l}.ffn.*  dec.{l}.ffn.*            hidden (T, d_ff) after ReLU, out (T, d_model), residual, ln_* as above
  enc.out (Ts, d_model)  dec.out (Tt, d_model)  logits, probs (Tt, V_y)
Decoder row t is the state when predicting target token t+1 (generation step t).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# attention kind -> (stack, sublayer)
ATTENTION_KINDS = {"enc_self": ("enc", "self"), "dec_self": ("dec", "self"), "cross": ("dec", "cross")}
KIND_TITLES = {"enc_self": "Encoder self-attention", "dec_self": "Decoder masked self-attention",
               "cross": "Cross-attention"}
SUBLAYERS = {"enc": ("self", "ffn"), "dec": ("self", "cross", "ffn")}


def flatten_record(record: dict, prefix: str = "") -> dict[str, np.ndarray]:
    """Nested dict of tensors (batch of one) -> flat {key: numpy array without the batch axis}."""
    out: dict[str, np.ndarray] = {}
    for name, value in record.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            out.update(flatten_record(value, key + "."))
            continue
        arr = value.detach().cpu().numpy()
        if name in ("gamma", "beta", "pe"):
            arr = arr.copy()          # views of parameters: a Trace must not change when the weights do
        if name not in ("gamma", "beta"):
            arr = arr[0]
        out[key] = arr
    return out


@dataclass
class Trace:
    src_tokens: list[str]            # readable source pieces, ending with </s>
    tgt_tokens: list[str]            # decoder input pieces: <s> y_1 ... y_n
    out_tokens: list[str]            # the token each decoder row chose: y_1 ... y_n </s>
    arrays: dict[str, np.ndarray]
    meta: dict = field(default_factory=dict)
    _layers: dict = field(default_factory=dict, init=False, repr=False, compare=False)   # n_layers, computed once

    # --- lookups by short keys ----------------------------------------------------------------
    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def get(self, stack: str, layer: int, sublayer: str, name: str, head: int | None = None) -> np.ndarray:
        arr = self.arrays[f"{stack}.{layer}.{sublayer}.{name}"]
        return arr if head is None else arr[head]

    def attention(self, kind: str, layer: int, head: int | None = None) -> np.ndarray:
        """Attention weights (H, Tq, Tk), or (Tq, Tk) for one head."""
        stack, sub = ATTENTION_KINDS[kind]
        return self.get(stack, layer, sub, "weights", head)

    def mask(self, kind: str, layer: int = 0) -> np.ndarray:
        """(Tq, Tk) bool, True where attention is allowed."""
        stack, sub = ATTENTION_KINDS[kind]
        key = f"{stack}.{layer}.{sub}.mask"
        shape = self.attention(kind, layer).shape[1:]
        return self.arrays[key].astype(bool) if key in self.arrays else np.ones(shape, dtype=bool)

    def axis_tokens(self, kind: str) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of an attention kind: rows and columns of its matrices."""
        if kind == "enc_self":
            return self.src_tokens, self.src_tokens
        if kind == "dec_self":
            return self.tgt_tokens, self.tgt_tokens
        return self.tgt_tokens, self.src_tokens

    def n_layers(self, stack: str) -> int:
        if stack not in self._layers:
            self._layers[stack] = len({k.split(".")[1] for k in self.arrays
                                       if k.startswith(stack + ".") and k.split(".")[1].isdigit()})
        return self._layers[stack]

    @property
    def n_heads(self) -> int:
        return self.attention("enc_self", 0).shape[0]

    @property
    def n_steps(self) -> int:
        return len(self.tgt_tokens)

    def probs(self, step: int, temperature: float = 1.0) -> np.ndarray:
        """Next-token distribution at a generation step, under a temperature."""
        z = self.arrays["logits"][step].astype(np.float64) / max(float(temperature), 1e-6)
        z = np.exp(z - z.max())
        return z / z.sum()

    # --- files --------------------------------------------------------------------------------
    def save_npz(self, path: str | Path) -> None:
        header = json.dumps({"src_tokens": self.src_tokens, "tgt_tokens": self.tgt_tokens,
                             "out_tokens": self.out_tokens, "meta": self.meta}, ensure_ascii=False)
        np.savez_compressed(path, __header__=np.array(header), **self.arrays)

    @classmethod
    def load_npz(cls, path: str | Path) -> "Trace":
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["__header__"]))
            arrays = {k: data[k] for k in data.files if k != "__header__"}
        return cls(header["src_tokens"], header["tgt_tokens"], header["out_tokens"], arrays, header["meta"])
