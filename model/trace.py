"""The Trace: everything one traced run computed, as plain numpy arrays and token strings.

Keys (one sentence, no batch axis; H heads, Ts source and Tt target positions):
  src.embedding, src.pe, src.x            (Ts, d_model)  scaled token embedding, positional encoding, their sum
  tgt.embedding, tgt.pe, tgt.x            (Tt, d_model)
  enc.{l}.self.*  dec.{l}.self.*  dec.{l}.cross.*   an attention sublayer:
      q (H, Tq, d_k)  k, v (H, Tk, d_k)  scores (H, Tq, Tk) scaled, before masking
      weights (H, Tq, Tk)  mask (Tq, Tk) bool, True = may attend  head_out (H, Tq, d_k)  out (Tq, d_model) = W_O output
      residual (Tq, d_model) = x + sublayer(x)  ln_mean, ln_sigma (Tq,)  gamma, beta (d_model,)  ln_out (Tq, d_model)
      pre-norm models (GPT-2, Llama): ln_* describe the norm before the sublayer and ln_in (Tq, d_model) is its input
  enc.{l}.ffn.*  dec.{l}.ffn.*            hidden (T, d_ff) after ReLU, out (T, d_model), residual, ln_* as above
  enc.out (Ts, d_model)  dec.out (Tt, d_model)  logits, probs (Tt, V_y)
  out_ids (Tt,) int: the vocabulary id of each row's token (out_tokens), when the run recorded it
Positions a model uses besides p (p is then 0), under the keys its schema names:
  rotary (Llama family), Schema.rotary_keys(stack): rotary_theta (r/2,) the frequencies θ_i (r: d_k, or the share
      of it that turns: GPT-NeoX), rotary_cos and rotary_sin (T, r/2) cos and sin of position × θ_i as the model
      multiplied q and k by, rotary_positions (T,); rotary_theta_local (r/2,) where local layers turn by a base of
      their own (Gemma 3: the other tables are the global layers')
  relative (T5), Schema.bias_keys(kind): position_bias (H, Tq, Tk) added to q·kᵀ (scores include it),
      position_buckets (Tq, Tk) the bucket of each key's offset from its query
Decoder row t is the state when predicting target token t+1 (generation step t).
Those are the seed family's names; every Trace carries the Schema of the model that made it (model/schema.py),
and the stack, sublayer and attention-kind names it uses are the ones its schema gives.
"""
from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .schema import Schema

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


class NotInTrace(KeyError, IndexError):
    """A layer or head the trace's model lacks (a KeyError and an IndexError both); str() is one line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def counted(kind: str, name: str, value, n: int) -> int:
    """value, a layer or head counted from 0 of n; NotInTrace otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise NotInTrace(f"{kind}: no {name} {value!r} counted from 0 (it has {name}s 0 to {n - 1})")
    return int(value)


@dataclass
class Trace:
    """Everything a run computed, as numpy arrays keyed as the module's docstring lists, with the tokens of its
    axes, its meta (model, sentence, decoding, heads off) and its model's schema."""
    src_tokens: list[str]            # readable source pieces, ending with </s>
    tgt_tokens: list[str]            # decoder input pieces: <s> y_1 ... y_n
    out_tokens: list[str]            # the token each decoder row chose: y_1 ... y_n </s>
    arrays: dict[str, np.ndarray]
    meta: dict = field(default_factory=dict)
    schema: Schema | None = None     # the shape of the model that made it; None: read off the arrays (old files)

    def __post_init__(self) -> None:
        if self.schema is None:
            from .families.seed_schema import schema_from_arrays
            self.schema = schema_from_arrays(self.arrays, self.meta)

    # --- lookups by short keys ----------------------------------------------------------------
    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def get(self, stack: str, layer: int, sublayer: str, name: str, head: int | None = None) -> np.ndarray:
        """The array "stack.layer.sublayer.name" (see the module's list), or its head's slice."""
        arr = self.arrays[f"{stack}.{layer}.{sublayer}.{name}"]
        return arr if head is None else arr[head]

    def attention(self, kind: str, layer: int, head: int | None = None) -> np.ndarray:
        """Attention weights (H, Tq, Tk), or (Tq, Tk) for one head; layer and head count from 0 (NotInTrace, one
        line, for one the model lacks: "KeyError: 'dec.9.cross.weights'" had been the word, and head -1 was taken
        as the last: QA)."""
        k = self.schema.kind_called(kind)      # (as exported file names spell it too: encoder_self)
        weights = self.get(k.stack, counted(k.name, "layer", layer, self.schema.stack(k.stack).n_layers),
                           k.sublayer, "weights")
        return weights if head is None else weights[counted(k.name, "head", head, len(weights))]

    def mask(self, kind: str, layer: int = 0) -> np.ndarray:
        """(Tq, Tk) bool, True where attention is allowed."""
        k = self.schema.kind_called(kind)
        key = f"{k.stack}.{layer}.{k.sublayer}.mask"
        shape = self.attention(kind, layer).shape[1:]
        return self.arrays[key].astype(bool) if key in self.arrays else np.ones(shape, dtype=bool)

    def tokens(self, which: str) -> list[str]:
        """A token list by the name a schema uses for it: "src" or "tgt"."""
        return self.src_tokens if which == "src" else self.tgt_tokens

    def axis_tokens(self, kind: str) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of an attention kind: rows and columns of its matrices."""
        k = self.schema.kind_called(kind)
        return self.tokens(k.queries), self.tokens(k.keys)

    def n_layers(self, stack: str) -> int:
        """The layers of a stack ("enc", "dec", ...)."""
        return self.schema.stack(stack).n_layers

    @property
    def n_heads(self) -> int:
        """Heads a layer."""
        return self.schema.n_heads

    @property
    def n_steps(self) -> int:
        """Rows of the output layer: generation steps of a decoder, positions of an encoder-only model."""
        return len(self.tokens(self.schema.output_stack.tokens))

    @property
    def _meta(self) -> dict:
        """meta, or {} where a damaged saved trace holds something else there."""
        return self.meta if isinstance(self.meta, dict) else {}

    @property
    def decoding(self) -> str:
        """How the output rows were chosen, as a run's label and a figure's title give it: "greedy", "beam 4",
        "sampled, T = 0.8, seed 3", "given target" (older saved traces: their mode)."""
        meta = self._meta
        mode = str(meta.get("mode", ""))
        return str(meta.get("decoding") or ("given target" if mode == "teacher-forced" else mode))

    def prompt_rows(self) -> int:
        """Output rows whose token a decoder-only model's prompt gave (rows 0 … n − 2 of an n-token prompt predict
        its 2nd … nth token: nothing chose them); 0 for other models."""
        return max(int(self._meta.get("prompt_tokens", 0) or 0) - 1, 0)

    def out_id(self, step: int) -> int | None:
        """The vocabulary id of the token row `step` stands for (out_tokens[step]), when the run recorded it: two
        pieces can read alike ("Ġre" and "re" both show as "re"), so the panels look a token up by id, not by text.
        None for traces without ids (older saved frames, synthetic traces) or an id outside the output layer."""
        ids = self.arrays.get("out_ids")
        if ids is None or not 0 <= step < ids.shape[0]:
            return None
        i, logits = int(ids[step]), self.arrays.get("logits")
        return i if logits is not None and 0 <= i < logits.shape[-1] else None

    @property
    def norm_eps(self) -> float | None:
        """The ε the model's norms add to the variance, where the run recorded it (None: not known)."""
        value = self._meta.get("norm_eps")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    @property
    def never_drawn(self) -> tuple[int, ...]:
        """Ids the run's decoding never draws, whatever their logits (the bundled models' <pad>): 0 in probs."""
        ids = self._meta.get("never_drawn")
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            return ()                         # none said, or a damaged file's (null, 3): every id may be drawn
        return tuple(ids)

    def probs(self, step: int, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
        """Next-token distribution at a generation step, under a temperature; with top_k, the distribution sampling
        draws from: the k largest logits kept (ties at the cut too), the rest 0, renormalised (as decoding.sample
        and transformers' top-k do). The ids never drawn are 0 (QA: <pad>'s 1e-4 put a sampled token a rank low)."""
        z = self.arrays["logits"][step].astype(np.float64) / max(float(temperature), 1e-6)
        never = [i for i in self.never_drawn if 0 <= i < z.size]
        if never and len(never) < z.size:
            z[never] = -np.inf
        if 0 < top_k < z.size:
            z = np.where(z >= np.partition(z, z.size - top_k)[z.size - top_k], z, -np.inf)
        z = np.exp(z - z.max())
        return z / z.sum()

    # --- files --------------------------------------------------------------------------------
    def save_npz(self, path, compressed: bool = True) -> None:
        """Save to path (a str or Path, written whole through a temporary file, under the very name given: numpy
        would add ".npz" to "x", and load_npz("x") then failed) or to an open binary file."""
        header = json.dumps({"src_tokens": self.src_tokens, "tgt_tokens": self.tgt_tokens,
                             "out_tokens": self.out_tokens, "meta": self.meta, "schema": self.schema.to_dict()},
                            ensure_ascii=False)

        def write(target) -> None:
            (np.savez_compressed if compressed else np.savez)(target, __header__=np.array(header), **self.arrays)
        if isinstance(path, (str, Path)):
            from .files import atomic_write
            atomic_write(path, write, suffix=".npz")
        else:
            write(path)

    @staticmethod
    def load_header(path: str | Path) -> dict:
        """A saved trace's header (tokens, meta, schema), its arrays left unread."""
        with np.load(path, allow_pickle=False) as data:
            return json.loads(str(data["__header__"]))

    @classmethod
    def load_npz(cls, path: str | Path) -> "Trace":
        """A trace saved with save_npz; ValueError (one line) for a file that is not one. Never unpickled."""
        not_a_trace = ValueError(f"{path}: not a trace saved by Attention Visualizer (Trace.save_npz)")
        try:
            data = np.load(path, allow_pickle=False)
        except (ValueError, EOFError, zipfile.BadZipFile):   # numpy's own words advised unpickling the file (QA)
            raise not_a_trace from None
        if not hasattr(data, "files"):                      # a lone .npy array
            raise not_a_trace
        try:            # a header of another shape, or arrays of Python objects: no trace either (a review)
            with data:
                header = json.loads(str(data["__header__"]))
                arrays = {k: data[k] for k in data.files if k != "__header__"}
            schema = Schema.from_dict(header["schema"]) if "schema" in header else None
            return cls(header["src_tokens"], header["tgt_tokens"], header["out_tokens"], arrays, header["meta"],
                       schema)
        except (ValueError, TypeError, KeyError, AttributeError):
            raise not_a_trace from None
