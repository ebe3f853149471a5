"""How fast the window reacts, measured (not asserted): prints medians and 95th percentiles.

    python benchmarks/gui_speed.py [--model en-fr] [--repeats 30] [--views-only]

1. keystroke -> translation + every visible panel repainted, 12-word sentence, greedy. The model starts at the
   keystroke; the debounce (DEBOUNCE_MS after the last keystroke) holds only the repaint. Measured: from the
   debounce running out to every visible panel painted (the wait a user who paused sees beyond the debounce),
   and apart, the model run itself. Greedy decoding first checks the last translation (the draft) in one
   parallel pass; a run that reads the same source pieces as the last one is not run again. Keystrokes: the
   last letter of the sentence typed (its translation changes near the end), a space typed after it (the same
   pieces), a keystroke that brings a whole other sentence (no use in the draft: the worst case), and the
   first of these with the draft switched off, in the same run, for the ratio. Then every keystroke of typing
   the sentence letter by letter from its first word on, each followed by a pause.
2. layer / head / step change -> every visible panel repainted (no model run), each kind apart, and a
   change of attention kind apart
3. an input of the model's maximum length: encode + translate + repaint, and time per output token
4. cold start in a fresh process: interpreter start to the first translated frame on screen. A first start with
   the default sentence shows the frame the model ships (start-frame.npz); a first start with another sentence
   has none, and shows the frame of a helper process that translates it while the window opens (see
   visualizer/first_run.py); a later start shows the frame the previous one saved. Each also reports when the
   live run of the model is painted.
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
OTHER = "Two young men are playing football on a green field near the old school"


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def row(label, xs):
    return f"| {label} | {statistics.median(xs):.1f} ms | {pct(xs, 95):.1f} ms | {len(xs)} |"


COLD = """
import time, sys
t0 = time.perf_counter()
from visualizer import first_run           # as the app starts (visualizer/cli.py): the helper first
from visualizer.state import ViewState
start = ViewState.at_start(sys.argv[1] or None, sys.argv[2] or None)
helper = first_run.start(start) if first_run.wanted() else None
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
from visualizer.settings import Settings
first = first_run.first_frame(start, Settings().frame_path(), helper)
from visualizer.window import MainWindow
w = MainWindow(model=sys.argv[1] or None, sentence=sys.argv[2] or None, first=first)
w.show()
from_frame = w.trace is not None       # a saved frame, shown before the model is loaded
done = {}
def shown():
    for _ in range(3):
        app.processEvents()   # paint every dirty widget (layouts may ask for a second pass)
    done.setdefault("first", time.perf_counter() - t0)
    if w.startup.frame is None:  # the live run of the model (not a saved frame nor the helper's)
        done["live"] = time.perf_counter() - t0
        app.quit()
w.trace_shown.connect(shown)
app.exec()
w.runs.runner.wait()
w.close()                              # saves this run's frame for the next start
first = (w.startup.first_paint_at - t0) if from_frame else done["first"]
print(f"{1000 * first:.1f} {1000 * done['live']:.1f} {int(from_frame)}")
"""


def settle(app) -> None:
    """Let Qt do what it does after a change: lay out and paint every dirty widget and plot. (QWidget.repaint()
    would not do: it skips the plots' viewports, whose scene updates are queued.)"""
    for _ in range(3):
        app.processEvents()


def view_changes(app, w, rounds: int) -> dict[str, list[float]]:
    """Each kind of view change on its own, in ms to painted: the goal is about head, layer and step changes; a
    change of attention kind (encoder self -> cross) swaps every token axis and is reported apart."""
    view = {"head": [], "layer": [], "step": [], "kind": []}
    kinds = w.trace.schema.kinds           # every attention kind of the model, in pipeline order
    for i in range(rounds):
        w.state.update(kind=kinds[0].name, layer=0, head=0, step=0)
        settle(app)
        plan = [("head", [dict(head=h) for h in (*range(1, w.trace.n_heads), 0)])]
        for n, k in enumerate(kinds):
            if n:
                plan.append(("kind", [dict(kind=k.name, step=0)]))
            plan.append(("layer", [dict(layer=l) for l in (*range(1, w.trace.n_layers(k.stack)), 0)]))
            if k.by_step:
                steps = range(1, w.trace.n_steps) if n % 2 else reversed(range(w.trace.n_steps - 1))
                plan.append(("step", [dict(step=s) for s in steps]))
        for what, changes in plan:
            for change in changes:
                t0 = time.perf_counter()
                w.state.update(**change)
                settle(app)
                view[what].append(1000 * (time.perf_counter() - t0))
    return view


def print_views(view: dict[str, list[float]]) -> None:
    print(row("layer / head / step change → repainted", view["head"] + view["layer"] + view["step"]))
    for what in ("head", "layer", "step"):
        print(row(f"… {what} change alone", view[what]))
    print(row("attention kind change (encoder self → cross → decoder self) → repainted", view["kind"]))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=None)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--views-only", action="store_true",
                   help="only the layer, head, step and kind changes, REPEATS rounds of them (p95 of the kind "
                        "changes needs more than the full run's few)")
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

    while w.lm is None or w.trace is None or w.runs.runner.busy:   # the model opens in the background
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
    name = w.lm.name

    # typing: each keystroke starts the model at once; the debounce (DEBOUNCE_MS after the last keystroke) holds the
    # repaint. Measured: from the debounce running out to every visible panel painted, as a user who paused sees it
    fired = []
    w.runs.debounce.timeout.disconnect(w.runs.debounced)

    def debounce_ran_out():
        fired.append((time.perf_counter(), w.runs.held is not None))
        w.runs.debounced()

    w.runs.debounce.timeout.connect(debounce_ran_out)

    def keystroke(text: str, draft: bool = True) -> tuple[float, bool] | None:
        """Type text; (ms from the debounce running out to painted, whether the result was ready by then)."""
        if w.state.sentence == text:
            return None
        if not draft:
            w.runs.previous = None
        fired.clear()
        w.state.update(sentence=text)        # as the sentence field does
        wait_shown()
        settle(app)
        t_fire, ready = fired[-1]
        return 1000 * (time.perf_counter() - t_fire), ready

    if a.views_only:
        print(f"model {name}; {len(SENTENCE.split())}-word sentence; {a.repeats} rounds of view changes")
        print("| measurement | median | p95 | runs |")
        print("| --- | --- | --- | --- |")
        print_views(view_changes(app, w, a.repeats))
        w.close()
        return 0
    assert len(SENTENCE.split()) == 12
    keystrokes = {  # name: (the text before the keystroke, the text after it, draft on)
        "letter": (SENTENCE[:-1], SENTENCE, True), "space": (SENTENCE, SENTENCE + " ", True),
        "other": (OTHER, SENTENCE, True), "letter, no draft": (SENTENCE[:-1], SENTENCE, False)}
    typing = {name: [] for name in keystrokes}
    model_part = {name: [] for name in keystrokes}
    ready = []
    for i in range(a.repeats):
        for kind, (before, after, with_draft) in keystrokes.items():
            keystroke(before)
            ms, was_ready = keystroke(after, with_draft)
            typing[kind].append(ms)
            model_part[kind].append(w.last_run_ms)
            ready.append(was_ready)
    out_tokens = len(w.trace.out_tokens)
    first_word = SENTENCE.index(" ")
    letters, letter_model = [], []
    for i in range(max(2, a.repeats // 4)):
        keystroke(SENTENCE[:first_word])
        for end in range(first_word + 1, len(SENTENCE) + 1):
            ms, was_ready = keystroke(SENTENCE[:end])
            letters.append(ms)
            letter_model.append(w.last_run_ms)
            ready.append(was_ready)

    view = view_changes(app, w, max(3, a.repeats // 4))

    max_len = w.lm.cfg.max_len
    words = ("the cat sat on the mat and the dog ran to the house " * 40).split()
    long = []
    per_token = []
    for i in range(max(3, a.repeats // 5)):
        w.runs.previous = None       # a full greedy decoding: the time per output token below means something
        t0 = time.perf_counter()
        w.state.update(sentence=" ".join(words[: max_len - 1 - i % 2]))     # the model starts at once
        w.runs.debounce.stop()       # and its result is drawn when it comes: this measures model and repaint
        wait_shown()
        settle(app)
        long.append(1000 * (time.perf_counter() - t0))
        per_token.append(w.last_run_ms / max(1, len(w.trace.out_tokens)))
    long_tokens, long_out = len(w.trace.src_tokens), len(w.trace.out_tokens)
    # the goal is "encode and repaint": the same input with its translation as the target, so the decoder
    # runs once, teacher-forced, instead of once per output token
    translation = w.translation.text
    forced = []
    for i in range(max(3, a.repeats // 5)):
        w.runs.previous = None
        t0 = time.perf_counter()
        w.state.update(sentence=" ".join(words[: max_len - 1 - i % 2]), target=translation)
        w.runs.debounce.stop()
        wait_shown()
        settle(app)
        forced.append(1000 * (time.perf_counter() - t0))
    w.state.update(target="")
    w.close()

    # a fresh process each time, with its own settings folder. First starts: the app's default sentence (the model
    # ships its frame: start-frame.npz) and another sentence (nothing to show before the model runs); then a
    # second start with that other sentence, which shows the frame the first one saved at close
    def cold(sentence: str, config: str) -> tuple[float, float, bool]:
        env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CONFIG_HOME=config)
        r = subprocess.run([sys.executable, "-c", COLD, a.model or "", sentence], capture_output=True, text=True,
                           env=env, cwd=ROOT)
        first, live, from_frame = r.stdout.strip().splitlines()[-1].split()
        return float(first), float(live), bool(int(from_frame))

    starts = {"default": ([], []), "none": ([], []), "saved": ([], [])}
    for i in range(3):
        with tempfile.TemporaryDirectory() as config:
            first, live, from_frame = cold("", config)
            assert from_frame or a.model not in (None, "en-fr"), "the default model's start frame was not used"
            starts["default"][0].append(first)
            starts["default"][1].append(live)
        with tempfile.TemporaryDirectory() as config:
            for attempt in ("none", "saved"):
                first, live, from_frame = cold(SENTENCE, config)
                assert from_frame == (attempt == "saved"), "only the second start should have a frame to show"
                starts[attempt][0].append(first)
                starts[attempt][1].append(live)

    print(f"model {name}; {len(SENTENCE.split())}-word sentence -> {out_tokens} output tokens; "
          f"long input {long_tokens} source tokens")
    print("| measurement | median | p95 | runs |")
    print("| --- | --- | --- | --- |")
    for kind, label in (("letter", "keystroke, the last letter: debounce ran out → translated and repainted"),
                        ("space", "… a space after it, the same source pieces: not run again"),
                        ("other", "… a whole other sentence, the draft of no use"),
                        ("letter, no draft", "… the last letter, without the draft")):
        print(row(label, typing[kind]))
        print(row("   … of which the model run in the worker (translate + trace)", model_part[kind]))
    print(row(f"every keystroke of typing the sentence from its first word ({len(SENTENCE) - first_word} "
              "keystrokes a pass)", letters))
    print(row("   … of which the model run in the worker", letter_model))
    print(f"| keystrokes whose run had ended when the debounce ran out | {sum(ready)} of {len(ready)} | | |")
    ratio = statistics.median(typing["letter, no draft"]) / statistics.median(typing["letter"])
    print(f"| last letter: without / with the draft, medians | {ratio:.2f}× | | |")
    print_views(view)
    print(row(f"{long_tokens}-token input → translated ({long_out} output tokens, greedy) and repainted", long))
    print(row("… the same input and its translation as the target: encoded, decoded teacher-forced and repainted",
              forced))
    print(f"| translation time per output token, long input | {statistics.median(per_token):.1f} ms | "
          f"{pct(per_token, 95):.1f} ms | {len(per_token)} |")
    print(row("first start, default sentence → the model's start frame painted", starts["default"][0]))
    print(row("… and the live run of the model painted", starts["default"][1]))
    print(row("first start, another sentence (no saved frame) → the helper process's frame painted",
              starts["none"][0]))
    print(row("… and the live run of the model painted", starts["none"][1]))
    print(row("later start with the last session's frame → that frame painted", starts["saved"][0]))
    print(row("… and the live run of the model painted", starts["saved"][1]))
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
