"""Right-click on any plot: save it as PNG (screen size or 3× for print) or SVG, its numbers as CSV, or copy it.

A plot's numbers come from the plot itself: a heatmap gives its matrix with token labels as headers, a bar
chart or curve gives one row per point. Files are written atomically (see export.py).
"""
from __future__ import annotations

import csv
import html
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .export import ExportError, write_bytes, write_text
from .folders import remember, suggest, with_type
from .panels.widgets import FocusMark, shift_f10
from .plotting.render import captioned, encode_png, scene_image, scene_vector

PRINT_SCALE = 3          # "PNG for print": three times the pixels on screen (about 300 dpi on a slide)
MOST_PIXELS = 6000       # a saved picture's longest side at most (a plot's own figure can be large)


@dataclass
class PlotExport:
    """What the menu of one plot exports; the callables are asked when an entry is chosen (the newest view)."""
    name: Callable[[], str]                           # file name without extension
    image: Callable[[float], QtGui.QImage]            # the picture at a scale factor
    vector: Callable[[str], bytes]                    # the picture as "svg" or "pdf"
    table: Callable[[], str | None]                   # CSV text, or None when the plot holds no numbers


def file_stem(text: str) -> str:
    """A file name from a plot title: letters, digits, '-' and '_' only; the title's tags and entities read as
    what they show ("Step&nbsp;2" is "Step_2", a line break a gap)."""
    plain = html.unescape(re.sub(r"<br\s*/?>", " ", re.sub(r"<(?!br)[^>]+>", "", text)))
    stem = re.sub(r"[^\w\-]+", "_", plain, flags=re.ASCII).strip("_")
    return stem[:80] or "plot"


def matrix_csv(matrix: np.ndarray, rows: list[str], cols: list[str], corner: str = "row \\ column") -> str:
    """A matrix with column labels as the header and row labels in the first column; NaN (masked) as empty."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([corner, *cols])
    for label, row in zip(rows, np.asarray(matrix)):
        w.writerow([label, *("" if np.isnan(x) else repr(float(x)) for x in row)])
    return buf.getvalue()


def plot_table(plot: pg.PlotItem) -> str | None:
    """The numbers a plot draws: one row per bar or curve point (series, x, label, y)."""
    labels = {}
    for side in ("bottom", "left"):
        axis = plot.getAxis(side)
        if getattr(axis, "labels", None) is not None and len(getattr(axis, "positions", [])):
            labels[side] = dict(zip(np.round(axis.positions, 6), axis.labels))
    rows = []
    for n, item in enumerate(plot.items):
        if isinstance(item, pg.BarGraphItem):
            o = item.opts
            if o.get("x0") is not None and o.get("y") is not None and o.get("width") is not None:  # horizontal
                pos, val, side = o["y"], o["width"], "left"
            else:
                pos, val, side = o.get("x"), o.get("height"), "bottom"
            if pos is None or val is None:
                continue
            pos, val = np.broadcast_arrays(np.asarray(pos, float), np.asarray(val, float))
            for p, v in zip(pos, val):
                rows.append([f"bars {n + 1}", repr(float(p)), labels.get(side, {}).get(round(float(p), 6), ""),
                             repr(float(v))])
        elif isinstance(item, pg.PlotDataItem):
            x, y = item.getOriginalDataset()          # the numbers, not their logarithms on a log axis
            if x is None or y is None:
                continue
            name = item.name() or f"curve {n + 1}"
            for p, v in zip(x, y):
                rows.append([name, repr(float(p)), labels.get("bottom", {}).get(round(float(p), 6), ""),
                             repr(float(v))])
    if not rows:
        return None
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["series", "x", "label", "y"])
    w.writerows(rows)
    return buf.getvalue()


def run_caption(caption: Callable[[], str] | None, title: str, view=None) -> str:
    """The line naming the run a figure of a panel shows, unless its title holds it already, or the view
    names its own run in its figures (names_its_run: Compare runs' A is not the run on screen, a review)."""
    if getattr(view, "names_its_run", False):
        return ""
    text = caption() if caption is not None else ""
    # (a title quoting the sentence alone still gets it: a language model's "after “prompt”" had lost the model)
    return "" if not text or text in title else text


def box_export(box, caption: Callable[[], str] | None = None) -> PlotExport:
    """The export of a HeatmapBox (a panel's matrix: Compare runs, Rollout, Embeddings) as a figure, as the
    attention heatmaps are exported: 900 × 760 at 96 dpi with every label that fits, its colour map and scale, and
    a title that says what it shows (box.figure_title). The B − A matrix had been a 428 × 200 screen grab with half
    its row labels and nothing to say what A and B were (QA as a researcher). caption() names the run (the
    sentence and the model), added to a title that does not quote it yet."""
    from .plotting.figure import HeatmapFigure

    def title() -> str:
        own = box.figure_title() if box.figure_title is not None else box.title
        run = run_caption(caption, own, box)
        return f"{own} — {run}" if run else own

    def figure() -> HeatmapFigure:
        fig = HeatmapFigure(bar_label=box.bar_label, row_label=box.row_label, col_label=box.col_label)
        fig.set_colormap(box.heatmap.colormap)
        matrix = box.shown
        fig.show_matrix(matrix, ~np.isnan(matrix), box.rows, box.cols, title(), box.heatmap.levels)
        return fig

    def table() -> str | None:
        matrix = box.shown
        return None if matrix is None else matrix_csv(matrix, box.rows, box.cols, f"{box.row_label} \\ {box.col_label}")

    def image(scale: float) -> QtGui.QImage:
        return scene_image(box, scale) if box.shown is None else figure().png_image(scale)    # (nothing shown yet)

    def vector(fmt: str) -> bytes:
        if box.shown is None:
            return scene_vector(box.scene(), box.sceneRect(), fmt, title())
        return figure().vector_bytes(fmt)

    return PlotExport(lambda: file_stem(box.title or title()), image, vector, table)     # the short one as name


def widget_export(view: pg.GraphicsView, caption: Callable[[], str] | None = None) -> PlotExport:
    """The export of a plot widget as it is on screen; a heatmap (with .shown, .rows, .cols) gives its matrix, a
    widget with table_csv() its own table. A layout of several plots gives the numbers of each, one after the
    other. caption() names the run, in a line under a picture whose title does not quote its sentence."""
    from .plotting.plot_box import HeatmapBox
    if isinstance(view, HeatmapBox):
        return box_export(view, caption)

    def plots() -> list[pg.PlotItem]:
        if isinstance(view, pg.PlotWidget):
            return [view.getPlotItem()]
        found = [it for it in view.scene().items() if isinstance(it, pg.PlotItem)]
        return sorted(found, key=lambda p: (p.sceneBoundingRect().top(), p.sceneBoundingRect().left()))

    def title() -> str:
        for item in plots():
            text = getattr(item, "_shown_title", "") or item.titleLabel.text
            if text:
                return text
        return "plot"

    def table() -> str | None:
        own = getattr(view, "table_csv", None)          # a plot that is no matrix nor curves (the beam tree)
        if callable(own):
            return own()
        shown = getattr(view, "shown", None)
        if isinstance(shown, np.ndarray) and shown.ndim == 2:
            rows = getattr(view, "rows", []) or [str(i) for i in range(shown.shape[0])]
            cols = getattr(view, "cols", []) or [str(i) for i in range(shown.shape[1])]
            return matrix_csv(shown, rows, cols)
        parts = [t for t in (plot_table(p) for p in plots()) if t is not None]
        if not parts:
            return None
        return parts[0] + "".join(t.split("\n", 1)[1] for t in parts[1:])       # one header

    def drawn(draw: Callable[[pg.GraphicsView], object], vector: bool = False):
        """draw(the view a figure is drawn from): one of the plot's own where it makes one (the beam tree's whole
        tree, where the one on screen shows a part; larger for a vector file; gone after), else the one on screen."""
        own = getattr(view, "figure", None)
        shown = (own(vector) if callable(own) else None) or view
        try:
            return draw(shown)
        finally:
            if shown is not view:            # (the figure's own window, off screen)
                window = QtWidgets.QWidget.window(shown)
                window.hide()
                window.deleteLater()

    def vector(fmt: str) -> bytes:
        return drawn(lambda shown: scene_vector(shown.scene(), shown.sceneRect(), fmt, title(),
                                                shown.backgroundBrush().color().name(),
                                                run_caption(caption, title(), view)), vector=True)

    def image(scale: float) -> QtGui.QImage:
        def draw(shown: pg.GraphicsView) -> QtGui.QImage:
            # at most MOST_PIXELS a side: a whole beam tree of 4000 pixels "for print" (3×) was 550 MB (a review)
            fitted = min(scale, MOST_PIXELS / max(shown.width(), shown.height(), 1))
            return captioned(scene_image(shown, fitted), run_caption(caption, title(), view))
        return drawn(draw)

    return PlotExport(lambda: file_stem(title()), image, vector, table)


FILE_TYPES = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "pdf": "PDF document (*.pdf)",
              "csv": "CSV table (*.csv)"}
# picture and table types a name may be typed with that the app does not write: replaced by the chosen type's
OTHER_FILE_TYPES = {"jpg", "jpeg", "bmp", "gif", "tif", "tiff", "webp", "eps", "ps", "emf", "xlsx", "tsv", "txt"}


class PlotMenu(QtCore.QObject):
    """The right-click menu of one plot widget."""


    def __init__(self, view: QtWidgets.QWidget, export: PlotExport,
                 before: Callable[[QtCore.QPoint], None] | None = None, after: Callable[[], None] | None = None):
        super().__init__(view)
        self.view, self.export, self.before, self.after = view, export, before, after
        self.extra: Callable[[QtWidgets.QMenu], None] | None = None   # adds a room's own entries at the top
        view.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self.show_menu)
        self.focus_mark = FocusMark(view)            # where the keyboard is (Tab reaches every plot with a menu)
        # the menu from the keyboard: where it opens, and what is put back after it (the attention panel's cell
        # read by the arrow keys: the menu's grab took it away)
        self.keyboard_at: Callable[[], QtCore.QPoint] = lambda: self.view.rect().center()
        self.keyboard_after: Callable[[], None] | None = None
        view.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        """The Menu key, and Shift+F10 (what a laptop without a Menu key has, and GNOME's and Windows' key for
        it: it did nothing), open the menu where the keyboard is."""
        from_keys = shift_f10(event) or (event.type() == QtCore.QEvent.Type.ContextMenu
                                         and event.reason() == QtGui.QContextMenuEvent.Reason.Keyboard)
        if watched is self.view and from_keys:
            self.show_menu(self.keyboard_at(), keyboard=True)
            return True
        return False

    def build(self) -> QtWidgets.QMenu:
        menu = QtWidgets.QMenu(self.view)
        if self.extra is not None:
            self.extra(menu)
            menu.addSeparator()
        # the pixels on screen: on a high-DPI screen the device's (at 2× it saved half of them, while Export all's
        # panel pictures had them all; QA)
        menu.addAction("Save image as PNG…", lambda: self.save("png", self.view.devicePixelRatioF()))
        menu.addAction(f"Save image as PNG for print ({PRINT_SCALE}×)…", lambda: self.save("png", PRINT_SCALE))
        menu.addAction("Save image as SVG…", lambda: self.save("svg"))
        menu.addAction("Save image as PDF…", lambda: self.save("pdf"))
        if self.export.table() is not None:
            menu.addAction("Save numbers as CSV…", lambda: self.save("csv"))
        else:       # greyed out with no word of why (the model view's many heads; QA)
            menu.addAction("Save numbers as CSV: none here (File ▸ Export all… writes each head's)").setEnabled(False)
        menu.addSeparator()
        menu.addAction("Copy image", self.copy)
        return menu

    def show_menu(self, pos: QtCore.QPoint, keyboard: bool = False) -> None:
        if self.before is not None:
            self.before(pos)
        menu = self.build()
        menu.exec(self.view.mapToGlobal(pos))
        menu.deleteLater()                   # a child of the plot: one more at every right-click, else
        after = self.keyboard_after if keyboard else self.after
        if after is not None:        # the menu (and a dialog of its) has closed: the pointer may be elsewhere
            after()

    def save(self, fmt: str, scale: float = 1.0, path: str | None = None) -> Path | None:
        """Ask for a file name (unless path is given) and write the file; errors go to a dialog. In the dialog
        fmt is the format offered first: a name typed with another format's suffix (heat.svg) is saved in that
        format, else the chosen file type's."""
        instead = ""
        if path is None:
            formats = [f for f in FILE_TYPES if f != "csv" or self.export.table() is not None]
            suggestion = suggest(self.view.window(), f"{self.export.name()}.{fmt}")
            path, chosen = QtWidgets.QFileDialog.getSaveFileName(
                self.view, "Save plot", suggestion, ";;".join(FILE_TYPES[f] for f in formats), FILE_TYPES[fmt])
            if not path:
                return None
            typed = Path(path).suffix.lower().lstrip(".")
            fmt = typed if typed in formats else next((f for f in formats if FILE_TYPES[f] == chosen), fmt)
            if typed in OTHER_FILE_TYPES:         # "heat.jpg" was saved as "heat.jpg.png" (QA): "heat.png", said
                path, instead = str(Path(path).with_suffix("")), f" (as {fmt.upper()}: the app writes no .{typed})"
        target = with_type(path, f".{fmt}")
        try:
            write_plot(self.export, target, fmt, scale)
        except ExportError as e:
            QtWidgets.QMessageBox.warning(self.view.window(), "Could not save the plot", str(e))
            return None
        window = self.view.window()
        remember(window, target)
        if isinstance(window, QtWidgets.QMainWindow):
            window.statusBar().showMessage(f"Saved {target}{instead}", 12000 if instead else 8000)
        return target

    def copy(self) -> None:
        QtWidgets.QApplication.clipboard().setImage(self.export.image(self.view.devicePixelRatioF()))


def write_plot(export: PlotExport, path: Path, fmt: str, scale: float = 1.0) -> None:
    """Write one plot to exactly this path (temporary file, then rename)."""
    if fmt == "png":
        write_bytes(path, encode_png(export.image(scale)))
    elif fmt in ("svg", "pdf"):
        write_bytes(path, export.vector(fmt))
    elif fmt == "csv":
        text = export.table()
        if text is None:
            raise ExportError("this plot holds no numbers to save as CSV")
        write_text(path, text)
    else:
        raise ExportError(f"unknown format {fmt!r}: use png, svg, pdf or csv")


def install_plot_menus(panel: QtWidgets.QWidget, caption: Callable[[], str] | None = None) -> list[PlotMenu]:
    """A right-click menu on every plot widget inside panel that has none yet; caption() names the run shown."""
    menus = []
    for view in panel.findChildren(pg.GraphicsView):
        if view.contextMenuPolicy() != QtCore.Qt.ContextMenuPolicy.CustomContextMenu:
            menus.append(PlotMenu(view, widget_export(view, caption)))
    return menus
