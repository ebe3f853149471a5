"""File ▸ Export all: every head of every kind and layer plus a picture of each open panel, cancellable."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from visualizer.export import heatmap_specs, read_heatmap_csv
from visualizer.export_actions import panel_file
from visualizer.plotting.render import laid_out_for_picture, whole_picture


def show_sentence(qtbot, window, text):
    window.inputs.sentence.setText(text)
    qtbot.waitUntil(lambda: window.trace is not None and window.trace.meta.get("sentence") == text, timeout=20000)


def test_export_all_writes_every_head_and_current_panels(qtbot, window, tmp_path):
    show_sentence(qtbot, window, "the dog runs")
    window.state.update(stack="enc", layer=0, sublayer="self")
    window.docks["embeddings"].raise_()                 # the LayerNorm panel is now behind a tab
    window.docks["metrics"].raise_()
    qtbot.waitUntil(lambda: "metrics" in window.panels)
    window.docks["embeddings"].raise_()
    show_sentence(qtbot, window, "we eat bread")
    written = window.exports.export_all(str(tmp_path), "png")
    specs = heatmap_specs(window.trace, window.lm.name)
    names = {p.name for p in written}
    assert {f"{s.stem}.png" for s in specs} <= names
    open_panels = {panel_file(n) for n, d in window.docks.items() if not d.isHidden() and n in window.panels
                   and n != "metrics"}
    assert open_panels <= names and "panel_layernorm.png" in names
    assert panel_file("metrics") not in names       # a table: head_metrics.csv has it whole, not 8 rows of it
    assert panel_file("inspector") == "panel_math.png" and panel_file("flow") == "panel_rollout_and_lines.png"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    for p in written:
        assert p.name in ("head_metrics.csv", "run.json") or not QtGui.QImage(str(p)).isNull(), p
    # the panel behind the tab was brought up to date before its picture was taken
    assert window.panels["layernorm"].tokens == window.trace.src_tokens


def test_export_all_csv_equals_the_trace_and_has_no_pictures(window, tmp_path):
    written = window.exports.export_all(str(tmp_path), "csv")
    assert all(p.suffix == ".csv" for p in written if p.name != "run.json") and written[-1].name == "run.json"
    rows, cols, m = read_heatmap_csv(tmp_path / "encoder_self_L2_H2.csv")
    assert rows == cols == window.trace.src_tokens
    np.testing.assert_array_equal(m.astype(np.float32), window.trace.attention("enc_self", 1, 1))


def test_cancelling_stops_early_and_writes_no_panels(window, tmp_path):
    calls = []

    def progress(done, total):
        calls.append((done, total))
        return done < 3                                  # the user presses Cancel after the third file
    written = window.exports.export_all(str(tmp_path), "png", progress)
    assert len(written) == 4 and calls[-1][0] == 3 and window.exports.last_heatmaps == 3
    assert written[-1].name == "run.json"                # what the three show, beside them (QA)
    assert not any(p.name.startswith("panel_") for p in tmp_path.iterdir())


def test_a_panel_behind_a_tab_is_pictured_at_its_tab_size_and_the_tabs_come_back(qtbot, window, tmp_path):
    """Behind a tab, a panel's picture was the 160 × 120 it last had: a useless crop."""
    show_sentence(qtbot, window, "the dog runs")
    window.resize(1400, 900)
    groups = [(dock, window.tabifiedDockWidgets(dock)) for dock in window.docks.values() if not dock.isHidden()]
    front, behind = next((d, sib) for d, sib in groups if sib and not d.visibleRegion().isEmpty())
    qtbot.waitUntil(lambda: front.widget().width() > 150 and front.widget().height() > 150)
    name = {dock: n for n, dock in window.docks.items()}
    window.docks["embeddings"].raise_()               # opened once, then behind its tab again
    qtbot.waitUntil(lambda: "embeddings" in window.panels)
    front.raise_()
    qtbot.waitUntil(lambda: window.docks["embeddings"].visibleRegion().isEmpty())
    built = [d for d in behind if name[d] in window.panels]
    assert built and len(built) < len(behind)           # some lazy panels were never opened
    before = front.size()
    written = {p.name for p in window.exports.export_all(str(tmp_path), "png")}
    size = front.widget().size()                          # the place of the panels of this tab group
    for dock in [front, *built]:
        picture = QtGui.QImage(str(tmp_path / panel_file(name[dock])))
        panel = window.panels[name[dock]]
        r = picture.devicePixelRatio()      # the panel whole, and charts that scroll inside it whole too
        assert picture.width() >= panel.width() * r and picture.height() >= panel.height() * r, name[dock]
        assert picture.width() >= size.width() - 20 and picture.height() >= size.height() - 20, name[dock]
    assert {panel_file(name[d]) for d in behind if d not in built}.isdisjoint(written)
    assert all(name[d] not in window.panels for d in behind if d not in built)       # and were not built for it
    assert not front.visibleRegion().isEmpty() and all(d.visibleRegion().isEmpty() for d in behind)
    assert front.size() == before


def test_the_export_all_dialog_names_its_formats_and_writes_the_chosen_one(qtbot, window, tmp_path, monkeypatch):
    from PySide6 import QtWidgets
    asked = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", staticmethod(lambda *a: str(tmp_path)))

    def choose(parent, title, label, items, current, editable):
        asked.append((title, label, items))
        return next(i for i in items if i.startswith("CSV")), True
    monkeypatch.setattr(QtWidgets.QInputDialog, "getItem", staticmethod(choose))
    window.exports.export_all_dialog()
    assert asked[0][0] == "Export every heatmap" and [i.split()[0] for i in asked[0][2]] == ["PNG", "SVG", "PDF", "CSV"]
    written = sorted(p.suffix for p in tmp_path.iterdir())
    assert written and set(written) == {".csv", ".json"} and (tmp_path / "run.json").is_file()
    assert window.statusBar().whole_message() == f"Exported {len(written)} files to {tmp_path}"


def test_every_export_colours_as_the_window_does(qtbot, window, tmp_path, monkeypatch):
    """Ctrl+E used the window's scale (0 … 0.39) and Export all a fixed 0 … 1 and viridis whatever the Colours menu
    said (QA): both now follow the menu, and the focused figure's scale is the one on screen."""
    import visualizer.export_actions as actions
    from visualizer.plotting import figure as figure_module
    seen = []
    real = actions.export_heatmaps
    monkeypatch.setattr(actions, "export_heatmaps", lambda specs, *a, **k: seen.append((list(specs), k)) or
                        real(specs, *a, **k))
    shown = []
    show = figure_module.HeatmapFigure.show_matrix
    monkeypatch.setattr(figure_module.HeatmapFigure, "show_matrix", lambda self, *a: shown.append(a) or show(self, *a))
    a = window.attention
    window.state.update(kind="cross", layer=1, head=1)
    for rule, cmap in (("layer", "magma"), ("head", "cividis"), ("one", "viridis")):
        a.set_colour_scale(rule)
        a.set_colormap(cmap)
        window.state.update(head=0)
        window.state.update(head=1)
        weights = window.trace.attention("cross", 1)
        top = {"layer": weights.max(), "head": weights[1].max(), "one": 1.0}[rule]
        assert a.focus.levels == (0.0, pytest.approx(float(top)))
        window.exports.export_all(str(tmp_path / rule), "png")
        specs, kwargs = seen[-1]
        assert kwargs["colormap"] == cmap
        focused = next(s for s in specs if (s.kind, s.layer, s.head) == ("cross", 1, 1))
        assert focused.levels == pytest.approx(a.focus.levels)
        shown.clear()
        window.exports.focused_export().image(1.0)
        assert shown and shown[-1][5] == pytest.approx(a.focus.levels)


def test_a_panel_that_scrolls_in_its_place_is_pictured_whole(qtbot, window, tmp_path):
    """In a short window the LayerNorm panel scrolls in its dock: its picture stopped halfway down its first chart
    (384 × 217, QA as a teacher)."""
    from visualizer.window import SETTLE_MS
    show_sentence(qtbot, window, "the dog runs")
    window.resize(1200, 520)
    dock, panel = window.docks["layernorm"], window.panels["layernorm"]
    dock.raise_()
    qtbot.wait(2 * SETTLE_MS)       # the headers fitted again once the run has stood (the panel 211 → 168 pixels:
    # the test passed or failed with the machine's speed)
    viewport = dock.widget().viewport()
    qtbot.waitUntil(lambda: panel.height() > viewport.height() + 10)     # it scrolls
    window.exports.export_all(str(tmp_path), "png")
    picture = QtGui.QImage(str(tmp_path / "panel_layernorm.png"))
    assert picture.height() >= panel.height() * picture.devicePixelRatio() > viewport.height() + 10


def test_charts_that_scroll_inside_a_panel_are_pictured_whole_without_the_scroll_bar(qtbot, window, tmp_path,
                                                                                     monkeypatch):
    """At 1366 × 768 the LayerNorm panel fits its dock but its charts scroll inside it: Export all's picture showed
    the first chart and a half, and the scroll bar. The picture holds every chart, as the charts' own picture
    shows them, and what lies above them as the panel shows it (at the dock's width, for this test)."""
    from visualizer.plotting.render import caption_height
    monkeypatch.setattr("visualizer.export_actions.PANEL_PICTURE_WIDTH", 0)
    show_sentence(qtbot, window, "the dog runs")
    window.resize(1366, 768)
    dock, panel = window.docks["layernorm"], window.panels["layernorm"]
    dock.raise_()
    grid = panel.grid
    qtbot.waitUntil(lambda: grid.widget().height() > grid.viewport().height() + 100)     # the charts scroll
    assert grid.verticalScrollBar().isVisible()
    window.exports.export_all(str(tmp_path), "png")
    picture = QtGui.QImage(str(tmp_path / "panel_layernorm.png")).convertToFormat(QtGui.QImage.Format.Format_RGB32)
    r = picture.devicePixelRatio()
    top = round(grid.mapTo(panel, grid.rect().topLeft()).y() * r)
    charts = grid.widget().grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    band = round(caption_height() * r)                # and the line under it naming the run
    assert picture.height() == round((panel.height() - grid.height()) * r) + charts.height() + band
    left = grid.mapTo(panel, grid.rect().topLeft()).x()
    assert picture.width() == round(max(panel.width(), panel.width() - grid.width() + charts.width() / r) * r)
    assert picture.copy(round(left * r), top, charts.width(), charts.height()) == charts
    above = panel.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    assert picture.copy(0, 0, above.width(), top) == above.copy(0, 0, above.width(), top)


def test_the_status_says_when_export_all_was_cancelled_or_found_other_files(qtbot, window, tmp_path, monkeypatch):
    """A cancelled Export all said "Exported 44 files to …" like a finished one; the folder's files of an earlier
    export went unmentioned."""
    from visualizer import export_actions

    (tmp_path / "older.png").write_bytes(b"x")
    monkeypatch.setattr(export_actions.QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path))
    monkeypatch.setattr(export_actions.QtWidgets.QInputDialog, "getItem", lambda *a, **k: ("CSV tables (the numbers)",
                                                                                          True))
    real = export_actions.progress_dialog

    def cancelling(parent, label):
        dialog, _ = real(parent, label)
        return dialog, lambda done, total: done < 3              # Cancel after the third file
    monkeypatch.setattr(export_actions, "progress_dialog", cancelling)
    window.exports.export_all_dialog()
    total = len(heatmap_specs(window.trace, window.lm.name))
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["sentence"] == window.trace.meta["sentence"]
    bar = window.statusBar()                         # (the whole message in the tooltip when the bar is too narrow)
    assert bar.whole_message() == (
        f"Export cancelled: 3 of {total} heatmaps written, each whole, with run.json, to {tmp_path}, which also holds "
        "1 other file, not from this export")
    monkeypatch.setattr(export_actions, "progress_dialog", real)
    window.exports.export_all_dialog()
    written = len(list(tmp_path.iterdir())) - 1
    assert bar.whole_message() == (
        f"Exported {written} files to {tmp_path}, which also holds 1 other file, not from this export")


def test_head_metrics_in_front_stays_in_front(qtbot, window, tmp_path):
    """Head metrics is not pictured (head_metrics.csv holds the table): it was left behind the tab brought forward
    for another panel's picture."""
    show_sentence(qtbot, window, "the dog runs")
    window.resize(1400, 900)
    metrics = window.docks["metrics"]
    metrics.raise_()
    qtbot.waitUntil(lambda: not metrics.visibleRegion().isEmpty())
    window.exports.export_all(str(tmp_path), "png")
    qtbot.waitUntil(lambda: not metrics.visibleRegion().isEmpty(), timeout=3000)


def test_export_all_keeps_the_measured_effects_and_names_the_model_as_it_opens(qtbot, window, tmp_path):
    """Export all wrote head_metrics.csv without the effects just measured in the Head metrics tab (it computed the
    table again from the run), and run.json named the model by its label ("models0/tiny"), which --model cannot
    open (QA). The table is the tab's, and the model is named as the window opened it."""
    import json

    from model import load
    from model.analysis.head_effects import head_effects
    window.docks["metrics"].raise_()
    qtbot.waitUntil(lambda: "metrics" in window.panels)
    panel = window.panels["metrics"]
    window.docking.render("metrics", force=True)
    panel.model.set_effects(head_effects(window.lm, window.trace))
    window.exports.export_all(str(tmp_path), "csv")
    table = (tmp_path / "head_metrics.csv").read_text(encoding="utf-8")
    assert table == panel.table_csv() and "effect_logp" in table.splitlines()[0]
    record = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert record["model"] == window.state.model_name and load(record["model"]).name == window.lm.name
    # which weights, and how the figures were drawn (the window's colour scale and map)
    assert [w["file"] for w in record["model_details"]["weights"]] == ["model.safetensors"]
    assert record["figures"] == {"format": "csv", "colour_scale": window.attention.colour_scale()}
    assert record["tokens"]["output"] == window.trace.out_tokens


def test_export_all_ends_in_a_box_that_stays_and_an_unwritable_folder_is_refused_first(qtbot, window, tmp_path,
                                                                                      monkeypatch):
    """QA as a teacher: the status bar's "Exported 141 files to …" went after 12 seconds, and she had looked away
    during the minute's export; a read-only folder was refused only after the format was asked, and was then the
    next dialogs' first folder. The end is said in a box with an Open folder button, which stays until closed; a
    folder that cannot be written is refused before anything else, and not remembered."""
    from PySide6 import QtWidgets

    from visualizer import export_actions
    chosen = [str(tmp_path)]
    asked = []
    monkeypatch.setattr(export_actions.QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: chosen[0])
    monkeypatch.setattr(export_actions.QtWidgets.QInputDialog, "getItem",
                        lambda *a, **k: asked.append(a) or ("CSV tables (the numbers)", True))
    opened = []
    monkeypatch.setattr(export_actions.QtGui.QDesktopServices, "openUrl",
                        lambda url: opened.append(url.toLocalFile()) or True)
    window.exports.export_all_dialog()
    box = window.exports.finished
    written = len(list(tmp_path.iterdir()))
    assert box.isVisible() and box.text() == f"Exported {written} files to {tmp_path}."
    opener = next(b for b in box.buttons() if b.text() == "Open folder")
    opener.click()
    assert opened == [str(tmp_path)] and getattr(window, "not_opened", None) is None
    # a system with no file manager: the button had done nothing, only stderr said why (QA); a box says where
    monkeypatch.setattr(export_actions.QtGui.QDesktopServices, "openUrl", lambda url: False)
    window.exports.export_all_dialog()
    next(b for b in window.exports.finished.buttons() if b.text() == "Open folder").click()
    assert window.not_opened.isVisible() and window.not_opened.text().endswith(f"The files are in:\n\n{tmp_path}")
    window.not_opened.close()
    assert window.settings.get("folder") == str(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = export_actions.writable
    monkeypatch.setattr(export_actions, "writable", lambda folder: folder != str(locked))   # (root writes anywhere)
    chosen[0] = str(locked)
    n_asked = len(asked)
    window.exports.export_all_dialog()
    assert len(asked) == n_asked and not list(locked.iterdir())         # no format asked, nothing written
    assert window.last_error == f"{locked}: this folder is not writable: choose another one"
    assert window.settings.get("folder") == str(tmp_path)               # the folder that failed is not remembered
    assert not real(str(tmp_path / "missing")) and real(str(tmp_path)) and not real("/proc")
    QtWidgets.QApplication.processEvents()


def test_panel_pictures_are_wide_whole_and_laid_out_before_they_are_taken(qtbot, window, tmp_path, monkeypatch):
    """At 1366 × 768 Export all's pictures had their docks' sizes: Embeddings 409 pixels wide with its axis titles
    over its tokens (its plots below the fold never painted, so their axes had not measured their labels), the
    Math tab cut at its dock's height with its scroll bar, LayerNorm's histogram titles over their own tops."""
    import visualizer.plotting.render as render
    from visualizer.export_actions import PANEL_PICTURE_WIDTH
    from visualizer.plotting.plot_box import PlotBox
    show_sentence(qtbot, window, "the little girl is eating an apple")
    window.resize(1366, 768)
    for name in ("embeddings", "inspector", "layernorm"):
        window.docks[name].raise_()
        qtbot.waitUntil(lambda n=name: n in window.panels and window.panels[n].width() > 150)
    panels = {name: window.panels[name] for name in ("embeddings", "inspector", "layernorm")}
    before = {name: panel.size() for name, panel in panels.items()}
    assert all(size.width() < PANEL_PICTURE_WIDTH for size in before.values())
    text = panels["inspector"].findChild(QtWidgets.QTextEdit)
    assert text.verticalScrollBar().maximum() > 0                   # the Math tab scrolls in its dock

    def layout(panel) -> list[tuple]:
        """Each plot's left axis width and title row height."""
        return [(box.title, round(box.item.getAxis("left").width(), 1), box.item.layout.rowMaximumHeight(0))
                for box in panel.findChildren(PlotBox) if box.isVisible()]

    pictured = {}       # each panel's plots before its picture was painted and after: painting moved nothing

    def picture(panel):
        laid_out = layout(panel)
        image = panel_picture(panel)
        pictured[panel] = (laid_out, layout(panel))
        return image
    panel_picture = render._panel_picture
    monkeypatch.setattr(render, "_panel_picture", picture)
    window.exports.export_all(str(tmp_path), "png")
    for name, panel in panels.items():
        image = QtGui.QImage(str(tmp_path / panel_file(name)))
        assert image.width() >= PANEL_PICTURE_WIDTH * image.devicePixelRatio(), name
        assert panel.size() == before[name] and panel.parentWidget().parentWidget().widgetResizable(), name
        assert pictured[panel][0] == pictured[panel][1], name
    math = QtGui.QImage(str(tmp_path / panel_file("inspector")))
    # the whole text at the picture's width: as tall as its document laid out at that width
    text.document().setTextWidth(PANEL_PICTURE_WIDTH - 40)
    assert math.height() >= text.document().size().height() * math.devicePixelRatio()


def test_the_math_tab_is_pictured_without_scroll_bars_whatever_its_width(qtbot, window, tmp_path, monkeypatch):
    """The Math tab's table, wider than the picture's least width, was cut on the right, its horizontal scroll bar
    in the picture (QA): the picture is as wide and as tall as the text."""
    import visualizer.plotting.render as render
    monkeypatch.setattr("visualizer.export_actions.PANEL_PICTURE_WIDTH", 300)
    show_sentence(qtbot, window, "the little girl is eating an apple")
    window.resize(1100, 700)
    window.docks["inspector"].raise_()
    qtbot.waitUntil(lambda: "inspector" in window.panels and window.panels["inspector"].width() > 150)
    panel = window.panels["inspector"]
    text = panel.findChild(QtWidgets.QTextEdit)
    qtbot.waitUntil(lambda: text.horizontalScrollBar().maximum() > 0 and text.verticalScrollBar().maximum() > 0)
    bars = {}

    def picture(shown):
        if shown is panel:
            bars["at the picture"] = (text.horizontalScrollBar().maximum(), text.verticalScrollBar().maximum())
        return panel_picture(shown)
    panel_picture = render._panel_picture
    monkeypatch.setattr(render, "_panel_picture", picture)
    window.exports.export_all(str(tmp_path), "png")
    assert bars["at the picture"] == (0, 0)
    image = QtGui.QImage(str(tmp_path / panel_file("inspector")))
    assert image.width() > 300 * image.devicePixelRatio()


def test_a_scrolled_panel_is_pictured_whole_on_a_high_dpi_screen_too(qtbot, window, monkeypatch):
    """QA on a HiDPI screen (Qt scale 2): Export all's LayerNorm and Embeddings pictures were their canvas' size
    with their content in its top-left quarter: pictures of two device pixels a point, drawn at one."""
    from PySide6 import QtCore
    import visualizer.plotting.render as render
    show_sentence(qtbot, window, "the little girl is eating an apple")
    window.resize(1100, 700)
    window.docks["layernorm"].raise_()
    qtbot.waitUntil(lambda: "layernorm" in window.panels and window.panels["layernorm"].width() > 150)
    panel = window.panels["layernorm"]
    area = next(a for a in panel.findChildren(QtWidgets.QScrollArea) if a.isVisible() and a.widget() is not None)
    qtbot.waitUntil(lambda: area.widget().height() > area.viewport().height())      # a chart below the fold
    grab = QtWidgets.QWidget.grab

    def at_ratio(ratio):
        def grabbed(widget, *args):
            image = QtGui.QImage(widget.size() * ratio, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
            image.setDevicePixelRatio(ratio)
            image.fill(QtCore.Qt.GlobalColor.transparent)
            QtWidgets.QWidget.render(widget, image)          # (a panel has a render of its own)
            return QtGui.QPixmap.fromImage(image)
        monkeypatch.setattr(QtWidgets.QWidget, "grab", grabbed)
        try:
            return render._panel_picture(panel)
        finally:
            monkeypatch.setattr(QtWidgets.QWidget, "grab", grab)

    def ink(image):
        """Each quarter's share of pixels that are not the panel's background."""
        image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
        pixels = pixels[:, :image.width(), :3].astype(int)
        background = panel.palette().color(QtGui.QPalette.ColorRole.Window)
        drawn = np.abs(pixels - [background.blue(), background.green(), background.red()]).sum(-1) > 30
        h, w = drawn.shape
        return np.array([drawn[:h // 2, w // 2:].mean(), drawn[h // 2:, :w // 2].mean(),
                         drawn[h // 2:, w // 2:].mean()])

    one, two = at_ratio(1), at_ratio(2)
    assert (two.width(), two.height()) == (2 * one.width(), 2 * one.height()) and two.devicePixelRatio() == 2
    np.testing.assert_allclose(ink(two), ink(one), atol=0.05)   # the same drawing, at twice the pixels
    assert ink(one).min() > 0.05


def test_run_json_says_the_temperature_the_output_distribution_is_pictured_at(qtbot, window, tmp_path):
    """QA as a researcher: at T = 2 the Output panel's picture showed softmax(logits / 2), and run.json said
    "greedy" only."""
    import json
    window.exports.export_all(str(tmp_path / "one"), "csv")
    assert "output_distribution" not in json.loads((tmp_path / "one" / "run.json").read_text(encoding="utf-8"))
    window.inputs.temperature.setValue(2.0)
    qtbot.waitUntil(lambda: window.panels["output"].temperature == 2.0, timeout=5000)
    window.exports.export_all(str(tmp_path / "two"), "csv")
    record = json.loads((tmp_path / "two" / "run.json").read_text(encoding="utf-8"))
    assert record["output_distribution"] == {"temperature": 2.0} and record["decoding"] == "greedy"


def test_the_training_step_is_pictured_only_with_a_target(qtbot, window, tmp_path):
    """QA as a teacher: Export all wrote the Training step tab without a target, empty axes of 0 … 1 nats and
    d_model −100 … 100 under the words that ask for one."""
    window.docks["training"].raise_()
    qtbot.waitUntil(lambda: "training" in window.panels)
    window.exports.export_all(str(tmp_path / "none"), "png")
    assert not (tmp_path / "none" / panel_file("training")).exists()
    assert (tmp_path / "none" / panel_file("layernorm")).exists()
    window.docks["layernorm"].raise_()                 # behind a tab, it still showed "no target" (QA)
    window.inputs.target.setText("le chat")
    qtbot.waitUntil(lambda: window.trace.meta.get("mode") == "teacher-forced" and not window.runs.runner.busy,
                    timeout=20000)
    window.exports.export_all(str(tmp_path / "given"), "png")
    assert (tmp_path / "given" / panel_file("training")).exists()


def test_the_model_views_picture_is_wide_and_shows_no_metrics_of_a_head_hovered_before(qtbot, window, tmp_path):
    """The Model view, straight in its dock (no scroll area), was pictured at the dock's 409 × 360, and the metrics
    of the head last hovered stayed under it, into the picture (QA). Its picture is 900 wide at least, the panel
    back at its size after, and the text under it the hint once the pointer has left the heads."""
    from visualizer.export_actions import PANEL_PICTURE_WIDTH
    from visualizer.panels.model_view import MODEL_VIEW_HINT
    show_sentence(qtbot, window, "the little girl is eating an apple")
    window.resize(1366, 768)
    window.docks["model_view"].raise_()
    qtbot.waitUntil(lambda: "model_view" in window.panels and window.panels["model_view"].shape[0] > 0)
    panel = window.panels["model_view"]
    before = panel.size()
    assert before.width() < PANEL_PICTURE_WIDTH
    panel._hovered(panel.plot.vb.mapViewToScene(panel.tile_rect(1, 1).center()))
    assert panel.hover.text().startswith("Layer 2, head 2:")
    panel._hovered(panel.plot.vb.mapViewToScene(QtCore.QPointF(-50, -50)))      # the pointer off the heads
    assert panel.hover.text() == MODEL_VIEW_HINT
    window.exports.export_all(str(tmp_path), "png")
    image = QtGui.QImage(str(tmp_path / panel_file("model_view")))
    assert image.width() >= PANEL_PICTURE_WIDTH * image.devicePixelRatio()
    qtbot.waitUntil(lambda: panel.size() == before)
    arch = QtGui.QImage(str(tmp_path / panel_file("architecture")))
    assert arch.width() < PANEL_PICTURE_WIDTH * arch.devicePixelRatio()          # a column of boxes, at its dock's


def test_export_alls_panel_pictures_name_their_run(qtbot, window, tmp_path, monkeypatch):
    """A plot saved alone had a line naming its run, and Export all's panel pictures had none (QA): each has it
    under its panel, but Compare runs', whose titles name its two runs."""
    from visualizer.plotting import render
    captions = []
    real = render.captioned
    monkeypatch.setattr(render, "captioned", lambda image, text: captions.append(text) or real(image, text))
    window.resize(1400, 900)
    window.docking.go_to("compare")
    window.panels["compare"].pin()
    window.docking.go_to("output")
    written = {p.name for p in window.exports.export_all(str(tmp_path), "png")}
    pictures = [name for name in written if name.startswith("panel_")]
    assert panel_file("output") in pictures and panel_file("compare") in pictures
    assert captions and set(captions) == {window.figure_caption()}
    assert len(captions) == len(pictures) - 1                      # all but Compare runs'
