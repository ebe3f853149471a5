"""The most probable tokens in one order everywhere: the output panel, the Math tab's softmax and Compare runs list
tied probabilities alike at every step (an unstable sort had ordered a tie one way at one step and the other way
at the next: QA)."""
from __future__ import annotations

import numpy as np

TIE = 1e-6        # probabilities this close (relative) are a tie: float32's rounding, not the model's preference


def top_k_ids(probs: np.ndarray, k: int) -> np.ndarray:
    """The k largest entries' ids, largest first; a tie (values within TIE of the largest of it: the seed example's
    hand-set weights give four tokens 0.1009287006 at one step and 0.1009286945 at the next) by id; NaN last. Only
    the candidates near the k-th largest are sorted, not the whole vocabulary."""
    if k <= 0:
        return np.zeros(0, dtype=int)
    p = np.asarray(probs, dtype=np.float64)
    p = np.where(np.isnan(p), -np.inf, p)            # a NaN had been the cut, and fewer than k came back (QA)
    if k < p.size:
        cut = np.partition(p, p.size - k)[p.size - k]                      # the k-th largest value
        ids = np.flatnonzero(p >= cut - TIE * abs(cut)) if np.isfinite(cut) else np.arange(p.size)
    else:
        ids = np.arange(p.size)
    order = ids[np.argsort(-p[ids], kind="stable")]
    values, tied, start = p[order], [], 0
    for i in range(1, len(order) + 1):              # each tie (anchored at its largest value) in id order
        if i == len(order) or not values[i] >= values[start] - TIE * abs(values[start]):
            tied.append(np.sort(order[start:i]))
            start = i
    return np.concatenate(tied)[:k] if tied else np.zeros(0, dtype=int)
