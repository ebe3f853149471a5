"""Right-click menus on the plots: the files they write hold what the plot shows, and failures leave nothing."""
from __future__ import annotations

import csv
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from visualizer.export import ExportError, read_heatmap_csv
from visualizer.plot_menu import PRINT_SCALE, PlotMenu, file_stem, write_plot


def menu_texts(menu: PlotMenu) -> list[str]:
    return [a.text() for a in menu.build().actions() if a.text()]


def test_every_plot_of_every_panel_has_the_menu(window):
    import pyqtgraph as pg
    views = [v for panel in window.panels.values() for v in panel.findChildren(pg.GraphicsView)]
    assert len(views) >= 8
    for v in views:
        assert v.contextMenuPolicy() == QtCore.Qt.ContextMenuPolicy.CustomContextMenu, v
    texts = menu_texts(window.exports.attention_menu)
    a = window.attention             # the focused head's own entries first (visualizer/ablation_actions.py)
    label = window.trace.schema.kind(a.shown_kind).label
    assert texts == [f"Switch off {label}, layer {a.shown_layer + 1}, head {a.shown_head + 1}",
                     f"Switch off every head of {label}, layer {a.shown_layer + 1}",
                     f"Switch off every head of {label}, every layer",
                     "Every head back on",
                     "Save image as PNG…", f"Save image as PNG for print ({PRINT_SCALE}×)…", "Save image as SVG…",
                     "Save image as PDF…", "Save numbers as CSV…", "Copy image"]


def test_focused_head_csv_equals_the_trace(window, tmp_path):
    window.state.update(kind="cross", layer=1, head=1)
    path = window.exports.attention_menu.save("csv", path=str(tmp_path / "cross.csv"))
    rows, cols, matrix = read_heatmap_csv(path)
    assert rows == window.trace.tgt_tokens and cols == window.trace.src_tokens
    np.testing.assert_array_equal(matrix.astype(np.float32), window.trace.attention("cross", 1, 1))


def test_focused_head_png_for_print_and_svg(window, tmp_path):
    window.state.update(kind="dec_self", layer=0, head=0)
    png = window.exports.attention_menu.save("png", PRINT_SCALE, path=str(tmp_path / "head"))   # suffix added
    assert png.name == "head.png"
    image = QtGui.QImage(str(png))
    from visualizer.plotting.figure import HeatmapFigure
    assert image.width() == PRINT_SCALE * HeatmapFigure().widget.width()
    # tagged with PRINT_SCALE times the screen's dots per inch: placed in a document at the figure's size, not 3×
    dpi = QtGui.QGuiApplication.primaryScreen().logicalDotsPerInch()
    assert image.dotsPerMeterX() * 0.0254 == pytest.approx(PRINT_SCALE * dpi, rel=0.01)
    assert image.dotsPerMeterY() == image.dotsPerMeterX()
    svg = window.exports.attention_menu.save("svg", path=str(tmp_path / "head.svg"))
    text = svg.read_text(encoding="utf-8")
    assert ET.fromstring(text).tag.endswith("svg")
    assert "Decoder masked self-attention, layer 1, head 1" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["head.png", "head.svg"]


def test_the_dialog_offers_every_format_and_the_typed_suffix_decides(window, tmp_path, monkeypatch):
    """Typing heat.svg in Export focused heatmap's dialog (PNG first) wrote a PNG called heat.svg.png."""
    from PySide6 import QtWidgets
    answers, offered = [], []

    def dialog(parent, caption, suggestion, filters, chosen):
        offered.append((filters, chosen))
        return answers.pop(0)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", staticmethod(dialog))
    window.state.update(kind="cross", layer=0, head=0)
    menu = window.exports.attention_menu
    answers += [(str(tmp_path / "heat.svg"), "PNG image (*.png)"), (str(tmp_path / "table"), "CSV table (*.csv)"),
                (str(tmp_path / "plain"), "PNG image (*.png)"), (str(tmp_path / "fig.pdf"), "PNG image (*.png)")]
    svg = menu.save("png")
    assert svg.name == "heat.svg" and ET.fromstring(svg.read_text(encoding="utf-8")).tag.endswith("svg")
    assert offered[0] == ("PNG image (*.png);;SVG image (*.svg);;PDF document (*.pdf);;CSV table (*.csv)",
                          "PNG image (*.png)")
    rows, cols, matrix = read_heatmap_csv(menu.save("png"))                # no suffix: the chosen file type
    np.testing.assert_array_equal(matrix.astype(np.float32), window.trace.attention("cross", 0, 0))
    png = menu.save("svg")
    assert png.name == "plain.png" and QtGui.QImage(str(png)).width() > 100
    assert offered[2][1] == "SVG image (*.svg)"
    assert window.statusBar().whole_message() == f"Saved {png}"
    pdf = menu.save("png")                 # typed fig.pdf: a PDF (it was written as fig.pdf.png, a PNG)
    assert pdf.name == "fig.pdf" and pdf.read_bytes().startswith(b"%PDF-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.pdf", "heat.svg", "plain.png", "table.csv"]
    # a picture type the app does not write: the chosen type's suffix instead, said (it wrote "shot.jpg.png", QA)
    answers += [(str(tmp_path / "shot.jpg"), "PNG image (*.png)"), (str(tmp_path / "fig.v2"), "PNG image (*.png)")]
    png = menu.save("png")
    assert png.name == "shot.png" and png.read_bytes().startswith(b"\x89PNG")
    assert window.statusBar().whole_message() == f"Saved {png} (as PNG: the app writes no .jpg)"
    assert menu.save("png").name == "fig.v2.png"                         # a dot in a name is the name's


def test_saving_under_a_new_name_leaves_other_files_alone(window, tmp_path):
    """The focused export once wrote <stem>.png first and renamed it: a file of that name was lost."""
    keep = tmp_path / "encoder_self_L1_H1.png"
    keep.write_bytes(b"keep me")
    window.state.update(kind="enc_self", layer=0, head=0)
    window.exports.attention_menu.save("png", path=str(tmp_path / "mine.png"))
    assert keep.read_bytes() == b"keep me"
    assert (tmp_path / "mine.png").stat().st_size > 1000


def test_bar_chart_csv_holds_the_bars(window, tmp_path):
    window.state.update(stack="enc", layer=0, sublayer="self")
    ln = window.panels["layernorm"]
    window.docking.render("layernorm", force=True)
    menu = PlotMenu(ln.mu_plot, __import__("visualizer.plot_menu", fromlist=["x"]).widget_export(ln.mu_plot))
    path = menu.save("csv", path=str(tmp_path / "mu.csv"))
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["series", "x", "label", "y"]
    assert [float(r[3]) for r in rows[1:]] == pytest.approx(window.trace.get("enc", 0, "self", "ln_mean").tolist(),
                                                          abs=1e-6)
    assert [r[2] for r in rows[1:]] == ln.mu_plot.item.getAxis("bottom").labels


def test_heatmap_panel_csv_has_token_headers(window, tmp_path):
    window.state.update(stack="src_embed")
    emb = window.panels["embeddings"]
    window.docking.render("embeddings", force=True)
    from visualizer.plot_menu import widget_export
    path = PlotMenu(emb.maps["pe"], widget_export(emb.maps["pe"])).save("csv", path=str(tmp_path / "pe.csv"))
    rows, cols, matrix = read_heatmap_csv(path)
    assert rows == emb.maps["pe"].rows
    np.testing.assert_allclose(matrix, emb.arrays["pe"], atol=1e-6)


def test_unwritable_folder_is_a_clear_error_and_leaves_nothing(window, tmp_path, monkeypatch):
    import errno
    import model.files as files

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(files.tempfile, "mkstemp", refuse)          # root may write anywhere: refuse as a folder would
    with pytest.raises(ExportError, match="cannot write here"):
        write_plot(window.exports.focused_export(), tmp_path / "x.png", "png")
    assert list(tmp_path.iterdir()) == []


def test_full_disk_is_a_clear_error_and_leaves_no_partial_file(window, tmp_path, monkeypatch):
    import errno
    import visualizer.export as export

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(export.os, "fsync", full)
    with pytest.raises(ExportError, match="No space left"):
        write_plot(window.exports.focused_export(), tmp_path / "x.svg", "svg")
    assert list(tmp_path.iterdir()) == []


def test_missing_folder_is_a_clear_error(window, tmp_path):
    with pytest.raises(ExportError, match="folder does not exist"):
        write_plot(window.exports.focused_export(), tmp_path / "nope" / "x.csv", "csv")
    (tmp_path / "afile").write_text("")                        # a file where the folder should be: said so
    with pytest.raises(ExportError, match="afile: is a file, not a folder"):
        write_plot(window.exports.focused_export(), tmp_path / "afile" / "x.csv", "csv")


def test_file_stem_from_titles():
    assert file_stem("mean μ of v, per token") == "mean_of_v_per_token"
    assert file_stem("<b>bold</b> / x") == "bold_x"
    assert file_stem("μσ") == "plot"
    assert file_stem("Step&nbsp;2: predicting token&nbsp;3<br>after “&lt;s&gt; ich”") == "Step_2_predicting_token_3_after_s_ich"


def test_a_plot_with_the_keyboard_shows_a_frame(qtbot, window):
    """Tab reached the heatmap and the LayerNorm plots and nothing showed it (QA, keyboard only): a frame in the
    highlight colour while a plot has the focus, none otherwise."""
    canvas = window.attention.canvas
    mark = next(m for m in canvas.children() if type(m).__name__ == "FocusMark")
    window.inputs.sentence.setFocus()
    qtbot.waitUntil(window.inputs.sentence.hasFocus)
    assert not mark.isVisible()
    canvas.setFocus()
    qtbot.waitUntil(lambda: mark.isVisible())
    assert mark.geometry() == canvas.rect()
    image = canvas.grab().toImage()
    highlight = window.palette().highlight().color()
    edge = image.pixelColor(2, image.height() // 2)
    assert abs(edge.red() - highlight.red()) + abs(edge.green() - highlight.green()) + \
        abs(edge.blue() - highlight.blue()) < 40
    window.inputs.sentence.setFocus()
    qtbot.waitUntil(lambda: not mark.isVisible())


def test_a_plots_png_has_the_screens_pixels_on_a_high_dpi_screen(window, tmp_path, monkeypatch):
    """At 2× scale "Save image as PNG…" (screen size) saved the plot's logical size, half the pixels on screen,
    while Export all's panel pictures had them all."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    from visualizer.plot_menu import PlotMenu
    view = window.panels["output"].findChildren(pg.GraphicsView)[0]
    menu = view.findChildren(PlotMenu)[0]
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a: (str(tmp_path / "bars.png"), "PNG image (*.png)")))
    for ratio in (1.0, 2.0):
        monkeypatch.setattr(view, "devicePixelRatioF", lambda ratio=ratio: ratio)
        next(a for a in menu.build().actions() if a.text() == "Save image as PNG…").trigger()
        assert QtGui.QImage(str(tmp_path / "bars.png")).width() == round(view.width() * ratio)


def test_a_view_of_many_heads_says_why_it_has_no_numbers_to_save(qtbot, window):
    """The model view's menu had "Save numbers as CSV…" greyed out, with no word of why (QA as a student)."""
    import pyqtgraph as pg

    from visualizer.plot_menu import PlotMenu, widget_export
    window.docking.go_to("model_view")
    panel = window.panels["model_view"]
    qtbot.waitUntil(lambda: bool(panel.findChildren(pg.GraphicsView)))
    view = panel.findChildren(pg.GraphicsView)[0]
    menu = PlotMenu(view, widget_export(view)).build()
    act = next(a for a in menu.actions() if a.text().startswith("Save numbers as CSV"))
    assert not act.isEnabled() and act.text() == "Save numbers as CSV: none here (File ▸ Export all… writes each head's)"


def test_ctrl_e_and_copy_give_the_heatmaps_screen_pixels_as_its_menu_does(window, tmp_path, monkeypatch):
    """QA at Qt scale 2: Ctrl+E wrote 900 × 760 where the heatmap's "Save image as PNG…" wrote 1800 × 1520."""
    from PySide6 import QtWidgets
    menu = window.exports.attention_menu
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a: (str(tmp_path / "heat.png"), "PNG image (*.png)")))
    sizes = {}
    for ratio in (1.0, 2.0):
        monkeypatch.setattr(menu.view, "devicePixelRatioF", lambda ratio=ratio: ratio)
        window.exports.export_focused()
        sizes[ratio] = QtGui.QImage(str(tmp_path / "heat.png")).size()
        next(a for a in menu.build().actions() if a.text() == "Save image as PNG…").trigger()
        assert QtGui.QImage(str(tmp_path / "heat.png")).size() == sizes[ratio]
        window.exports.copy_focused()
        assert QtWidgets.QApplication.clipboard().image().size() == sizes[ratio]
    assert sizes[2.0] == sizes[1.0] * 2


def test_the_output_distributions_csv_names_its_columns(window, tmp_path):
    """QA as a researcher: its CSV read "series,x,label,y" and "bars 1,0.0,<unk>,0.0953": which number was the
    probability, and at which step and temperature, it did not say."""
    from visualizer.plot_menu import widget_export
    window.inputs.temperature.setValue(2.0)
    panel = window.panels["output"]
    window.state.update(step=1)
    window.docking.render("output", force=True)
    path = PlotMenu(panel.box, widget_export(panel.box)).save("csv", path=str(tmp_path / "out.csv"))
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    probs = window.trace.probs(1, 2.0)
    assert len(rows) == len(panel.bar_ids) >= 3
    for row in rows:
        i = int(row["token_id"])
        assert float(row["probability"]) == pytest.approx(probs[i]) and row["token"] == panel.label(i)
        assert int(row["rank"]) == int((probs > probs[i]).sum()) + 1 and row["step"] == "1"
        assert row["temperature"] == "2.0" and row["top_k"] == "0"
    assert [int(r["rank"]) for r in rows[:3]] == [1, 2, 3]


def test_a_panels_figure_names_the_sentence_and_the_model(window, tmp_path):
    """A saved output distribution, rollout or embeddings map said neither sentence nor model: two sentences' figures
    read the same (QA, a teacher's handout). A picture has a line under it naming the run, at its scale; a vector
    figure the same line; a panel's heatmap figure has it in its title, as exported heatmaps do."""
    import pyqtgraph as pg

    from visualizer.plotting.render import caption_height, scene_image
    run = f"“the cat sat on the mat” ({window.model_name})"      # as the heatmaps' figures name it
    assert window.figure_caption() == run
    view = window.panels["output"].findChildren(pg.GraphicsView)[0]
    menu = view.findChildren(PlotMenu)[0]
    for scale in (1.0, PRINT_SCALE):
        plain, image = scene_image(view, scale), menu.export.image(scale)
        assert image.width() == plain.width()
        assert image.height() - plain.height() == pytest.approx(caption_height() * scale, abs=1.5)
        band = [image.pixelColor(x, y).value() for y in range(plain.height(), image.height())
                for x in range(0, image.width() // 2, 2)]
        assert min(band) < 100 and plain.height() > 0                  # the line's letters: dark on the white
    svg = menu.export.vector("svg").decode("utf-8")          # a narrow plot: the sentence cut, the model kept
    assert f"“the c" in svg and f"” ({window.model_name})</text>" in svg
    window.state.update(stack="src_embed")
    window.docking.render("embeddings", force=True)
    emb = window.panels["embeddings"].maps["pe"]
    path = PlotMenu(emb, __import__("visualizer.plot_menu", fromlist=["x"]).widget_export(
        emb, window.figure_caption)).save("svg", path=str(tmp_path / "pe.svg"))
    assert f"{emb.title} — {run}" in path.read_text(encoding="utf-8")
    # a caption too long for its plot keeps the model: its sentence is cut in the middle (it was cut at the end,
    # and the model's name went with it: QA)
    from visualizer.plotting.render import caption_font, fitted_caption
    metrics = QtGui.QFontMetricsF(caption_font())
    long = "“The little girl who lives next to the old railway station is eating a big red apple today.” (en-fr)"
    fitted = fitted_caption(long, metrics, 300)
    assert fitted.startswith("“The") and fitted.endswith("today.” (en-fr)") and "…" in fitted
    assert metrics.horizontalAdvance(fitted) <= 300


def test_a_compare_runs_figure_is_not_named_after_the_run_on_screen(window, qtbot, tmp_path):
    """Compare runs' A is the pinned run, not the one on screen: its figure had "— “the dog sat” (tiny)" added,
    B's sentence (a review). Its title names its own run, and nothing is added."""
    window.docking.go_to("compare")
    compare = window.panels["compare"]
    compare.pin()
    window.inputs.sentence.setText("the dog sat")
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the dog sat" and not window.runs.runner.busy)
    window.docking.render("compare", force=True)
    menu = compare.a.findChildren(PlotMenu)[0]
    path = menu.save("svg", path=str(tmp_path / "a.svg"))
    text = path.read_text(encoding="utf-8")
    assert "the cat sat on the mat" in text and "the dog sat" not in text



def test_a_language_models_line_is_kept_under_a_title_that_quotes_its_prompt_and_keeps_its_model():
    """A GPT-2's output distribution at its first written step is titled "… after “prompt”": the line naming the run
    had been left out as if the title held it, and on a narrow picture "+ 19 tokens it wrote" pushed the model out
    of the line (QA)."""
    from visualizer.plot_menu import run_caption
    from visualizer.plotting.render import caption_font, fitted_caption
    line = "“the cat sat on the mat .” + 19 tokens it wrote (qa/gpt2, beam 4)"
    assert run_caption(lambda: line, "Step 6: predicting token 7 after “the cat sat on the mat .”") == line
    assert run_caption(lambda: line, f"Rollout — {line}") == ""
    metrics = QtGui.QFontMetricsF(caption_font())
    fitted = fitted_caption(line, metrics, 230)
    assert fitted.endswith("” (qa/gpt2, beam 4)") and metrics.horizontalAdvance(fitted) <= 230
