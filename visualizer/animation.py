"""Animations of attention: one frame per generation step, layer or head of one attention kind, drawn by the same
figure code as the PNG export (plotting/figure.py), written as GIF (imageio with Pillow) or MP4 (imageio's
ffmpeg writer, when imageio-ffmpeg is installed), through a temporary file renamed into place (export.py).

    frames = animation_specs(trace, "cross", over="steps", layer=1, head=0)
    write_animation(frames, "cross.gif", fps=2, progress=lambda done, total: True)
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from .export import ExportError, HeatmapSpec, atomic_write, heatmap_specs

OVER = ("steps", "layers", "heads")
FORMATS = (".gif", ".mp4")
MIN_WIDTH = 400


def animated_kind(schema, kind: str, over: str, layer: int = 0, head: int | None = 0):
    """The schema's attention kind an animation shows, once its kind, layer and head are checked against the model's
    shape (before the model runs: `animate --layer 99` printed the run's notes first, QA); ValueError in one line."""
    try:
        info = schema.kind_called(kind)
    except KeyError as e:
        raise ValueError(e.args[0]) from None
    if over not in OVER:
        raise ValueError(f"--over must be one of {', '.join(OVER)}")
    n_layers = schema.stack(info.stack).n_layers
    if not 0 <= layer < n_layers:
        raise ValueError(f"{info.name}: no layer {layer + 1} (it has {n_layers})")
    if head is not None and not 0 <= head < schema.n_heads:
        raise ValueError(f"{info.name}: no head {head + 1} (it has {schema.n_heads})")
    if over == "steps" and not info.by_step:
        raise ValueError(f"{info.title} has no generation steps (its rows are not a decoder's): animate over "
                         "layers or heads")
    return info


def animation_specs(trace, kind: str, over: str, layer: int = 0, head: int | None = 0,
                    model_name: str = "", colour_scale: str = "layer") -> list[HeatmapSpec]:
    """The frames' heatmaps (layer and head 0-based; head None = mean of heads): over "heads" every head of the
    layer, over "layers" the head in every layer, over "steps" the head with the rows of steps 0..t only; each
    with the colour levels a still export of it has (colour_scale: COLOUR_SCALES).
    ValueError (one line) when the kind, layer or head does not exist, or the kind has no generation steps."""
    info = animated_kind(trace.schema, kind, over, layer, head)
    kind = info.name
    specs = [s for s in heatmap_specs(trace, model_name, colour_scale=colour_scale) if s.kind == kind]
    if over == "heads":
        return [s for s in specs if s.layer == layer and s.head is not None]
    if over == "layers":
        return [s for s in specs if s.head == head]
    base = next(s for s in specs if s.layer == layer and s.head == head)
    frames = []
    n = base.matrix.shape[0]
    # a decoder-only model's prompt was given, not generated: its rows are there from the first frame on, which is
    # the step that predicts the continuation's first token (its rows were hatched "not generated yet", QA)
    for t in range(min(trace.prompt_rows(), n - 1), n):
        shown = np.zeros_like(base.mask)
        shown[: t + 1] = base.mask[: t + 1]                  # rows not generated yet: masked
        rows = base.rows[: t + 1] + [""] * (len(base.rows) - t - 1)      # tokens not generated yet: unnamed
        # as keys too, where the keys are the rows' own tokens (a decoder's self-attention named them all)
        cols = rows[: len(base.cols)] + [""] * (len(base.cols) - len(rows)) if base.cols == base.rows else base.cols
        # the step on a line of its own, its numbers bound to their words: the title broke at "step" in some
        # frames and not in others, and its first line moved (QA)
        frames.append(replace(base, mask=shown, rows=rows, cols=cols,
                              title=f"{base.title}\nstep\u00a0{t}: predicting token\u00a0{t + 1}"))
    return frames


def check_output(path: str | Path) -> Path:
    """The animation's file: .gif, or .mp4 when imageio's ffmpeg writer is installed; ValueError if not."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{path}: the animation must be a .gif or .mp4 file")
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise ValueError('MP4 needs imageio\'s ffmpeg writer: pip install -e ".[video]" (imageio-ffmpeg); '
                             "a .gif needs nothing more") from None
    return path


def shared_levels(specs: list[HeatmapSpec]) -> tuple[float, float]:
    """The colour levels of every frame of an animation: 0 … the highest of the frames' own."""
    return 0.0, max([float(s.levels[1]) for s in specs] + [1e-6]) if specs else (0.0, 1.0)


def render_frames(specs: list[HeatmapSpec], width: int = 900, height: int = 760, colormap: str | None = None,
                  progress: Callable[[int, int], bool | None] | None = None) -> list[np.ndarray] | None:
    """Each spec drawn by the export figure, as (height, width, 3) uint8 RGB; None when progress said stop.
    Every frame has the same colour levels: 0 … the highest of the frames' own (a still export's), so that a step's
    frame colours as the PNG of its head does (it had taken the head's own largest weight, not the layer's), and the
    frames of several layers share one scale."""
    from .plotting.figure import HeatmapFigure
    from .plotting.render import scene_image
    figure = HeatmapFigure(max(width, MIN_WIDTH), height)
    if colormap:
        figure.set_colormap(colormap)
    top = shared_levels(specs)[1]
    if len(specs) > 1:
        # the axes as wide and tall as the fullest frame's, in every frame: a step's longer token ("heureuse")
        # moved the matrix 20 to 36 pixels sideways in the GIF (QA as a teacher)
        last = specs[-1]
        figure.show_matrix(last.matrix, last.mask, last.rows, last.cols, last.title, levels=(0.0, max(top, 1e-6)))
        left, bottom = figure.plot.getAxis("left"), figure.plot.getAxis("bottom")
        left.setWidth(left.width())
        bottom.setHeight(bottom.height())
    frames = []
    for i, spec in enumerate(specs):
        figure.show_matrix(spec.matrix, spec.mask, spec.rows, spec.cols, spec.title, levels=(0.0, max(top, 1e-6)))
        frames.append(qimage_rgb(scene_image(figure.widget)))
        if progress is not None and progress(i + 1, len(specs) + 1) is False:
            return None
    return frames


def qimage_rgb(image) -> np.ndarray:
    """A QImage as a (height, width, 3) uint8 array."""
    from PySide6 import QtGui
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    w, h, stride = image.width(), image.height(), image.bytesPerLine()
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=stride * h).reshape(h, stride)
    return data[:, : 3 * w].reshape(h, w, 3).copy()


def write_animation(frames: list[np.ndarray], path: str | Path, fps: float = 2.0) -> Path:
    """The frames as a GIF (looping) or MP4, written atomically; ExportError (one line) when it cannot be."""
    import imageio.v3 as iio
    path = Path(path)
    if not frames:
        raise ExportError("no frames to write")

    def write(tmp: str) -> None:
        if path.suffix.lower() == ".gif":     # encoded in memory: a full disk fails in a plain write, not inside
            data = iio.imwrite("<bytes>", np.stack(frames), extension=".gif", duration=1000 / fps, loop=0)
            Path(tmp).write_bytes(data)       # imageio's writer, whose clean-up would print a second traceback
        else:       # video codecs want sides divisible by 16: pad with the figure's white, never rescale
            import imageio
            h, w = frames[0].shape[:2]
            pad = ((0, -h % 16), (0, -w % 16), (0, 0))
            imageio.mimwrite(tmp, [np.pad(f, pad, constant_values=255) for f in frames], format="FFMPEG", fps=fps)

    atomic_write(path, write)
    return path
