"""Hugging Face models at full size, measured (not asserted): prints a table of medians, 95th percentiles and peak
memory.

    python benchmarks/scale.py [--family gpt2|marian] [--tokens 128 512] [--repeats 30] [--folder DIR]

A GPT-2-small-sized model (12 layers, 12 heads, d_model 768, 50,257 tokens: 124 M parameters) or a Marian-sized
one (6+6 layers, 8 heads, d_model 512, 58,101 tokens: 74 M), random weights built from its config (nothing is
downloaded) with a word-level tokenizer, saved once with save_pretrained into --folder. For each length, in a
fresh process: the time from MainWindow(model=folder) to the first painted frame (the model opened, its input
traced and every visible panel painted: the first look a large model gives while it generates; the interpreter's
start and the window's imports apart, torch and transformers counted, as the window imports them when a model
opens), to the complete one (generation run, the teacher-forced traced pass, every panel repainted),
then layer, head and (where the model has more than one) attention-kind changes, each until every visible panel
is repainted, and the process's peak resident memory. The window is then closed, which saves the run's frame
(visualizer/last_frame.py: the close's time and the file's size are printed), and the same folder, sentence and
settings file are reopened in a fresh process three times: the time from MainWindow(model=folder) to that frame
painted, before the model is open (the window's imports apart, as above; torch and transformers load after it).

Then, where it can (the bench extra, Debian's Chromium and BertViz's scripts fetched once; otherwise one line says
how to install them and the column is skipped), BertViz's head view and model view for the same model and input,
in a fresh process each length: import, load, generate and attentions in Python, then each page in headless
Chromium to its first painted frame, layer and head changes in the head view, the browser's peak memory, and the
ratios BertViz / ours (benchmarks/bertviz_views.py says how "painted" is told).

    python benchmarks/scale.py --tokens 64 128 [--no-bertviz] [--bertviz-limit 180] [--bertviz-memory 8]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WORDS = 20                                      # generated tokens after the prompt (the window's default max_new)


def build(family: str, folder: Path) -> Path:
    """The random full-size model folder (made once; reused when it is there)."""
    if (folder / "config.json").is_file():
        return folder
    import torch
    import transformers as tf
    from tokenizers import Tokenizer, models, pre_tokenizers
    torch.manual_seed(0)
    V = 50257 if family == "gpt2" else 58101
    specials = ["<|endoftext|>", "<unk>"] if family == "gpt2" else ["</s>", "<unk>", "<pad>"]
    vocab = {w: i for i, w in enumerate(specials + [f"w{i}" for i in range(V - len(specials))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if family == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=V, bos_token_id=0, eos_token_id=0))
        names = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
    else:
        from tokenizers import processors
        tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 0)])
        model = tf.MarianMTModel(tf.MarianConfig(vocab_size=V, decoder_vocab_size=V, max_position_embeddings=1024,
                                                 pad_token_id=2, eos_token_id=0, decoder_start_token_id=2,
                                                 forced_eos_token_id=0))
        names = dict(eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tf.PreTrainedTokenizerFast(tokenizer_object=tok, **names).save_pretrained(folder)
    return folder


def wait_a_little(app) -> None:
    """What the event loop does while the model works: events handled, then the thread sleeps (a loop of
    processEvents alone would hold the interpreter lock and slow the worker it waits for)."""
    from PySide6 import QtCore
    app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
    time.sleep(0.01)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def prompt_sentence(folder: Path, tokens: int) -> str:
    """The typed input that makes `tokens` rows: a GPT-2 prompt before WORDS generated tokens, a Marian source."""
    layout = json.loads((folder / "config.json").read_text())["model_type"]
    prompt = tokens - WORDS if layout == "gpt2" else tokens - 1                  # Marian: the source, with </s>
    return " ".join(f"w{(7 * i) % 90 + 10}" for i in range(prompt))          # 4 characters a word: under MAX_CHARS


REOPENS = 3                                     # fresh processes reopening the saved frame


def window_settings(config: str):
    """The window's settings in the folder config (its saved frame beside them)."""
    from PySide6 import QtCore
    from visualizer.settings import Settings
    return Settings(QtCore.QSettings(str(Path(config) / "settings.ini"), QtCore.QSettings.Format.IniFormat))


def measure(folder: Path, tokens: int, repeats: int, config: str) -> dict:
    """One length, in this process: first frame, view changes, peak memory; then the close, saving the frame."""
    from PySide6 import QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from visualizer.window import MainWindow
    settings = window_settings(config)
    sentence = prompt_sentence(folder, tokens)

    def settle():
        for _ in range(3):
            app.processEvents()

    t0 = time.perf_counter()
    w = MainWindow(model=str(folder), sentence=sentence, settings=settings)
    w.show()
    while w.lm is None or w.trace is None:
        wait_a_little(app)
    settle()
    first = time.perf_counter() - t0                  # a large model's first look: its input traced, then painted
    while w.runs.runner.busy or w.trace.meta.get("partial"):
        wait_a_little(app)
    settle()
    complete = time.perf_counter() - t0               # generated, traced again and painted
    rows = (len(w.trace.src_tokens), len(w.trace.tgt_tokens))
    sc = w.trace.schema
    changes: dict[str, list[float]] = {"layer": [], "head": [], "kind": []}
    for i in range(repeats):
        for what, value in (("layer", (i + 1) % sc.n_layers), ("head", (i + 1) % sc.n_heads),
                            ("kind", sc.kind_names[(i + 1) % len(sc.kind_names)])):
            if what == "kind" and len(sc.kind_names) < 2:
                continue
            t = time.perf_counter()
            w.state.update(**{what: value})
            settle()
            changes[what].append(1000 * (time.perf_counter() - t))
    w.runs.runner.wait()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20                   # KiB -> GiB
    t = time.perf_counter()
    w.close()                                         # saves the run's frame beside the settings (last_frame.py)
    close = time.perf_counter() - t
    frame = settings.frame_path()
    return {"tokens": tokens, "rows": rows, "first_s": first, "complete_s": complete, "peak_gib": peak,
            "close_s": close, "frame_mb": frame.stat().st_size / 1e6 if frame.is_file() else None,
            "array_mb": sum(a.nbytes for a in w.trace.arrays.values()) / 1e6,
            **{k: (statistics.median(v), pct(v, 95)) for k, v in changes.items() if v}}


def reopen(folder: Path, tokens: int, config: str) -> dict:
    """A window reopened on the run measure() closed (same folder, sentence and settings): the seconds to its saved
    frame painted, before the model is open; None when it showed no frame."""
    from PySide6 import QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from visualizer.window import MainWindow
    settings = window_settings(config)
    sentence = prompt_sentence(folder, tokens)
    t0 = time.perf_counter()
    w = MainWindow(model=str(folder), sentence=sentence, settings=settings)
    w.show()
    from_frame = w.trace is not None and w.lm is None
    while w.startup.first_paint_at is None:           # set once the window (and the frame) is painted
        wait_a_little(app)
    return {"reopened_s": w.startup.first_paint_at - t0 if from_frame else None}


def child(*args: str) -> dict | str:
    """This script's --one or --bertviz-one in a fresh process: its JSON, or the line saying why it failed."""
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if out.returncode != 0:
        return f"failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--family", default="gpt2", choices=["gpt2", "marian"])
    p.add_argument("--tokens", type=int, nargs="+", default=[128, 512])
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--folder", default=None, help="where the random model is kept (default: a folder in /tmp)")
    p.add_argument("--bertviz", action=argparse.BooleanOptionalAction, default=True,
                   help="BertViz's head view and model view beside ours (benchmarks/bertviz_views.py)")
    p.add_argument("--bertviz-limit", type=float, default=180, help="seconds a BertViz page may take to paint")
    p.add_argument("--bertviz-memory", type=float, default=8, help="GiB the browser may hold before it is stopped")
    p.add_argument("--bertviz-repeats", type=int, default=5, help="layer and head changes in BertViz's head view")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)        # a child process: one length
    p.add_argument("--reopen", action="store_true", help=argparse.SUPPRESS)     # … reopening its saved frame
    p.add_argument("--config", help=argparse.SUPPRESS)                           # … with the settings there
    p.add_argument("--bertviz-one", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    folder = Path(a.folder or Path(tempfile.gettempdir()) / f"av-scale-{a.family}")
    if a.one:
        print(json.dumps(measure(folder, a.tokens[0], a.repeats, a.config)))
        return 0
    if a.reopen:
        print(json.dumps(reopen(folder, a.tokens[0], a.config)), flush=True)
        os._exit(0)                                   # not waiting for the model loading behind the frame
    import bertviz_views
    if a.bertviz_one:
        print(json.dumps(bertviz_views.measure(folder, prompt_sentence(folder, a.tokens[0]), WORDS,
                                               a.bertviz_repeats, a.bertviz_limit, a.bertviz_memory)))
        return 0
    t = time.perf_counter()
    build(a.family, folder)
    print(f"{a.family}-sized random model in {folder} ({time.perf_counter() - t:.0f} s to build or find)")
    print("| tokens (source, decoder rows) | first frame | complete | layer change median / p95 | head change "
          "| kind change | peak memory | close (saving the frame) | frame file | reopened: frame painted, median "
          f"of {REOPENS} |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ours = {}
    for n in a.tokens:
        config = tempfile.TemporaryDirectory()        # the settings both windows share (the frame is kept there)
        args = ("--family", a.family, "--folder", str(folder), "--tokens", str(n), "--config", config.name)
        r = child("--one", *args, "--repeats", str(a.repeats))
        if isinstance(r, str):
            print(f"| {n} | {r} |")
            continue
        ours[n] = r
        cell = lambda k: f"{r[k][0]:.1f} / {r[k][1]:.1f} ms" if k in r else "—"    # noqa: E731
        if r["frame_mb"] is None:
            saved, reopened = f"not saved ({r['array_mb']:.0f} MB of arrays: over the limit)", "—"
        else:
            saved = f"{r['frame_mb']:.0f} MB"
            again = [child("--reopen", *args) for _ in range(REOPENS)]
            times = [x["reopened_s"] for x in again if isinstance(x, dict) and x["reopened_s"] is not None]
            reopened = (f"{statistics.median(times):.2f} s (max {max(times):.2f})" if len(times) == len(again) else
                        f"no frame shown ({next((x for x in again if isinstance(x, str)), 'no frame')})")
        print(f"| {n} ({r['rows'][0]}, {r['rows'][1]}) | {r['first_s']:.2f} s | {r['complete_s']:.2f} s | "
              f"{cell('layer')} | {cell('head')} | "
              f"{cell('kind')} | {r['peak_gib']:.2f} GiB | {r['close_s']:.2f} s | {saved} | {reopened} |")
        config.cleanup()
    if a.bertviz:
        why = bertviz_views.missing()
        if why:
            print(why)
            return 0
        print(f"\nBertViz {bertviz_views.version()} for the same model and input, in headless Chromium "
              f"({bertviz_views.browser_version()}):")
        print(bertviz_views.HEADER)
        ratios = []
        for n in a.tokens:
            r = child("--bertviz-one", "--family", a.family, "--folder", str(folder), "--tokens", str(n),
                      "--bertviz-repeats", str(a.bertviz_repeats), "--bertviz-limit", str(a.bertviz_limit),
                      "--bertviz-memory", str(a.bertviz_memory))
            if isinstance(r, str):
                print(f"| {n} | {r} |")
                continue
            figures, ratio = bertviz_views.table_rows(n, r, ours.get(n), a.bertviz_limit, a.bertviz_memory)
            print(figures)
            ratios.append(ratio)
        print("\nBertViz / ours (a painted view counts from importing transformers: load, generate, attentions, page):")
        print(bertviz_views.RATIO_HEADER)
        print("\n".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
