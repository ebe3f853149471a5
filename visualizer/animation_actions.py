"""File ▸ Export animation…: the attention panel's kind over generation steps, layers or heads as a GIF (or
MP4), frames drawn like the PNG export, in the colour map on screen, with a progress dialog."""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtGui, QtWidgets

from .animation import OVER, animation_specs, check_output, render_frames, write_animation
from .export import ExportError
from .export_actions import with_progress
from .folders import remember, suggest, with_type


class AnimationActions:
    def __init__(self, window):
        self.window = w = window
        file_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&File")
        self.action = QtGui.QAction("Export animation…", w)
        self.action.triggered.connect(self.dialog)
        file_menu.insertAction(file_menu.actions()[-2], self.action)      # above the separator before Quit

    def specs(self, over: str):
        """The frames of the attention panel's kind, layer and head (or mean) over steps, layers or heads."""
        w, a = self.window, self.window.attention
        head = None if a.mean.isChecked() and over != "heads" else a.shown_head
        return animation_specs(w.trace, a.shown_kind, over, a.shown_layer, head, w.model_name, a.colour_scale())

    def export(self, path: str | Path, over: str, progress=None) -> int:
        """Write the animation; the number of frames (0 when cancelled). ValueError / ExportError: one line."""
        check_output(path)
        frames = render_frames(self.specs(over), colormap=self.window.attention.colormap, progress=progress)
        if frames is None:
            return 0
        write_animation(frames, path)
        return len(frames)

    def dialog(self) -> None:
        w = self.window
        if w.trace is None:
            return
        # steps only for a decoder's rows: an encoder kind offered them first and refused after the file was named
        choices = [o for o in OVER if o != "steps" or w.trace.schema.kind(w.attention.shown_kind).by_step]
        over, ok = QtWidgets.QInputDialog.getItem(w, "Export animation", "One frame per:", choices, 0, False)
        if not ok:
            return
        path, chosen = QtWidgets.QFileDialog.getSaveFileName(w, "Export animation",
                                                             suggest(w, animation_name(self.specs(over), over)),
                                                             "GIF animation (*.gif);;MP4 video (*.mp4)")
        if not path:
            return
        if Path(path).suffix.lower() not in (".gif", ".mp4"):
            path = str(with_type(path, ".mp4" if "mp4" in chosen else ".gif"))
        remember(w, path)
        n = with_progress(w, "Drawing frames…", lambda progress: self.export(path, over, progress),
                          "Cannot export the animation", (ValueError, ExportError))
        if n:
            w.statusBar().showMessage(f"Wrote {n} frames to {path}", 8000)


def animation_name(specs, over: str) -> str:
    """A file name saying what an animation shows, as Export all names its heads: cross_L2_H1_steps.gif,
    cross_H1_layers.gif, cross_L2_heads.gif ("attention-steps.gif" named none of them, QA as a teacher)."""
    first = specs[0]
    head = "mean" if first.head is None else f"H{first.head + 1}"
    parts = {"steps": (f"L{first.layer + 1}", head), "layers": (head,), "heads": (f"L{first.layer + 1}",)}[over]
    return "_".join((first.file, *parts, over)) + ".gif"
