"""How fast the window reacts, measured (not asserted): prints medians and 95th percentiles.

    python benchmarks/gui_speed.py [--model en-fr] [--repeats 30]

1. keystroke (after the debounce) -> translation + every visible panel repainted, 12-word sentence, greedy
2. layer / head / step change -> every visible panel repainted (no model run), each kind apart, and a
   change of attention kind apart
3. an input of the model's maximum length: encode + translate + repaint, and time per output token
4. cold start in a fresh process: interpreter start to the first translated frame on screen, without and
   with the frame the previous start saved (the window shows it while torch and the model load)
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SENTENCE = "The little girl gave her brother a red book in the garden"   # 12 words


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def row(label, xs):
    return f"| {label} | {statistics.median(xs):.1f} ms | {pct(xs, 95):.1f} ms | {len(xs)} |"


COLD = """
import time, sys
t0 = time.perf_counter()
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
from visualizer.window import MainWindow
w = MainWindow(model=sys.argv[1] or None)
w.show()
from_frame = w.trace is not None       # the last session's frame, shown before the model is loaded
done = []
def shown():
    for _ in range(3):
        app.processEvents()   # paint every dirty widget (layouts may ask for a second pass)
    done.append(time.perf_counter() - t0)
    app.quit()
w.trace_shown.connect(shown)
app.exec()
w.runner.wait()
w.close()                              # saves this run's frame for the next start
first = (w.first_paint_at - t0) if from_frame else done[0]
print(f"{1000 * first:.1f} {1000 * done[0]:.1f} {int(from_frame)}")
"""


def settle(app) -> None:
    """Let Qt do what it does after a change: lay out and paint every dirty widget and plot. (QWidget.repaint()
    would not do: it skips the plots' viewports, whose scene updates are queued.)"""
    for _ in range(3):
        app.processEvents()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=None)
    p.add_argument("--repeats", type=int, default=30)
    a = p.parse_args()
    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from visualizer.window import MainWindow

    from visualizer.settings import Settings
    config = tempfile.TemporaryDirectory()
    settings = Settings(QtCore.QSettings(str(Path(config.name) / "settings.ini"), QtCore.QSettings.Format.IniFormat))
    w = MainWindow(model=a.model, sentence=SENTENCE, settings=settings)
    w.show()
    loop = QtCore.QEventLoop()

    def wait_shown():
        w.trace_shown.connect(loop.quit)
        loop.exec()
        w.trace_shown.disconnect(loop.quit)

    while w.lm is None or w.trace is None or w.runner.busy:   # the model opens in the background
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
    name = w.lm.name

    assert len(SENTENCE.split()) == 12
    typing, model_part = [], []
    for i in range(a.repeats):
        w.state.sentence = SENTENCE + ("" if i % 2 else " ")
        w.debounce.stop()            # as if the debounce had just fired: no second run behind the measured one
        t0 = time.perf_counter()
        w._run()
        wait_shown()
        settle(app)
        typing.append(1000 * (time.perf_counter() - t0))
        model_part.append(w.last_run_ms)
    out_tokens = len(w.trace.out_tokens)

    # each kind of view change on its own: the goal is about head, layer and step changes; a change of attention
    # kind (encoder self -> cross) swaps every token axis and is reported apart
    view = {"head": [], "layer": [], "step": [], "kind": []}
    for i in range(max(3, a.repeats // 4)):
        w.state.update(kind="enc_self", layer=0, head=0, step=0)
        settle(app)
        for what, changes in (("head", [dict(head=h) for h in (*range(1, w.trace.n_heads), 0)]),
                              ("layer", [dict(layer=l) for l in (*range(1, w.trace.n_layers("enc")), 0)]),
                              ("kind", [dict(kind="cross", step=0)]),
                              ("step", [dict(step=s) for s in range(1, w.trace.n_steps)]),
                              ("layer", [dict(layer=l) for l in (*range(1, w.trace.n_layers("dec")), 0)]),
                              ("kind", [dict(kind="dec_self")]),
                              ("step", [dict(step=s) for s in reversed(range(w.trace.n_steps - 1))])):
            for change in changes:
                t0 = time.perf_counter()
                w.state.update(**change)
                settle(app)
                view[what].append(1000 * (time.perf_counter() - t0))

    max_len = w.lm.cfg.max_len
    words = ("the cat sat on the mat and the dog ran to the house " * 40).split()
    long = []
    per_token = []
    for i in range(max(3, a.repeats // 5)):
        w.state.sentence = " ".join(words[: max_len - 1 - i % 2])
        w.debounce.stop()
        t0 = time.perf_counter()
        w._run()
        wait_shown()
        settle(app)
        long.append(1000 * (time.perf_counter() - t0))
        per_token.append(w.last_run_ms / max(1, len(w.trace.out_tokens)))
    long_tokens = len(w.trace.src_tokens)
    w.close()

    # a fresh process each time, with its own settings folder: first with no saved frame, then with the frame
    # the previous start saved (same model and sentence), as at the second start of the app on a machine
    fresh, first_frame, live_after_frame = [], [], []
    for i in range(3):
        with tempfile.TemporaryDirectory() as config:
            env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CONFIG_HOME=config)
            for attempt in range(2):
                r = subprocess.run([sys.executable, "-c", COLD, a.model or ""], capture_output=True, text=True,
                                   env=env, cwd=ROOT)
                first, live, from_frame = r.stdout.strip().splitlines()[-1].split()
                assert int(from_frame) == attempt, "the second start should show the saved frame"
                if attempt == 0:
                    fresh.append(float(live))
                else:
                    first_frame.append(float(first))
                    live_after_frame.append(float(live))

    print(f"model {name}; {len(SENTENCE.split())}-word sentence -> {out_tokens} output tokens; "
          f"long input {long_tokens} source tokens")
    print("| measurement | median | p95 | runs |")
    print("| --- | --- | --- | --- |")
    print(row("keystroke (after debounce) → translated and repainted", typing))
    print(row("… of which the model run in the worker (translate + trace)", model_part))
    print(row("layer / head / step change → repainted", view["head"] + view["layer"] + view["step"]))
    for what in ("head", "layer", "step"):
        print(row(f"… {what} change alone", view[what]))
    print(row("attention kind change (encoder self → cross → decoder self) → repainted", view["kind"]))
    print(row(f"{long_tokens}-token input → translated and repainted", long))
    print(f"| translation time per output token, long input | {statistics.median(per_token):.1f} ms | "
          f"{pct(per_token, 95):.1f} ms | {len(per_token)} |")
    print(row("cold start, no saved frame → first translated frame (model loaded, run, painted)", fresh))
    print(row("cold start with the last session's frame → that frame painted", first_frame))
    print(row("… and the live run of the model painted", live_after_frame))
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
