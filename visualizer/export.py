"""Export heatmaps as PNG, SVG or CSV, for slides and papers: labelled, titled, with a colour bar.

Every file is written to a temporary file in the target folder and renamed into place, so a failure
(unwritable folder, full disk) never leaves a half-written file behind.
"""
from __future__ import annotations

import csv
import io
import json
import os
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from model import files
from model.ablation import ablated_heads, describe, mean_of_heads_on, spec as spec_of
from model.assets import lasting_name, short_name
from model.schema import DECODER_ONLY, ENCODER_ONLY
from model.trace import Trace
from model.text import DIRECTION_CONTROLS

from .figure_size import FIGURE_SIZE
from .plotting.colormaps import COLORMAP, colour_levels
from .text_safety import isolate

FORMATS = ("png", "svg", "pdf", "csv")


class ExportError(Exception):
    """An export that could not be done; str() is one line for a dialog or the terminal."""


@dataclass(frozen=True)
class HeatmapSpec:
    """One attention matrix to export: which one, its numbers, its labels and its title."""
    kind: str
    file: str           # the kind's file-name part: "decoder_self"
    layer: int          # 0-based
    head: int | None    # 0-based; None = mean over heads
    matrix: np.ndarray  # (Tq, Tk) weights; masked cells are exactly 0 here
    mask: np.ndarray    # (Tq, Tk) bool, True = may attend
    rows: list[str]     # query tokens
    cols: list[str]     # key tokens
    title: str
    levels: tuple[float, float] = (0.0, 1.0)      # the colour scale: the weights at its two ends

    @property
    def stem(self) -> str:
        head = "mean" if self.head is None else f"H{self.head + 1}"
        return f"{self.file}_L{self.layer + 1}_{head}"


def run_title(trace: Trace, model_name: str = "") -> str:
    """The run a figure shows, as its title ends: the sentence quoted (“…”, cut at TITLE_CHARS), then the model,
    how the rows were chosen, changed weights and positions switched off in brackets, then the heads switched
    off."""
    # isolated: a U+202E in it drew the rest of the title, the model's name too, backwards (QA)
    quoted = f"“{isolate(title_sentence(trace.meta.get('sentence', '')))}”"
    if trace.meta.get("truncated"):      # a long paste: the model read its start only (the title had all 14 lines)
        quoted += " (cut at the model's length)"
    # (rows: the prompt's tokens, then those it wrote but the last, which no row reads)
    written = len(trace.tgt_tokens) - trace.prompt_rows() - 1 if trace.schema.layout == DECODER_ONLY else 0
    if written > 0:                      # a language model's rows: its prompt's, then those it wrote (the title
        quoted += f" + {written} token{'s' if written != 1 else ''} it wrote"     # quoted the prompt only: QA)
    off = ablated_heads(trace)
    # a figure of an experiment says which heads were off, in the panels' words ("cross:1:2" read as jargon, QA)
    heads = f" [{describe(off, trace.schema)}]" if off else ""
    # and how its rows were chosen, when not greedily (a beam's and a given target's read like greedy ones)
    how = "" if trace.decoding in ("greedy", "") or trace.schema.layout == ENCODER_ONLY else trace.decoding
    steps = trace.meta.get("training_steps", 0)     # weights changed by the Training step tab (the stock model's
    trained = f"weights after {steps} training step{'s' if steps != 1 else ''}" if steps else ""     # name, QA)
    positions = "no positional encoding" if trace.meta.get("positional") is False else ""
    named = ", ".join(filter(None, (short_name(model_name) if model_name else "", how, trained, positions)))
    return quoted + (f" ({named})" if named else "") + heads


def heatmap_specs(trace: Trace, model_name: str = "", include_mean: bool = True,
                  colour_scale: str = "layer") -> list[HeatmapSpec]:
    """Every head (and the mean over heads) of every attention kind and layer of a trace, each coloured by the
    colour_scale rule (COLOUR_SCALES)."""
    run = run_title(trace, model_name)
    off = ablated_heads(trace)
    specs = []
    for info in trace.schema.kinds:
        kind = info.name
        rows, cols = trace.axis_tokens(kind)
        for layer in range(trace.n_layers(info.stack)):
            weights = trace.attention(kind, layer)                 # (H, Tq, Tk)
            mask = trace.mask(kind, layer)
            heads: list[int | None] = list(range(weights.shape[0])) + ([None] if include_mean else [])
            for h in heads:
                if h is None:
                    matrix, which = mean_of_heads_on(weights, kind, layer, off)
                else:
                    matrix, which = weights[h], f"head {h + 1}" + (" (switched off)" if (kind, layer, h) in off else "")
                title = f"{info.title}, layer {layer + 1}, {which} — {run}"
                specs.append(HeatmapSpec(kind, info.file, layer, h, matrix, mask, rows, cols, title,
                                         colour_levels(weights, matrix, colour_scale)))
    return specs


TITLE_CHARS = 100           # a figure's title quotes a sentence up to this long, then "…"


def title_sentence(text: str) -> str:
    """A sentence as a figure's title quotes it: whole up to TITLE_CHARS, else cut at a word before it, with "…";
    in the order it was typed, which the axes show (direction controls left out: U+202E had drawn "car is" of the
    title as "si rac", QA)."""
    return cut_words(DIRECTION_CONTROLS.sub("", text), TITLE_CHARS)


def cut_words(text: str, chars: int) -> str:
    """text on one line, whole up to chars, else cut at a word before it, with "…"."""
    text = " ".join(text.split())
    if len(text) <= chars:
        return text
    cut = text[:chars - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[chars // 2:] else cut).rstrip(" ,;:") + "…"


RUN_FILE = "run.json"        # beside exported figures: the run they show


def run_record(trace: Trace, model_name: str = "", temperature: float = 1.0, top_k: int = 0, lm=None,
               figures: dict | None = None) -> str:
    """What a folder of exported figures shows, as JSON: the model, the sentence, the output, the decoding and the
    heads switched off (1-based, as --ablate spells them), and the training steps taken on the weights in memory
    when there were any. QA: the CSVs of a run with heads off had the same names and no word of them, and nothing
    said which sentence or model they came from. With lm: which weights exactly and the libraries' versions
    (model/provenance.py); figures: how they were drawn (colour scale, colour map, size); and the tokens of the
    figures' axes (a sliding window's or a long paste's cut showed nowhere else: QA as a researcher)."""
    from . import version
    record = {"format": "attention-visualizer-export/1", "app": version(), "model": lasting_name(model_name),
              "sentence": trace.meta.get("sentence", ""), "output": str(trace.meta.get("translation", "")),
              "decoding": trace.decoding, "heads_off": [spec_of(a) for a in sorted(ablated_heads(trace))]}
    if lm is not None:
        from model.provenance import model_provenance
        record["model_details"] = model_provenance(lm)
    if figures:
        record["figures"] = figures
    record["tokens"] = {name: list(tokens) for name, tokens in (("source", trace.src_tokens), ("decoder_input",
                        trace.tgt_tokens), ("output", trace.out_tokens)) if tokens}
    if temperature != 1.0 or top_k:      # the output distribution pictured: softmax(logits / T), cut to top k
        record["output_distribution"] = {"temperature": float(temperature), **({"top_k": int(top_k)} if top_k else {})}
    if trace.meta.get("training_steps"):
        record["training_steps"] = int(trace.meta["training_steps"])
    if trace.meta.get("truncated"):      # the model read the sentence's start only (at its length)
        record["sentence_cut"] = True
    return json.dumps(record, ensure_ascii=False, indent=2) + "\n"


def figures_drawn(fmt: str, colour_scale: str, colormap: str | None = None, size=FIGURE_SIZE, scale: float = 1.0,
                  titles: bool = True) -> dict:
    """How the heatmaps were drawn, for run.json: the format and colour scale; the colour map and the figure's size
    in pixels unless they are numbers (CSV); a PNG's scale."""
    drawn: dict = {"format": fmt, "colour_scale": colour_scale}
    if fmt != "csv":
        drawn.update(colormap=colormap or COLORMAP, size=[int(v) for v in size], titles=titles)
    if fmt == "png":
        drawn["scale"] = float(scale)
    return drawn


def ready_folder(folder: str | Path) -> Path:
    """folder, made if it is not there yet; ExportError if it cannot be made or written."""
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ExportError(f"{out}: cannot create the folder ({e.strerror})") from None
    if not writable(out):
        raise ExportError(f"{out}: folder is not writable")
    return out


def write_run_record(folder: str | Path, trace: Trace, model_name: str = "", **shaping) -> Path:
    """RUN_FILE (run_record) written into folder (made if need be), beside the figures; its path. shaping:
    run_record's temperature, top_k, lm and figures."""
    path = ready_folder(folder) / RUN_FILE
    write_text(path, run_record(trace, model_name, **shaping))
    return path


def heatmap_csv(spec: HeatmapSpec) -> str:
    """The raw matrix with key tokens as column headers and query tokens as row headers; a masked cell (a key the
    query may not attend to) is empty, as the heatmap leaves it blank, so that it is not read as a weight of 0."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["query \\ key", *spec.cols])
    for token, row, allowed in zip(spec.rows, spec.matrix, spec.mask):
        w.writerow([token, *(repr(float(x)) if ok else "" for x, ok in zip(row, allowed))])
    return buf.getvalue()


def read_heatmap_csv(path: str | Path) -> tuple[list[str], list[str], np.ndarray]:
    """(row labels, column labels, matrix) of a CSV written by heatmap_csv; masked (empty) cells are NaN."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    return [r[0] for r in rows[1:]], rows[0][1:], np.array([[float(x) if x else np.nan for x in r[1:]]
                                                            for r in rows[1:]])


def atomic_write(path: Path, write: Callable[[str], None]) -> None:
    """model.files.atomic_write (a hidden temporary file with path's ending, for writers that choose the format by
    it) with clear one-line errors."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ExportError(f"{path.parent}: is a file, not a folder" if path.parent.exists()
                          else f"{path.parent}: folder does not exist")
    try:
        files.atomic_write(path, write, prefix=f".{path.stem}.", suffix=path.suffix)
    except files.TemporaryFileError as e:
        raise ExportError(f"{path.parent}: cannot write here ({e.strerror})") from None
    except OSError as e:
        raise ExportError(f"{path}: could not be written ({e.strerror or e})") from None


def write_text(path: Path, text: str) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    atomic_write(path, write)


def write_bytes(path: Path, data: bytes) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    atomic_write(path, write)




def other_files(folder: str | Path, written: Iterable[Path]) -> int:
    """How many files in folder an export did not write: a researcher exported en-de's figures into a folder that
    held en-fr's under the same names, and nothing said that 75 of its 135 files were another sentence's."""
    mine = {Path(p).name for p in written}
    try:
        return sum(1 for f in Path(folder).iterdir() if f.is_file() and f.name not in mine)
    except OSError:
        return 0


def other_files_note(folder: str | Path, written: Iterable[Path]) -> str:
    """"" or the note on the files an export found in its folder (see other_files)."""
    n = other_files(folder, written)
    return "" if not n else (f"{folder} also holds {n} other file{'s' if n > 1 else ''}, not from this export "
                             "(an earlier one's figures may share these names' pattern)")


def writable(folder: str | Path) -> bool:
    """Whether files can be written into folder, tried (os.access says yes to root everywhere: see
    model.files.can_create_in)."""
    return os.access(folder, os.W_OK) and files.can_create_in(folder)


def export_heatmaps(specs: Iterable[HeatmapSpec], out_dir: str | Path, fmt: str = "png", scale: float = 1.0,
                    progress: Callable[[int, int], bool | None] | None = None,
                    colormap: str | None = None, size: tuple[int, int] = FIGURE_SIZE) -> list[Path]:
    """Write one file per spec into out_dir, in colormap (default: the app's), each figure size (width, height)
    pixels; the text keeps its size, so a smaller figure has relatively larger text (a paper's column).
    progress(done, total) may return False to cancel."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    out = ready_folder(out_dir)
    specs = list(specs)
    if fmt == "csv":
        written = []
        for i, spec in enumerate(specs):
            written.append(out / f"{spec.stem}.csv")
            write_text(written[-1], heatmap_csv(spec))
            if progress is not None and progress(i + 1, len(specs)) is False:
                break
        return written
    from .plotting.figure import HeatmapFigure     # Qt only when images are asked for
    from .plotting.render import encode_png
    figure = HeatmapFigure(*size)
    if colormap is not None:
        figure.set_colormap(colormap)
    # PNG encoding runs in worker threads (Qt releases the GIL) while the next figure is drawn
    pool = ThreadPoolExecutor(max_workers=2)
    jobs: list[tuple[Path, Future | None]] = []
    try:
        for i, spec in enumerate(specs):
            # at most two figures in the pool: a third queued behind a failing one had been begun after the failure
            # was known to the pool, and written (CI on a busy machine)
            running = [job for _, job in jobs if job is not None and not job.done()]
            if len(running) >= 2:
                wait(running, return_when=FIRST_COMPLETED)
            _raise_failed(jobs)       # the first failure stops the export (8 more figures came after it: QA)
            path = out / f"{spec.stem}.{fmt}"
            figure.show_spec(spec)
            if fmt == "png":
                image = figure.png_image(scale)
                jobs.append((path, pool.submit(lambda p, im: write_bytes(p, encode_png(im)), path, image)))
            else:
                write_bytes(path, figure.vector_bytes(fmt))
                jobs.append((path, None))
            if progress is not None and progress(i + 1, len(specs)) is False:
                break
        pool.shutdown(wait=True)
        _raise_failed(jobs)
    except ExportError as e:
        pool.shutdown(wait=True, cancel_futures=True)      # no figure is begun after the failure
        done = sum(1 for _, job in jobs if job is None or (job.done() and not job.cancelled()
                                                            and job.exception() is None))
        were = "figure was" if done == 1 else "figures were"
        raise ExportError(f"{e}; {done} of {len(specs)} {were} written before it stopped, each whole") from None
    finally:
        pool.shutdown(wait=True)
    return [path for path, _ in jobs]


def _raise_failed(jobs: list[tuple[Path, Future | None]]) -> None:
    """Re-raise the ExportError of a finished writer, if one failed."""
    for _, job in jobs:
        if job is not None and job.done() and not job.cancelled() and job.exception() is not None:
            raise job.exception()
