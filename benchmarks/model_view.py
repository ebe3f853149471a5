"""How fast the model view paints, measured (not asserted): prints medians and 95th percentiles.

    python benchmarks/model_view.py [--layers 12] [--heads 12] [--tokens 128] [--repeats 30]

A synthetic trace (model/synthetic.py, an encoder of LAYERS × HEADS heads over TOKENS tokens, no weights) in the
Model view panel at 1000 × 900 pixels, offscreen. Measured:
1. a new trace: the mosaic built, coloured and the panel painted (QWidget.grab renders every pixel);
2. a change of attention kind is the same work as 1 (one kind per mosaic), so it is not measured apart;
3. a head change: the focus frame moved and the panel painted.
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--repeats", type=int, default=30)
    a = p.parse_args()
    from PySide6 import QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])

    from model.families.shapes import encoder_only
    from model.synthetic import synthetic_trace
    from visualizer.panels.model_view import ModelViewPanel
    from visualizer.plotting.scenes import settle_scenes
    from visualizer.state import ViewState

    schema = encoder_only("bench", a.layers, 16 * a.heads, a.heads, 32 * a.heads)
    words = [f"w{i}" for i in range(a.tokens)]
    traces = [synthetic_trace(schema, words, seed=s) for s in range(3)]
    kind = schema.kinds[0].name
    state = ViewState.for_trace(traces[0], kind=kind)
    panel = ModelViewPanel(state)
    panel.resize(1000, 900)
    panel.show()
    app.processEvents()

    def painted(update) -> float:
        t0 = time.perf_counter()
        update()
        settle_scenes(panel)
        panel.grab()
        return (time.perf_counter() - t0) * 1000

    painted(lambda: panel.render(traces[0], state))                 # warm-up
    new_trace = [painted(lambda i=i: panel.render(traces[(i + 1) % 3], state)) for i in range(a.repeats)]
    heads = []
    for i in range(a.repeats):
        state.update(head=(i + 1) % a.heads, layer=i % a.layers)
        heads.append(painted(lambda: panel.render(panel.trace, state)))
    print(f"model view, {a.layers} layers × {a.heads} heads × {a.tokens} tokens, {a.repeats} repeats")
    print("| what | median | p95 |")
    print("|---|---|---|")
    for label, xs in (("new trace: mosaic + paint", new_trace), ("head change: frame + paint", heads)):
        print(f"| {label} | {statistics.median(xs):.1f} ms | {pct(xs, 95):.1f} ms |")


if __name__ == "__main__":
    main()
