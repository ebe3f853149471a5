"""How many threads torch uses for one run: the window's runs and the commands' (the same count gives the same
floats: with torch's default of one thread a core, `metrics` differed from the window's Head metrics CSV in the 7th
digit)."""
from __future__ import annotations

import os

_default_threads: int | None = None       # torch's own choice (the cores), read before the first change


def one_torch_thread(large: bool = False) -> None:
    """Translating one sentence is hundreds of tiny tensor operations, for which a second torch thread costs
    more in synchronisation than it saves (measured in one run: 56 against 63 ms for a 12-word sentence,
    93 against 110 ms for 120 words); the other core is left to the GUI thread, which paints meanwhile.
    large: a model of tens of millions of parameters (see model.families.can_preview), whose matrix products are
    big enough to share among threads: torch's default less one core, left to the GUI thread (on 2 cores, one
    thread: with the other core busy, a GPT-2-small pass over 108 tokens took 11.5 s on two threads against 3.2 s
    on one). OMP_NUM_THREADS, when set, decides instead. The setting belongs to the calling thread (OpenMP), so
    every thread that runs the model calls this."""
    global _default_threads
    import torch
    if "OMP_NUM_THREADS" in os.environ:
        return
    if _default_threads is None:
        _default_threads = torch.get_num_threads()
    want = max(1, _default_threads - 1) if large else 1
    if torch.get_num_threads() != want:
        torch.set_num_threads(want)
