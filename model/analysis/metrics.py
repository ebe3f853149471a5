"""Per-head metrics of a Trace: one row per attention kind × layer × head, from the attention weights alone.

    entropy_bits     mean over query rows of each row's entropy in bits (masked cells left out)
    mean_distance    mean over query rows of Σ_j α_ij |i − j|        (NaN for cross-attention)
    max_weight       the largest weight of the head
    first_token      mean over rows of the weight on key position 0
    end_token        … on the end token(s) (the schema's eos / sep token); NaN where the keys have none (a decoder
                     reads no </s>)
    punctuation      … on keys that are punctuation only (word-piece markers such as ▁ or Ġ ignored)
    diagonal         … on key position i (the query's own position)     (NaN for cross-attention)
    previous_token   … on key position i − 1, over the rows that have one (not the first row) (NaN for cross)

A "share" is a mean over query rows of the weight a row gives those keys; every row sums to 1, so it is the
share of all the head's weight. Rows with one key to attend to or none are left out, of the max too: a causal
head's first row puts all its weight on itself whatever the head does. Every metric is NaN where no row is left.
Cross-attention's queries and keys are positions in two different sentences: the metrics that compare i with j
(distance, diagonal, previous) mean nothing there and are NaN (empty in the CSV, "—" in the table).
Layers and heads are 1-based in the rows (as users read them); numpy only.
"""
from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import astuple, dataclass, fields

import numpy as np

COLUMNS = ("kind", "layer", "head", "entropy_bits", "mean_distance", "max_weight", "first_token", "end_token",
           "punctuation", "diagonal", "previous_token")
MARKERS = "▁Ġ#Ċ@"        # word-piece markers of SentencePiece, GPT-2 byte BPE and WordPiece


@dataclass(frozen=True)
class HeadMetrics:
    kind: str            # the schema's short name: "enc_self"
    layer: int           # 1-based
    head: int            # 1-based
    entropy_bits: float
    mean_distance: float
    max_weight: float
    first_token: float
    end_token: float
    punctuation: float
    diagonal: float
    previous_token: float

    @property
    def key(self) -> tuple[str, int, int]:
        """(kind, layer, head), 0-based: the ViewState's numbering."""
        return self.kind, self.layer - 1, self.head - 1


def is_punctuation(token: str) -> bool:
    """A token made of punctuation alone, once word-piece markers are stripped ("," "▁." "Ġ!" but not "</s>")."""
    text = token.strip(MARKERS).strip()
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text)


def end_tokens(schema) -> set[str]:
    """The token texts that end a sequence in this model (its eos / sep tokens)."""
    return {schema.special[r] for r in ("eos", "sep") if schema.special.get(r)}


def head_metrics(weights: np.ndarray, mask: np.ndarray, keys: list[str], ends: set[str],
                 positional: bool = True) -> np.ndarray:
    """(H, 8) metrics of one kind and layer: weights (H, Tq, Tk), mask (Tq, Tk) True = may attend, keys the Tk
    key tokens. Columns in COLUMNS' order from entropy_bits on. positional: queries and keys are positions of one
    sequence (False for cross-attention: distance, diagonal and previous are NaN)."""
    w = np.asarray(weights, dtype=np.float64)
    m = np.asarray(mask, dtype=bool)
    H, Tq, Tk = w.shape
    rows = m.sum(1) > 1                                           # (Tq,) rows with a choice of keys
    w = np.where(m, w, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(w > 0, w * np.log2(np.where(w > 0, w, 1.0)), 0.0)
    i, j = np.arange(Tq)[:, None], np.arange(Tk)[None, :]
    cols = {
        "first": j[0] == 0,
        # the first key starts its sequence, whatever its text: BART's decoder starts with </s>, and GPT-2's
        # <|endoftext|> starts a text too (end_token read first_token again for a BART's decoder: QA)
        "end": np.array([t in ends and j > 0 for j, t in enumerate(keys)], dtype=bool),
        "punct": np.array([is_punctuation(t) for t in keys], dtype=bool),
    }

    def row_mean(per_row: np.ndarray) -> np.ndarray:             # (H, Tq) -> (H,), over rows with a choice
        return per_row[:, rows].mean(1) if rows.any() else np.full(H, np.nan)

    def positional_mean(per_row: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
        if not positional:
            return np.full(H, np.nan)
        if where is None:
            return row_mean(per_row)
        chosen = rows & where
        return per_row[:, chosen].mean(1) if chosen.any() else np.full(H, np.nan)

    has_end = bool(cols["end"].any())
    before = np.zeros(Tq, dtype=bool)                                # rows whose key i − 1 exists and may be read
    k = np.arange(1, min(Tq, Tk + 1))
    before[k] = m[k, k - 1]

    out = np.stack([
        row_mean(-plogp.sum(-1)),
        positional_mean((w * np.abs(i - j)).sum(-1)),
        w[:, rows].reshape(H, -1).max(1) if rows.any() and Tk else np.full(H, np.nan),
        row_mean(w[..., cols["first"]].sum(-1)),
        row_mean(w[..., cols["end"]].sum(-1)) if has_end else np.full(H, np.nan),
        row_mean(w[..., cols["punct"]].sum(-1)),
        positional_mean((w * (i == j)).sum(-1)),
        positional_mean((w * (i - 1 == j)).sum(-1), before),
    ], axis=1)
    broken = ~np.isfinite(np.where(m, np.asarray(weights, dtype=np.float64), 0.0)).all(axis=(1, 2))
    out[broken] = np.nan           # a head that computed NaN has no figures (its NaN cells read as 0 bits: QA)
    return out


def trace_metrics(trace) -> list[HeadMetrics]:
    """Every head of every attention kind and layer of a trace, in pipeline order."""
    schema = trace.schema
    ends = end_tokens(schema)
    out: list[HeadMetrics] = []
    for info in schema.kinds:
        _, keys = trace.axis_tokens(info.name)
        for layer in range(trace.n_layers(info.stack)):
            values = head_metrics(trace.attention(info.name, layer), trace.mask(info.name, layer), keys, ends,
                                  positional=info.queries == info.keys)     # cross-attention: two sentences
            out += [HeadMetrics(info.name, layer + 1, h + 1, *map(float, v)) for h, v in enumerate(values)]
    return out


def metrics_csv(rows: list[HeadMetrics], off: frozenset = frozenset(), effects: dict | None = None) -> str:
    """The table as CSV: a header of COLUMNS, one line per head; a metric that means nothing there (NaN) empty. A
    run with heads switched off (off: their (kind, layer, head) keys, 0-based) has one more column, "off", "yes"
    for each of them: an ablated run's table read like a plain one (QA as a researcher). effects ({key: value},
    model/analysis/head_effects.py) adds the column "effect_logp", empty for a head not measured."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS + (("off",) if off else ()) + (("effect_logp",) if effects is not None else ()))
    for r in rows:
        flag = ["yes" if r.key in off else ""] if off else []
        effect = [repr(effects[r.key]) if r.key in effects else ""] if effects is not None else []
        w.writerow([r.kind, r.layer, r.head, *("" if np.isnan(x) else repr(x) for x in astuple(r)[3:]), *flag,
                    *effect])
    return buf.getvalue()


assert COLUMNS == tuple(f.name for f in fields(HeadMetrics))
