"""Speed of making a training batch (model.data.collate: pairs of piece ids → padded tensors), measured, not
asserted: prints the median and p95 milliseconds per batch for batches of 4,096 and 16,000 padded tokens (the CPU
and GPU runs' sizes) and how many batches a second that is.

    .venv/bin/python benchmarks/collate_speed.py

A GPU run of the bundled shape makes about 10 updates a second, so a batch that takes tens of milliseconds to
build is a large part of each update. Uses synthetic pairs whose lengths follow Tatoeba's (3 to 30 pieces a side),
so nothing is read from disk.
"""
from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.data import collate, token_batches  # noqa: E402


def pairs(n: int, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ls = rng.randint(3, 30)
        lt = max(2, ls + rng.randint(-3, 5))
        out.append(([rng.randrange(4, 10000) for _ in range(ls)], [rng.randrange(4, 10000) for _ in range(lt)]))
    return out


def main() -> None:
    data = pairs(60_000)
    print("tokens per batch | sentences per batch | median ms | p95 ms | batches per second (median)")
    for max_tokens in (4096, 16000):
        batches = token_batches(data, max_tokens, seed=1)[:200]
        times = []
        for idx in batches:
            t0 = time.perf_counter()
            collate(data, idx)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        med, p95 = statistics.median(times), times[int(0.95 * (len(times) - 1))]
        sents = statistics.median(len(b) for b in batches)
        print(f"{max_tokens:>16,} | {sents:>19,.0f} | {med:>9.2f} | {p95:>6.2f} | {1000 / med:>10,.0f}")


if __name__ == "__main__":
    main()
