"""`attention-visualizer export TEXT --out DIR`: every attention heatmap of a sentence, without a display."""
from __future__ import annotations

import dataclasses
import sys

from model.command_line import (ArgumentParser, CommandError, UsageError, beam_width, check_stop, command, decimal,
                                model_argument, stops_between_steps, writable_folder)
from model.text import blank, why_blank

from .figure_size import FIGURE_SIZE, MIN_SIZE
from .headless import draw_offscreen
from .plotting.colormaps import COLORMAP, COLORMAPS, COLOUR_SCALES
from .translate_command import (ABLATE_HELP, BEAM_HELP, PROMPT_ONLY_HELP, ablate_arg, load_model_arg, output_line,
                                print_notes, run_settings, run_translation, target_arg)


def colour_arguments(p) -> None:
    """--colour-scale and --colormap, as `export` and `animate` take them."""
    p.add_argument("--colour-scale", default="layer", choices=list(COLOUR_SCALES),
                   help="what the colours span: " + "; ".join(f"{k}: {v}" for k, v in COLOUR_SCALES.items()))
    p.add_argument("--colormap", default=COLORMAP, choices=list(COLORMAPS), help="the colour map (colour-blind safe)")


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer export",
                       description="Export every attention head of every kind and layer for a sentence.")
    p.add_argument("text", help="the source sentence")
    p.add_argument("--out", required=True, help="folder to write into (created if missing)")
    p.add_argument("--format", default="png", choices=["png", "svg", "pdf", "csv"],
                   help="the figures' format (default png; csv: the numbers, a masked cell left empty)")
    model_argument(p)
    p.add_argument("--target", default=None, type=target_arg, help="teacher-force the decoder through this translation")
    p.add_argument("--scale", type=decimal, default=1.0, help="PNG resolution factor (2 = twice the pixels)")
    colour_arguments(p)
    p.add_argument("--size", default=f"{FIGURE_SIZE[0]}x{FIGURE_SIZE[1]}", metavar="WxH",
                   help="each figure's size in pixels at 96 dpi; the text keeps its size, so 450x380 suits a paper's "
                        "column (default %(default)s)")
    p.add_argument("--no-title", action="store_true", help="leave the title (sentence, model, layer, head) out")
    p.add_argument("--prompt-only", action="store_true", help=PROMPT_ONLY_HELP)
    p.add_argument("--beam", type=beam_width, default=1, help=BEAM_HELP)
    p.add_argument("--ablate", action="append", default=[], type=ablate_arg, metavar="KIND:LAYER:HEAD",
                   help=f"{ABLATE_HELP}; the figures' titles name them")
    a = p.parse_args(argv)
    if blank(a.text):
        raise UsageError(f"nothing to export: {why_blank(a.text, 'sentence')}")
    if not 0.1 <= a.scale <= 8:
        raise UsageError("--scale must be between 0.1 and 8")
    if a.scale != 1.0 and a.format != "png":        # (taken and ignored without a word: QA)
        print(f"note: --scale sets a PNG's pixels; {a.format.upper()} "
              + ("holds numbers, not pixels" if a.format == "csv" else "is drawn in vectors, sharp at any size"),
              file=sys.stderr)
    try:
        size = tuple(int(v) for v in a.size.lower().split("x"))
    except ValueError:
        size = ()
    # under 300 × 240 the matrix was a sliver beside its colour bar and axis titles (QA: 200 × 200 had none left)
    if len(size) != 2 or not (MIN_SIZE[0] <= size[0] <= 4000 and MIN_SIZE[1] <= size[1] <= 4000):
        raise UsageError(f"--size {a.size}: give WIDTHxHEIGHT in pixels, from {MIN_SIZE[0]}x{MIN_SIZE[1]} to "
                         f"4000x4000 (e.g. 450x380)")
    writable_folder(a.out)
    draw_offscreen()                                     # works without a display

    from .export import (RUN_FILE, ExportError, export_heatmaps, heatmap_specs, other_files_note,
                         figures_drawn, write_run_record)

    lm = load_model_arg(a.model)
    settings = run_settings(lm, a)
    result = run_translation(lm, a.text, a.ablate, settings=settings, target=a.target)
    print_notes(result, lm)
    # the output first: an export stopped before its last figure had left no line saying what it translated (QA);
    # --prompt-only's one new token is no continuation to speak of: the figures leave it out ("continuation: re", QA)
    if not a.prompt_only and (line := output_line(result)) is not None:
        print(line, flush=True)
    app = None
    if a.format != "csv":
        from PySide6 import QtWidgets
        app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["attention-visualizer export"])
    specs = heatmap_specs(result.trace, lm.name, colour_scale=a.colour_scale)
    if a.no_title:
        specs = [dataclasses.replace(s, title="") for s in specs]
    done = [0]

    def progress(n: int, total: int) -> None:
        done[0] = n
        if n < total:                    # a kill or Ctrl+C stops here, between two whole figures; after the last,
            check_stop()                 # once run.json is beside them
    record = None
    try:
        with stops_between_steps():
            # the run they show first: an export stopped by a full disk or Ctrl+C left whole figures and nothing
            # that said what they show (QA as a researcher)
            drawn = figures_drawn(a.format, a.colour_scale, a.colormap, size, a.scale, titles=not a.no_title)
            record = write_run_record(a.out, result.trace, a.model or lm.name, lm=lm, figures=drawn)
            written = export_heatmaps(specs, a.out, a.format, a.scale, colormap=a.colormap, size=size,
                                      progress=progress)
    except ExportError as e:
        also = f" ({RUN_FILE}, the run they show, is beside them)" if record and done[0] else ""
        raise CommandError(f"{e}{also}") from None
    except KeyboardInterrupt:
        also = f" with {RUN_FILE}, the run they show" if record else ""
        were = "was" if done[0] == 1 else "were"        # ("1 of 30 figures were written", QA)
        print(f"note: {done[0]} of {len(specs)} figures {were} written to {a.out}{also} before the stop; each is "
              "whole", file=sys.stderr)
        raise
    if record is not None:
        written.append(record)
    if note := other_files_note(a.out, written):
        print(f"note: {note}", file=sys.stderr)
    print(f"exported {len(written)} files to {a.out}")      # the last line, as README says
    del app
    return 0
