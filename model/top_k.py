"""The most probable tokens in one order everywhere: the output panel, the Math tab's softmax and Compare runs list
tied probabilities alike at every step (an unstable sort had ordered a tie one way at one step and the other way
at the next: QA)."""
from __future__ import annotations

import numpy as np


def float_noise_free(probs: np.ndarray) -> np.ndarray:
    """probs with mantissas cut to 20 bits (6 significant digits): a float32 model's ties stay ties. The seed
    example's hand-set weights give four tokens p = 0.100928695 at one step and 0.1009287006 and 0.1009286945 at the
    next, float32's rounding, and the tie was listed in another order at each step (QA)."""
    mantissa, exponent = np.frexp(np.asarray(probs, dtype=np.float64))
    return np.ldexp(np.round(mantissa * 2.0 ** 20) / 2.0 ** 20, exponent)


def top_k_ids(probs: np.ndarray, k: int) -> np.ndarray:
    """The k largest entries' ids, largest first, ties (to float32's precision) by id, without sorting all."""
    if k <= 0:
        return np.zeros(0, dtype=int)
    key = float_noise_free(probs)
    if k >= key.size:
        return np.argsort(-key, kind="stable")
    cut = np.partition(key, key.size - k)[key.size - k]             # the k-th largest value
    ids = np.flatnonzero(key >= cut)                                # ties at the cut: all of them, in id order
    return ids[np.argsort(-key[ids], kind="stable")][:k]
