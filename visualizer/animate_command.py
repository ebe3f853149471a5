"""`attention-visualizer animate TEXT --kind KIND --over steps|layers|heads --out FILE.gif|.mp4`: one frame per
generation step, layer or head, without a display."""
from __future__ import annotations

import sys

from model.command_line import (ArgumentParser, CommandError, UsageError, beam_width, check_stop, command, decimal,
                                model_argument, stops_between_steps, writable_file)
from model.text import blank, why_blank

from .export_command import colour_arguments
from .headless import draw_offscreen
from .translate_command import (ABLATE_HELP, BEAM_HELP, ablate_arg, load_model_arg, print_notes, run_settings,
                                run_translation, target_arg)


def layer_arg(text: str) -> int:
    """--layer: a number from 1; 0-based inside."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: a number from 1")
    return value - 1


def head_arg(text: str):
    """--head: a number from 1, or 'mean' (the mean of the heads); 0-based inside (None for the mean)."""
    return None if text.strip().lower() == "mean" else layer_arg(text)


@command
def main(argv: list[str] | None = None) -> int:
    from .animation import OVER
    p = ArgumentParser(prog="attention-visualizer animate",
                       description="An animation of one attention kind over generation steps, layers or heads.")
    p.add_argument("text", help="the source sentence")
    p.add_argument("--kind", required=True, help="attention kind by its short name (enc_self, dec_self, cross …) or as in "
                   "exported file names (encoder_self …)")
    p.add_argument("--over", required=True, choices=OVER, help="one frame per step, layer or head")
    # not given: -1 (the first layer, the first head); one given where the animation goes over every one is an error
    p.add_argument("--layer", type=layer_arg, default=-1, help="the layer, from 1 (for --over steps or heads; default 1)")
    p.add_argument("--head", type=head_arg, default=-1,
                   help="the head, from 1, or 'mean' (for --over steps or layers; default 1)")
    p.add_argument("--out", required=True, help="FILE.gif (or FILE.mp4 with imageio-ffmpeg installed)")
    p.add_argument("--fps", type=decimal, default=2.0, help="frames per second (default 2)")
    colour_arguments(p)
    model_argument(p)
    p.add_argument("--target", default=None, type=target_arg, help="teacher-force the decoder through this translation")
    p.add_argument("--beam", type=beam_width, default=1, help=BEAM_HELP)
    p.add_argument("--ablate", action="append", default=[], type=ablate_arg, metavar="KIND:LAYER:HEAD",
                   help=ABLATE_HELP)
    a = p.parse_args(argv)
    if blank(a.text):
        raise UsageError(f"nothing to animate: {why_blank(a.text)}")
    if not 0.1 <= a.fps <= 60:
        raise UsageError("--fps must be between 0.1 and 60")
    from .animation import animated_kind, animation_specs, check_output, render_frames, write_animation
    try:
        check_output(a.out)
    except ValueError as e:
        raise UsageError(str(e)) from None
    writable_file(a.out, "--out")
    if a.over == "heads" and a.head != -1:
        raise UsageError("--over heads shows every head: --head does not apply")
    if a.over == "layers" and a.layer != -1:
        raise UsageError("--over layers shows every layer: --layer does not apply (--head chooses the head)")
    layer, head = max(a.layer, 0), (0 if a.head == -1 else a.head)
    draw_offscreen()                                     # works without a display
    lm = load_model_arg(a.model)
    try:
        animated_kind(lm.schema, a.kind, a.over, layer, head)      # before the model runs and prints its notes
    except ValueError as e:
        raise UsageError(str(e)) from None
    result = run_translation(lm, a.text, a.ablate, settings=run_settings(lm, a), target=a.target)
    trace = result.trace
    print_notes(result, lm)
    try:
        specs = animation_specs(trace, a.kind, a.over, layer, head, lm.name, a.colour_scale)
    except ValueError as e:
        raise UsageError(str(e)) from None
    from PySide6 import QtWidgets
    from tqdm import tqdm

    from .export import ExportError
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["attention-visualizer animate"])
    with tqdm(total=len(specs), desc="frames", unit="frame", file=sys.stderr, leave=False) as bar, \
            stops_between_steps():       # a kill or Ctrl+C stops between two frames (Qt draws them)
        def progress(_done: int, _total: int) -> None:
            bar.update(1)
            check_stop()
        frames = render_frames(specs, colormap=a.colormap, progress=progress)
    try:
        write_animation(frames, a.out, a.fps)
    except ExportError as e:
        raise CommandError(str(e)) from None
    del app
    print(f"wrote {len(frames)} frames to {a.out}")
    return 0
