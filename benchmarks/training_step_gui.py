"""How long the Training step panel holds the GUI thread, measured (not asserted): prints medians and 95th percentiles.

    python benchmarks/training_step_gui.py [--model en-fr] [--repeats 8]

The panel's forward and backward passes run in a worker; the GUI thread only asks for them (render: the loss and
gradients of the view; take_step: one gradient step) and shows their numbers when they come. Printed apart: the
time the GUI thread spends in each call, and the time until the worker's numbers are shown.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="en-fr")
    p.add_argument("--repeats", type=int, default=8)
    a = p.parse_args()
    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from model import load, translate
    from visualizer.panels.training_step import TrainingStepPanel
    from visualizer.state import ViewState
    from model.threads import one_torch_thread

    one_torch_thread()
    lm = load(a.model)
    panel = TrainingStepPanel()
    panel.set_model(lm)
    s = ViewState(sentence="The old man reads a book in the garden.",
                  target="Le vieil homme lit un livre dans le jardin.")
    trace = translate(lm, s.sentence, target=s.target).trace
    s.set_shape(lm.cfg.N_enc, lm.cfg.N_dec, lm.cfg.h, trace.n_steps)
    loop = QtCore.QEventLoop()

    def timed(call, signal) -> tuple[float, float]:
        """(ms in the GUI thread, ms until signal)."""
        signal.connect(loop.quit)
        t0 = time.perf_counter()
        call()
        gui = time.perf_counter() - t0
        loop.exec()
        signal.disconnect(loop.quit)
        return 1000 * gui, 1000 * (time.perf_counter() - t0)

    rows = {"render (loss and gradients of the view)": [], "take_step (one gradient step)": []}
    for i in range(a.repeats):
        s.update(layer=i % lm.cfg.N_enc)
        rows["render (loss and gradients of the view)"].append(timed(lambda: panel.render(trace, s), panel.computed))
        rows["take_step (one gradient step)"].append(timed(panel.take_step, panel.weights_changed))
    panel.wait()
    app.processEvents()
    print(f"model {a.model}; {len(trace.src_tokens)} source / {len(trace.out_tokens)} target tokens")
    print("| call | GUI thread, median | p95 | until shown, median | p95 | runs |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, xs in rows.items():
        gui, done = [x[0] for x in xs], [x[1] for x in xs]
        print(f"| {label} | {statistics.median(gui):.1f} ms | {pct(gui, 95):.1f} ms | {statistics.median(done):.1f} ms "
              f"| {pct(done, 95):.1f} ms | {len(xs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
