"""Computes every number of docs/seed-example.md with the seed-example model and prints them as markdown.

    python docs/seed_example_tables.py

tests/model/test_seed_example.py checks that each printed line appears in docs/seed-example.md, so the
document cannot drift from the code.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model import load, translate  # noqa: E402
from model.seed_example import NOTE_SAT, SENTENCE, W_K, W_Q, W_V  # noqa: E402


def num(x: float, places: int = 4) -> str:
    """0.6000001 -> '0.6', 1.0 -> '1.0', 0.7240 -> '0.724'."""
    s = f"{float(x):.{places}f}".rstrip("0")
    return s + "0" if s.endswith(".") else s


def vec(v) -> str:
    return "[" + ", ".join(num(x) for x in v) + "]"


def softmax(z: np.ndarray) -> np.ndarray:
    z = np.exp(z - z.max())
    return z / z.sum()


def row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def tables() -> list[str]:
    lm = load("seed-example")
    t = translate(lm, SENTENCE).trace
    toks = t.src_tokens                                                    # The cat sat on the mat </s>
    e, p, x = t["src.embedding"], t["src.pe"], t["src.x"]
    q, k, v = (t.get("enc", 0, "self", n, 0) for n in ("q", "k", "v"))   # (T, 2) each, one head
    cat, sat = toks.index("cat"), toks.index("sat")
    d_k = q.shape[1]
    scores = t.get("enc", 0, "self", "scores", 0)[cat]                      # unscaled: the model runs unscaled
    shown = t.attention("enc_self", 0, 0)[cat]                              # what the app shows
    lines = [f"W_Q = {W_Q}, W_K = {W_K}, W_V = {W_V}", "",
             row(["i", "token", "e", "p", "x = e + p", "q = x·W_Q", "k = x·W_K", "v = x·W_V"]),
             row(["---"] * 8)]
    for i, tok in enumerate(toks):
        lines.append(row([i, tok, vec(e[i]), vec(p[i]), vec(x[i]), vec(q[i]), vec(k[i]), vec(v[i])]))
    lines += ["", row(["key"] + toks), row(["---"] * (len(toks) + 1)),
              row(["q_cat·k (unscaled)"] + [num(s) for s in scores]),
              row([f"q_cat·k / √{d_k}"] + [num(s / math.sqrt(d_k)) for s in scores]),
              row(["softmax, unscaled (what the app shows)"] + [num(w, 3) for w in shown]),
              row(["softmax, scaled"] + [num(w, 3) for w in softmax(scores / math.sqrt(d_k))])]
    # the note's own setting: the six words, no </s>
    six = [i for i, tok in enumerate(toks) if tok != "</s>"]
    rec: dict = {}
    with torch.no_grad():
        lm.model.encode(torch.tensor([lm.src_tok.encode(SENTENCE)]), record=rec)
    w6 = rec["enc.0"]["self"]["weights"][0, 0, 1].numpy()
    slipped = scores[six].copy()
    slipped[sat] = float(np.dot(q[cat], NOTE_SAT["K"]))
    lines += ["", row(["six words only (the note's setting)"] + [toks[i] for i in six]), row(["---"] * 7),
              row(["softmax, unscaled"] + [num(w, 3) for w in w6]),
              row(["softmax, scaled"] + [num(w, 3) for w in softmax(scores[six] / math.sqrt(d_k))]),
              row(["with the slip 3.92, unscaled"] + [num(w, 3) for w in softmax(slipped)]),
              row(["with the slip 3.92, scaled"] + [num(w, 3) for w in softmax(slipped / math.sqrt(d_k))])]
    out_app = t.get("enc", 0, "self", "head_out", 0)[cat]
    lines += ["", f"score(cat → cat) = {num(scores[cat])}, score(cat → sat) = {num(scores[sat])}, "
                  f"the note's slip: q_cat · [2.8, 2.8] = {num(np.dot(q[cat], NOTE_SAT['K']))}",
              f"Σ α·v for cat: {vec(out_app)} unscaled (the app), "
              f"{vec(softmax(scores / math.sqrt(d_k)) @ v)} scaled; the plain average of the values is "
              f"{vec(v.mean(0))}"]
    # why √d_k matters: unit-variance q and k, T = 10 keys
    gen = np.random.default_rng(0)
    lines += ["", row(["d_k", "variance of q·k", "mean largest weight, unscaled", "mean largest weight, scaled"]),
              row(["---"] * 4)]
    for dk in (2, 64, 512):
        qq = gen.standard_normal((2000, 1, dk))
        kk = gen.standard_normal((2000, 10, dk))
        s = (qq * kk).sum(-1)                                              # (2000, 10)
        big = lambda z: float(np.mean(np.max(np.exp(z - z.max(-1, keepdims=True)) /
                                             np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True), -1)))
        lines.append(row([dk, num(s.var(), 1), num(big(s), 2), num(big(s / math.sqrt(dk)), 2)]))
    return lines


if __name__ == "__main__":
    print("\n".join(tables()))
