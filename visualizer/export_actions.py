"""The window's exports: the focused heatmap (right-click menu, Ctrl+E, copy) and every heatmap plus a picture of
every open panel into a folder (Export all)."""
from __future__ import annotations

import re
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from .export import (RUN_FILE, ExportError, export_heatmaps, figures_drawn, heatmap_csv, heatmap_specs, other_files,
                     writable, write_run_record, write_text)
from .folders import remember, start_folder
from .panels.registry import PANELS
from .plot_menu import PlotExport, PlotMenu, install_plot_menus


class ExportActions:
    last_total = 0                 # the heatmaps the last Export all was to write (fewer written: cancelled)
    finished: QtWidgets.QMessageBox | None = None      # the last Export all's closing box (see finished_box)

    def __init__(self, window):
        self.window = window
        attention = window.attention
        # right-click menus: the focused attention head as a titled figure, every other plot as it is on screen
        self.attention_menu = PlotMenu(attention.canvas, self.focused_export(),
                                       before=lambda pos: attention.focus_head_at(attention.canvas.mapToScene(pos)),
                                       after=attention.read_under_pointer)
        self.attention_menu.keyboard_at = attention.keyboard_point
        self.attention_menu.keyboard_after = attention.restore_cell
        for panel in window.panels.values():
            install_plot_menus(panel, window.figure_caption)

    def _focused_spec(self):
        w = self.window
        if w.trace is None:
            return None
        a = w.attention
        head = None if a.mean.isChecked() else a.shown_head
        for spec in heatmap_specs(w.trace, w.shown_model_name, colour_scale=a.colour_scale()):
            if spec.kind == a.shown_kind and spec.layer == a.shown_layer and spec.head == head:
                return spec
        return None

    def focused_export(self) -> PlotExport:
        """The focused heatmap as an export: a figure with title and colour bar, in the colours on screen."""
        def spec():
            found = self._focused_spec()
            if found is None:
                raise ExportError("there is no heatmap to export yet")
            return found

        def figure():
            from .plotting.figure import HeatmapFigure
            fig = HeatmapFigure()
            fig.set_colormap(self.window.attention.colormap)
            fig.show_spec(spec())                  # the colour scale the window shows (the same rule)
            return fig

        return PlotExport(lambda: spec().stem, lambda scale: figure().png_image(scale),
                          lambda fmt: figure().vector_bytes(fmt), lambda: heatmap_csv(spec()))

    def export_focused(self) -> None:
        """Ctrl+E: as the heatmap's "Save image as PNG…", at the screen's pixels (on a HiDPI screen it wrote half
        of the right-click's, QA)."""
        if self.window.trace is not None:
            self.attention_menu.save("png", self.attention_menu.view.devicePixelRatioF())

    def copy_focused(self) -> None:
        if self.window.trace is None:
            return
        self.attention_menu.copy()
        self.window.statusBar().showMessage("Heatmap copied to the clipboard", 4000)

    def export_all(self, folder: str, fmt: str = "png", progress=None) -> list[Path]:
        """Every head of every kind and layer, plus a PNG picture of every open panel (not for CSV) and the head
        metrics table (head_metrics.csv), into folder, and run.json (what they show; written first, so that a
        cancelled or failed export's figures have it beside them too, QA). The paths, run.json's last;
        last_heatmaps of last_total heatmaps were written."""
        w = self.window
        specs = heatmap_specs(w.trace, w.shown_model_name, colour_scale=w.attention.colour_scale())
        # the name --model opens (the label "qa/marian" opened nothing: QA), as the export command writes it,
        # and the temperature the Output panel's picture has (QA: T = 2 on screen, nothing said in run.json)
        output = w.panels.get("output")
        shaping = {"temperature": output.temperature, "top_k": output.cut} if output is not None else {}
        drawn = figures_drawn(fmt, w.attention.colour_scale(), w.attention.colormap)
        record = write_run_record(folder, w.trace, w.state.model_name, lm=w.lm, figures=drawn, **shaping)
        written = export_heatmaps(specs, folder, fmt, progress=progress, colormap=w.attention.colormap)
        self.last_total, self.last_heatmaps = len(specs), len(written)
        if progress is None or len(written) == len(specs):          # not cancelled
            if fmt != "csv":
                written += self._panel_pictures(Path(folder))
            written.append(self._metrics_table(Path(folder)))
        return written + [record]

    def _metrics_table(self, folder: Path) -> Path:
        """The head metrics of the run, as the Head metrics tab and the `metrics` command give them."""
        from model.ablation import ablated_heads
        from model.analysis.metrics import metrics_csv, trace_metrics
        from .panels.metrics import METRICS_FILE
        path = folder / METRICS_FILE
        panel = self.window.panels.get("metrics")     # its table when it shows this run: with the effects measured
        if panel is not None and panel.trace is self.window.trace:           # (they were left out: QA)
            write_text(path, panel.table_csv())
        else:
            write_text(path, metrics_csv(trace_metrics(self.window.trace), ablated_heads(self.window.trace)))
        return path

    def _panel_pictures(self, folder: Path) -> list[Path]:
        """A PNG of every open panel at the size of its place in the window, or its own when larger (a panel that
        scrolls in its place is pictured whole), and at least PANEL_PICTURE_WIDTH wide where a panel in a dock's
        scroll area can be laid out wider (render.laid_out_for_picture). A panel behind a tab is brought to
        the front for its picture (grabbed behind the tab it came out 160 × 120, the size it last had); the
        layout and the tabs in front before come back after. A lazy panel never opened has no picture: it would
        be built for it, and one with a wider minimum than its tab's would widen the window's dock area."""
        from .export import write_bytes
        from .plotting.render import captioned, encode_png, laid_out_for_picture, whole_picture
        w = self.window
        shown = {name: dock for name, dock in w.docks.items() if not dock.isHidden() and name in w.panels
                 and name not in NOT_PICTURED}
        # every dock in front comes back to the front, a panel not pictured too (Head metrics was left behind LayerNorm)
        in_front = [dock for name, dock in w.docks.items() if not dock.isHidden() and not dock.visibleRegion().isEmpty()]
        written = []
        try:
            for name, dock in shown.items():
                if w.isVisible() and dock.visibleRegion().isEmpty():
                    dock.raise_()
                    QtWidgets.QApplication.processEvents()       # laid out at its tab's size
                w.docking.render(name)           # a panel behind a tab may still show an older view
                # a panel with nothing to show, the Training step without a target, is no picture (its empty axes
                # were); asked once it shows this view (behind a tab it still said "no target", QA)
                if not getattr(w.panels[name], "has_content", lambda: True)():
                    continue
                path = folder / panel_file(name)
                own = getattr(w.panels[name], "figure_image", None)      # a figure of its own (the whole tree)
                picture = own() if callable(own) else None
                if picture is None:
                    with laid_out_for_picture(w.panels[name], PANEL_PICTURE_WIDTH if name in WIDE else 0):
                        picture = whole_picture(w.panels[name])
                    if name not in NAMES_ITS_RUNS:    # a line naming the run, as a plot saved alone has (QA)
                        picture = captioned(picture, w.figure_caption())
                write_bytes(path, encode_png(picture))
                written.append(path)
        finally:
            for dock in in_front:
                dock.raise_()
        return written

    def export_all_dialog(self) -> None:
        w = self.window
        if w.trace is None:
            return
        folder = QtWidgets.QFileDialog.getExistingDirectory(w, "Export every heatmap into a folder",
                                                            str(start_folder(w)))
        if not folder:
            return
        if not writable(folder):            # before the format is asked, and never remembered (QA as a teacher)
            w.error("Export failed", f"{folder}: this folder is not writable: choose another one")
            return
        remember(w, folder)
        choices = {"PNG images": "png", "SVG images (vector, for papers)": "svg",
                   "PDF documents (vector, for LaTeX)": "pdf", "CSV tables (the numbers)": "csv"}
        choice, ok = QtWidgets.QInputDialog.getItem(w, "Export every heatmap", "Save every heatmap as:",
                                                    list(choices), 0, False)
        if not ok:
            return
        fmt = choices[choice]
        written = with_progress(w, "Exporting heatmaps…", lambda progress: self.export_all(folder, fmt, progress),
                                "Export failed", ExportError)
        if written is None:
            return
        if self.last_heatmaps < self.last_total:         # cancelled: it had read as a whole export (QA)
            text = (f"Export cancelled: {self.last_heatmaps} of {self.last_total} heatmaps written, each whole, "
                    f"with {RUN_FILE}, to {folder}")
        else:
            text = f"Exported {len(written)} files to {folder}"
        if others := other_files(folder, written):
            text += f", which also holds {others} other file{'s' if others > 1 else ''}, not from this export"
        w.statusBar().showMessage(text, 12000)
        self.finished = finished_box(w, text, folder)


def finished_box(window, text: str, folder: str) -> QtWidgets.QMessageBox:
    """The end of an Export all, in a box that stays until closed, with a button that opens the folder: the status
    bar's message went after 12 seconds, and a teacher who had looked away during the minute's export never learnt
    whether it had worked, or where the files were (QA). Opened window-modal (open(), not exec(): the event loop
    and the caller go on), so that it is not lost behind the window."""
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Information, "Export all", text + ".",
                                QtWidgets.QMessageBox.StandardButton.Ok, window)
    box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    opener = box.addButton("Open folder", QtWidgets.QMessageBox.ButtonRole.ActionRole)
    opener.clicked.connect(lambda: open_folder(window, folder))
    # Esc closes it, as every box does (with an action button beside OK, Qt gave it no escape button: QA)
    box.setEscapeButton(box.button(QtWidgets.QMessageBox.StandardButton.Ok))
    box.open()
    return box


def open_folder(window, folder: str) -> None:
    """Open folder in the system's file manager, or say where it is: on a system with none (a minimal desktop), the
    button did nothing, and only stderr said why (QA)."""
    if QtGui.QDesktopServices.openUrl(QtCore.QUrl.fromLocalFile(folder)):
        return
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Information, "Export all",
                                f"No file manager could be started to open the folder. The files are in:\n\n{folder}",
                                QtWidgets.QMessageBox.StandardButton.Ok, window)
    box.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)    # to copy the path
    box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    window.not_opened = box


PANEL_PICTURE_WIDTH = 900       # Export all's panel pictures: at least this wide, whatever their docks' widths
# … those that can be laid out wider: in a scroll area, or roomy (a grid or table); the architecture map, a column
# of boxes, keeps its dock's size
WIDE = {entry.name for entry in PANELS if entry.scrolls or entry.roomy}
NAMES_ITS_RUNS = {"compare"}   # its titles name its two runs: a line naming the one on screen would mislead
NOT_PICTURED = {"metrics"}     # a table: head_metrics.csv holds it whole (its picture: 8 rows, 3 columns, scroll bars)


def panel_file(name: str) -> str:
    """Export all's file for a panel, named as its tab is ("panel_math.png", not the code's "panel_inspector")."""
    title = next((p.title for p in PANELS if p.name == name), name)
    return f"panel_{re.sub(r'[^a-z0-9]+', '_', title.lower()).strip('_')}.png"


def progress_dialog(parent, label: str):
    """(a window-modal progress dialog, progress(done, total) that moves it and returns False once cancelled)."""
    dialog = QtWidgets.QProgressDialog(label, "Cancel", 0, 1, parent)
    dialog.setWindowModality(QtCore.Qt.WindowModality.WindowModal)

    def progress(done, total):
        dialog.setMaximum(total)
        dialog.setValue(done)
        QtWidgets.QApplication.processEvents()
        return not dialog.wasCanceled()
    return dialog, progress


def with_progress(window, label: str, work, failure: str, errors):
    """work(progress) under a progress dialog; its result, or None once the error (one of errors) is shown. The
    dialog is closed before the message: a window-modal dialog left open covers the message box and its button."""
    dialog, progress = progress_dialog(window, label)
    try:
        return work(progress)
    except errors as e:
        message = str(e)
    finally:
        dialog.close()
    window.error(failure, message)
    return None
