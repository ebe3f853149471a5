"""Export of every attention heatmap of one sentence: our pyqtgraph exporter vs matplotlib, same pixels.

    python benchmarks/export_speed.py [--model en-fr] [--repeats 3]

Prints medians and the ratio. matplotlib is only needed here (pip install matplotlib).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SENTENCE = "The little girl in the red dress is playing with her brother in the garden."


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=None)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    from PySide6 import QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from model import bundled_models, load, translate
    from visualizer.export import export_heatmaps, heatmap_specs
    from visualizer.plotting.figure import HeatmapFigure

    name = a.model or ("en-fr" if "en-fr" in bundled_models() else bundled_models()[0])
    lm = load(name)
    specs = heatmap_specs(translate(lm, SENTENCE).trace, lm.name)
    w, h = HeatmapFigure().widget.width(), HeatmapFigure().widget.height()

    def ours(folder):
        export_heatmaps(specs, folder, "png")

    def mpl(folder):
        dpi = 100
        for s in specs:
            fig, ax = plt.subplots(figsize=(w / dpi, h / dpi), dpi=dpi)
            shown = np.where(s.mask, s.matrix, np.nan)
            im = ax.imshow(shown, cmap="viridis", vmin=0, vmax=1)
            ax.set_xticks(range(len(s.cols)), s.cols)
            ax.set_yticks(range(len(s.rows)), s.rows)
            ax.set_title(s.title)
            fig.colorbar(im, ax=ax)
            fig.savefig(Path(folder) / f"{s.stem}.png", dpi=dpi)
            plt.close(fig)

    results = {}
    for label, fn in (("pyqtgraph (ours)", ours), ("matplotlib imshow+savefig", mpl)):
        times = []
        for _ in range(a.repeats):
            with tempfile.TemporaryDirectory() as d:
                t0 = time.perf_counter()
                fn(d)
                times.append(time.perf_counter() - t0)
        results[label] = statistics.median(times)
    n = len(specs)
    print(f"model {lm.name}, {n} heatmaps of {w}x{h} px, median of {a.repeats} runs")
    print("| exporter | all heatmaps | per heatmap |")
    print("| --- | --- | --- |")
    for label, t in results.items():
        print(f"| {label} | {t:.2f} s | {1000 * t / n:.0f} ms |")
    ours_t, mpl_t = results["pyqtgraph (ours)"], results["matplotlib imshow+savefig"]
    print(f"ratio matplotlib / ours: {mpl_t / ours_t:.1f}x")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
