"""Exported heatmaps: files that parse, numbers equal to the Trace, clean failures that leave nothing behind."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtCore

from model import load, translate
from visualizer.export import (ExportError, export_heatmaps, heatmap_specs, read_heatmap_csv,
                               write_bytes)


@pytest.fixture(scope="module")
def trace(tiny_lm):
    return translate(tiny_lm, "the cat sat on the mat", target="le chat était assis sur le tapis").trace


def test_specs_cover_every_head_kind_and_layer(trace):
    specs = heatmap_specs(trace, "tiny")
    H, L = trace.n_heads, trace.n_layers("enc")
    assert len(specs) == 3 * L * (H + 1)
    names = {s.stem for s in specs}
    assert {"encoder_self_L1_H1", "decoder_self_L2_H2", "cross_L2_mean"} <= names
    assert len(names) == len(specs)


def test_a_right_to_left_override_in_the_sentence_stays_inside_its_quotes(tiny_lm):
    """QA: a U+202E in the sentence drew the rest of a figure's title backwards, the model's name "(treb/sledom…)"
    too. A figure's title quotes the sentence without its direction controls, in the axes' order (it had drawn
    "sat" as "tas", QA); Compare runs' label isolates it (FSI … PDI); the text after it is the label's own."""
    from visualizer.panels.compare import run_label
    from visualizer.text_safety import FSI, PDI
    sentence = "the cat \u202etas"
    trace = translate(tiny_lm, sentence).trace
    for title in [s.title for s in heatmap_specs(trace, "tiny")]:
        assert "“the cat tas” (tiny)" in title and "\u202e" not in title
    assert f"“{FSI}{sentence}{PDI}”" in run_label(trace)
    plain = translate(tiny_lm, "the cat sat").trace                # nothing to isolate: the title as it was
    assert "“the cat sat”" in heatmap_specs(plain, "tiny")[0].title


def test_each_colour_scale_rule_spans_what_it_says(trace):
    """layer: 0 … the layer's largest weight (every head and the mean alike, as the window colours them);
    head: 0 … each matrix's own largest; one: 0 … 1."""
    for scale in ("layer", "head", "one"):
        for spec in heatmap_specs(trace, "tiny", colour_scale=scale):
            weights = trace.attention(spec.kind, spec.layer)
            top = {"layer": weights.max(), "head": spec.matrix.max(), "one": 1.0}[scale]
            assert spec.levels == (0.0, pytest.approx(float(top)))
    layer_tops = {s.levels[1] for s in heatmap_specs(trace, colour_scale="layer") if s.kind == "cross" and s.layer == 0}
    assert len(layer_tops) == 1 and len({s.levels for s in heatmap_specs(trace, colour_scale="head")}) > 1
    with pytest.raises(ValueError):
        heatmap_specs(trace, colour_scale="auto")


def test_the_colour_bar_labels_both_ends_of_its_scale():
    from visualizer.plotting.heatmap import colour_ticks
    major, minor = colour_ticks(0.0, 0.39)
    assert major[0] == (0.0, "0") and major[-1] == (0.39, "0.39")
    assert [t for _, t in major] == ["0", "0.1", "0.2", "0.3", "0.39"] and all(t == "" for _, t in minor)
    assert [t for _, t in colour_ticks(0.0, 1.0)[0]] == ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert "0" in [t for _, t in colour_ticks(-0.5, 0.5)[0]]         # a difference's scale says where 0 is
    assert colour_ticks(0.0, 1e-6)[0] == [(0.0, "0"), (1e-6, "1e-06")]
    assert colour_ticks(0.0, 0.998)[0][-1] == (0.998, "0.998")         # it read "1." (cut, then stripped)
    assert colour_ticks(0.0, 0.9583)[0][-1][1] == "0.958"
    assert colour_ticks(-0.0371, 0.0371)[0][0][1] == "-0.037"


def test_csv_values_and_labels_equal_the_trace(trace, tmp_path):
    written = export_heatmaps(heatmap_specs(trace), tmp_path, "csv")
    rows, cols, matrix = read_heatmap_csv(tmp_path / "cross_L2_H1.csv")
    assert rows == trace.tgt_tokens and cols == trace.src_tokens
    np.testing.assert_array_equal(matrix.astype(np.float32), trace.attention("cross", 1, 0))
    rows, cols, matrix = read_heatmap_csv(tmp_path / "decoder_self_L1_mean.csv")
    causal = trace.mask("dec_self", 0)                       # the future: empty cells, not weights of 0
    np.testing.assert_allclose(matrix, np.where(causal, trace.attention("dec_self", 0).mean(0), np.nan), rtol=0,
                               atol=1e-7)
    assert np.isnan(matrix).sum() == (~causal).sum() > 0
    line = (tmp_path / "decoder_self_L1_mean.csv").read_text(encoding="utf-8").splitlines()[1]
    assert line.endswith("," * (len(cols) - 1)) and not line.endswith("," * len(cols))    # row 1 sees key 1 alone
    assert len(written) == len(list(tmp_path.iterdir()))


def test_png_and_svg_parse_with_the_expected_size(qapp, trace, tmp_path):
    spec = [s for s in heatmap_specs(trace) if s.stem == "decoder_self_L1_H2"]
    png = export_heatmaps(spec, tmp_path, "png", scale=2.0)[0]
    from PySide6 import QtGui
    img = QtGui.QImage(str(png))
    assert not img.isNull()
    from visualizer.plotting.figure import HeatmapFigure
    base = HeatmapFigure().widget.width()
    assert img.width() == 2 * base
    svg = export_heatmaps(spec, tmp_path, "svg")[0]
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "Decoder masked self-attention, layer 1, head 2" in svg.read_text(encoding="utf-8")


def test_the_svg_draws_what_the_png_draws(qapp, trace, tmp_path):
    """Axes, labels and colour bar sit where the PNG has them: with Qt's default 72 dpi the SVG drew them at 72/96
    of the heatmap's size, so the row labels stood beside the wrong rows."""
    from PySide6 import QtCore, QtGui, QtSvg
    spec = [s for s in heatmap_specs(trace) if s.stem == "cross_L1_H1"]
    png = QtGui.QImage(str(export_heatmaps(spec, tmp_path, "png")[0])).convertToFormat(QtGui.QImage.Format.Format_RGB32)
    renderer = QtSvg.QSvgRenderer(str(export_heatmaps(spec, tmp_path, "svg")[0]))
    assert renderer.isValid() and renderer.viewBox().size() == png.size()
    drawn = QtGui.QImage(png.size(), QtGui.QImage.Format.Format_RGB32)
    drawn.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(drawn)
    renderer.render(painter, QtCore.QRectF(0, 0, png.width(), png.height()))
    painter.end()

    def ink(img):                         # text and axes: grey or black, unlike every colour of viridis
        a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
        a = a[:, :img.width(), :3].astype(int)
        return (a.max(2) - a.min(2) < 30) & (a.mean(2) < 160)

    a, b = ink(png), ink(drawn)
    assert a.sum() > 1000 and 0.8 < b.sum() / a.sum() < 1.25    # at 72 dpi the SVG's text had half the ink
    assert (a & b).sum() / (a | b).sum() > 0.4                   # and it sat elsewhere: overlap 0.11


def test_an_export_has_room_for_its_longest_row_label_in_its_one_paint(qapp):
    """The left axis measured its labels at the export's one paint and only grew after it: "##les" ran into
    the "query (row)" title, and its "q" was cut at the image's edge."""
    from PySide6 import QtGui, QtWidgets
    from visualizer.plotting.figure import HeatmapFigure
    rows = ["i", "like", "app", "##lesandpears", ".", "</s>"]
    fig = HeatmapFigure()
    fig.show_matrix(np.full((6, 6), 1 / 6), None, rows, rows, "a title")
    axis = fig.plot.getAxis("left")
    width = axis.width()
    label_px = QtGui.QFontMetricsF(axis.style["tickFont"]).horizontalAdvance("##lesandpears")
    assert width >= label_px + 0.9 * axis.label.boundingRect().height()  # the label and the title beside it
    fig.png_image()                                                     # the export's paint
    QtWidgets.QApplication.processEvents()
    assert axis.width() == width                                        # asked for no more room after it


def test_masked_cells_are_shown_as_nan_not_zero(qapp, trace):
    from visualizer.plotting.figure import HeatmapFigure
    spec = [s for s in heatmap_specs(trace) if s.stem == "decoder_self_L1_H1"][0]
    fig = HeatmapFigure()
    fig.show_spec(spec)
    upper = np.triu(np.ones_like(spec.mask), 1).astype(bool)
    assert np.isnan(fig.shown[upper]).all()
    np.testing.assert_array_equal(fig.shown[~upper], spec.matrix[~upper])


def test_unwritable_target_gives_one_line_and_no_files(trace, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ExportError) as err:
        export_heatmaps(heatmap_specs(trace), blocker / "sub", "csv")
    assert "\n" not in str(err.value) and str(blocker) in str(err.value)
    with pytest.raises(ExportError):
        export_heatmaps(heatmap_specs(trace), tmp_path, "jpeg")


def test_a_folder_the_system_refuses_even_to_root_is_one_line(trace):
    if not os.path.isdir("/proc/self"):    # os.access says yes to root; only creating a file tells
        pytest.skip("needs Linux's /proc")
    with pytest.raises(ExportError, match="not writable"):
        export_heatmaps(heatmap_specs(trace), "/proc", "csv")


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(ExportError) as err:
        write_bytes(tmp_path / "x.png", b"\x89PNG" * 1000)
    assert "No space left" in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_export_command_runs_without_a_display(tiny_model_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "figs"
    proc = subprocess.run([sys.executable, "-m", "visualizer", "export", "the cat sat", "--out", str(out),
                           "--model", str(tiny_model_dir), "--format", "png"],
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    n = len(list(out.glob("*.png")))
    assert proc.stdout.strip().splitlines()[-1] == f"exported {n + 1} files to {out}"      # and run.json
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert (record["sentence"], record["heads_off"], record["decoding"]) == ("the cat sat", [], "greedy")
    lm = load(tiny_model_dir)
    assert n == 3 * lm.cfg.N_enc * (lm.cfg.h + 1)
    bad = subprocess.run([sys.executable, "-m", "visualizer", "export", "the cat", "--out", str(out / "x"),
                          "--model", str(tmp_path / "no-such-model")], capture_output=True, text=True, env=env,
                         timeout=120)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1
    assert not (out / "x").exists()


def test_a_run_with_heads_off_says_so_in_every_title_and_the_csv_is_that_run(tiny_model_dir, tiny_lm, tmp_path,
                                                                              run_command):
    code, out, err = run_command(["export", "the cat sat on the mat", "--model", str(tiny_model_dir), "--out",
                                  str(tmp_path), "--format", "csv", "--ablate", "cross:1:2"])
    assert code == 0
    ablated = translate(tiny_lm, "the cat sat on the mat", ablations=frozenset({("cross", 0, 1)})).trace
    _, _, matrix = read_heatmap_csv(tmp_path / "cross_L2_H1.csv")    # layer 2 reads layer 1's changed output
    np.testing.assert_array_equal(matrix.astype(np.float32), ablated.attention("cross", 1, 0))
    plain = translate(tiny_lm, "the cat sat on the mat").trace
    assert not np.array_equal(matrix.astype(np.float32), plain.attention("cross", 1, 0))
    specs = {s.stem: s.title for s in heatmap_specs(ablated, "tiny")}
    assert specs["cross_L1_H2"].startswith("Cross-attention, layer 1, head 2 (switched off) — ")
    label = ablated.schema.kind("cross").label          # the panels' words, not --ablate's "cross:1:2" (QA)
    assert all(t.endswith(f"(tiny) [1 head off: {label} L1 H2]") for t in specs.values())
    assert "switched off" not in specs["cross_L1_H1"]
    record = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))     # the run the files show
    assert record["heads_off"] == ["cross:1:2"] and record["output"] == ablated.meta["translation"]
    assert record["sentence"] == "the cat sat on the mat" and record["format"] == "attention-visualizer-export/1"
    # the folder itself, not the titles' short name: two folders may end alike ("models/bert", QA)
    assert record["model"] == str(Path(tiny_model_dir).resolve())
    # the mean of a layer with a head off is the mean of the heads on (QA: it was every head's), and says so
    means = {s.stem: s for s in heatmap_specs(ablated, "tiny")}
    weights, n = ablated.attention("cross", 0), ablated.schema.n_heads
    np.testing.assert_allclose(means["cross_L1_mean"].matrix, np.delete(weights, 1, axis=0).mean(0), rtol=1e-6)
    assert (f"mean of the {n - 1} heads on" if n > 2 else "the one head on, head\u00a01") in means["cross_L1_mean"].title
    np.testing.assert_allclose(means["cross_L2_mean"].matrix, ablated.attention("cross", 1).mean(0), rtol=1e-6)
    assert "layer 2, mean of heads —" in means["cross_L2_mean"].title


def test_run_json_names_the_weights_exactly_how_the_figures_were_drawn_and_their_tokens(tiny_model_dir, tiny_lm,
                                                                                          tmp_path, run_command):
    """QA as a researcher: two different weight files at one path gave the same run.json, which said nothing of the
    colour map, scale or size drawn, nor of the tokens the model read."""
    import hashlib
    from importlib import metadata
    code, _, _ = run_command(["export", "the cat sat on the mat", "--model", str(tiny_model_dir), "--out",
                              str(tmp_path), "--colour-scale", "one", "--colormap", "magma", "--size", "450x380",
                              "--no-title"])
    assert code == 0
    record = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    weights = Path(tiny_model_dir) / "model.safetensors"
    assert record["model_details"]["weights"] == [{"file": "model.safetensors", "bytes": weights.stat().st_size,
                                                   "sha256": hashlib.sha256(weights.read_bytes()).hexdigest()}]
    assert record["model_details"]["versions"] == {"torch": metadata.version("torch")}
    assert record["figures"] == {"format": "png", "colour_scale": "one", "colormap": "magma", "size": [450, 380],
                                 "titles": False, "scale": 1.0}
    trace = translate(tiny_lm, "the cat sat on the mat").trace
    assert record["tokens"] == {"source": trace.src_tokens, "decoder_input": trace.tgt_tokens,
                                "output": trace.out_tokens}


@pytest.mark.parametrize("name, shown", [
    ("/home/ana/.cache/huggingface/hub/models--Helsinki-NLP--opus-mt-en-de/snapshots/0123abcd", "Helsinki-NLP/opus-mt-en-de"),
    ("/home/ana/models/my-run/model", "my-run/model"), ("Helsinki-NLP/opus-mt-en-de", "Helsinki-NLP/opus-mt-en-de"),
    ("en-fr", "en-fr")])
def test_a_figure_names_its_model_shortly(trace, name, shown):
    """A folder's whole path made the title wrap in a tiny font; the model picker shows the same short name."""
    from visualizer.controls import model_label
    assert all(s.title.endswith(f"({shown}, given target)") for s in heatmap_specs(trace, name))   # (a target)
    assert model_label(name) == shown


def test_the_export_command_takes_a_colour_scale_and_a_colour_map(qapp, tiny_model_dir, tmp_path, monkeypatch):
    import visualizer.export as export
    from visualizer.export_command import main as export_main
    seen = []
    monkeypatch.setattr(export, "export_heatmaps",
                        lambda specs, out, fmt, scale, colormap=None, size=None, progress=None:
                        seen.append(([s.levels for s in specs], colormap)) or [])
    assert export_main(["the cat sat", "--out", str(tmp_path / "a"), "--model", str(tiny_model_dir)]) == 0
    assert export_main(["the cat sat", "--out", str(tmp_path / "b"), "--model", str(tiny_model_dir),
                        "--colour-scale", "one", "--colormap", "magma"]) == 0
    (layer_levels, default_map), (one_levels, magma) = seen
    assert default_map == "viridis" and magma == "magma"
    assert set(one_levels) == {(0.0, 1.0)} and all(0 < top <= 1 for _, top in layer_levels)
    assert any(top < 0.99 for _, top in layer_levels)          # the default: each layer its own largest weight
    assert export_main(["the cat sat", "--out", str(tmp_path / "c"), "--model", str(tiny_model_dir),
                        "--colour-scale", "auto"]) == 2


def _cell_centres(fig, rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """(row, column, x, y): each cell's centre in the figure's pixels (scale 1)."""
    origin = fig.widget.ci.sceneBoundingRect().topLeft()
    vb = fig.plot.getViewBox()
    out = []
    for r in range(rows):
        for c in range(cols):
            p = vb.mapViewToScene(QtCore.QPointF(c, r)) - origin
            out.append((r, c, int(round(p.x())), int(round(p.y()))))
    return out


def test_svg_and_pdf_draw_the_cells_as_shapes_in_the_colours_of_the_png(qapp, trace, tmp_path):
    """The SVG embedded the heatmap as a 6 × 22-pixel bitmap that viewers smooth into a blur, and the masked cells'
    hatch as a bitmap pattern (QA): each cell is a square now, each masked cell a few hatch lines."""
    from PySide6 import QtGui, QtSvg
    from visualizer.plotting.figure import HeatmapFigure
    spec = next(s for s in heatmap_specs(trace) if s.stem == "decoder_self_L1_H2")
    fig = HeatmapFigure()
    fig.show_spec(spec)
    png = QtGui.QImage.fromData(fig.png_bytes()).convertToFormat(QtGui.QImage.Format.Format_RGB32)
    svg = fig.vector_bytes("svg")
    renderer = QtSvg.QSvgRenderer(QtCore.QByteArray(svg))
    drawn = QtGui.QImage(png.size(), QtGui.QImage.Format.Format_RGB32)
    drawn.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(drawn)
    renderer.render(painter, QtCore.QRectF(0, 0, png.width(), png.height()))
    painter.end()
    pixels = fig.heatmap.cell_pixels()
    rows, cols = spec.matrix.shape
    n_masked = int((~spec.mask).sum())
    assert n_masked > 0
    for r, c, x, y in _cell_centres(fig, rows, cols):
        want = QtGui.QColor(png.pixel(x, y))
        got = QtGui.QColor(drawn.pixel(x, y))
        if spec.mask[r, c]:
            assert tuple(pixels[r, c, :3]) == (want.red(), want.green(), want.blue())
            assert max(abs(got.red() - want.red()), abs(got.green() - want.green()),
                       abs(got.blue() - want.blue())) <= 2, (r, c)
    root = ET.fromstring(svg)
    fills = {el.get("fill", "").lower() for el in root.iter() if el.get("fill")}
    cell_fills = {"#%02x%02x%02x" % tuple(pixels[r, c, :3]) for r in range(rows) for c in range(cols) if spec.mask[r, c]}
    assert cell_fills <= fills                                   # vector squares in the cells' own colours
    images = [el for el in root.iter() if el.tag.endswith("image")]
    assert len(images) == 1                                      # the colour bar's gradient, not the heatmap
    pdf = fig.vector_bytes("pdf")
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    box = [float(v) for v in re.search(rb"/MediaBox \[([^\]]*)\]", pdf).group(1).split()]
    assert box == [0, 0, pytest.approx(png.width() * 72 / 96), pytest.approx(png.height() * 72 / 96)]
    assert pdf.count(b"/Subtype /Image") == 1                    # again only the colour bar


def test_pdf_is_a_format_of_every_export(trace, tmp_path, tiny_model_dir, qapp):
    spec = [s for s in heatmap_specs(trace) if s.stem == "cross_L1_H1"]
    written = export_heatmaps(spec, tmp_path, "pdf")
    assert [p.name for p in written] == ["cross_L1_H1.pdf"] and written[0].read_bytes().startswith(b"%PDF-")
    from visualizer.export_command import main as export_main
    assert export_main(["the cat", "--out", str(tmp_path / "cmd"), "--model", str(tiny_model_dir),
                        "--format", "pdf"]) == 0
    assert all(p.read_bytes().startswith(b"%PDF-") for p in (tmp_path / "cmd").iterdir() if p.name != "run.json")


def test_the_export_command_makes_figures_of_a_given_size_and_without_titles(tiny_model_dir, tmp_path, qapp):
    """Figures were sized for the screen (9.4 inches wide, 12-pixel text: 3 points in a paper's column) and always
    carried the sentence and model as a title (QA pass)."""
    from PySide6 import QtGui
    from visualizer.export_command import main as export_main
    assert export_main(["the cat", "--out", str(tmp_path / "small"), "--model", str(tiny_model_dir),
                        "--size", "450x380", "--no-title"]) == 0
    image = QtGui.QImage(str(tmp_path / "small" / "cross_L1_H1.png"))
    assert (image.width(), image.height()) == (450, 380)
    svg = (tmp_path / "svg")
    assert export_main(["the cat", "--out", str(svg), "--model", str(tiny_model_dir), "--format", "svg",
                        "--no-title"]) == 0
    text = (svg / "cross_L1_H1.svg").read_text(encoding="utf-8")
    assert "layer 1, head 1" not in text                         # no title drawn (nor in the SVG's <title>)
    assert export_main(["the cat", "--out", str(tmp_path / "bad"), "--model", str(tiny_model_dir),
                        "--size", "450"]) == 2


def test_an_export_into_a_folder_with_other_files_says_how_many_are_not_its_own(run_command, tiny_model_dir,
                                                                                 tmp_path):
    """en-de's figures exported into a folder of en-fr's: "exported 60 files", and 75 files of another sentence
    under the same names' pattern sat beside them unmentioned. Files the export overwrote are its own."""
    out = tmp_path / "figs"
    args = ["export", "the cat sat", "--out", str(out), "--model", str(tiny_model_dir), "--format", "csv"]
    code, stdout, err = run_command(args)
    n = len(list(out.iterdir()))
    assert code == 0 and stdout.splitlines()[-1] == f"exported {n} files to {out}" and "other file" not in err
    code, _, err = run_command(args)                       # the same export again: it overwrites its own files
    assert code == 0 and "other file" not in err
    (out / "cross_L9_H9.csv").write_text("an older export's\n")
    (out / "notes.txt").write_text("mine\n")
    code, _, err = run_command(args)
    assert code == 0 and f"note: {out} also holds 2 other files, not from this export" in err


def test_a_beam_run_exported_from_the_command_is_the_windows_beam_run_and_its_titles_say_how(
        tiny_model_dir, tiny_lm, tmp_path, run_command):
    """The window's beam figures read like greedy ones, and `export` had no --beam to draw them again; a given
    target's figures too, and `export --target` printed the target as "translation:"."""
    from model import DecodingSettings

    code, out, _ = run_command(["export", "the cat sat on the mat", "--model", str(tiny_model_dir), "--out",
                                str(tmp_path / "beam"), "--format", "csv", "--beam", "3"])
    beam = translate(tiny_lm, "the cat sat on the mat", DecodingSettings(method="beam", beam=3))
    assert code == 0 and f"translation: {beam.text}" in out.splitlines()
    rows, _, matrix = read_heatmap_csv(tmp_path / "beam" / "cross_L1_H1.csv")
    assert rows == beam.trace.axis_tokens("cross")[0]
    np.testing.assert_array_equal(matrix.astype(np.float32), beam.trace.attention("cross", 0, 0))
    assert all(s.title.endswith("(tiny, beam 3)") for s in heatmap_specs(beam.trace, "tiny"))
    forced = translate(tiny_lm, "the cat sat", target="le chat").trace
    assert all(s.title.endswith("(tiny, given target)") for s in heatmap_specs(forced, "tiny"))
    import dataclasses                                       # a trace saved before runs recorded their search
    assert dataclasses.replace(forced, meta={"mode": "teacher-forced"}).decoding == "given target"
    greedy = translate(tiny_lm, "the cat sat").trace
    assert all(s.title.endswith("(tiny)") for s in heatmap_specs(greedy, "tiny"))
    code, out, _ = run_command(["export", "the cat sat", "--model", str(tiny_model_dir), "--out",
                                str(tmp_path / "forced"), "--format", "csv", "--target", "le chat"])
    assert code == 0 and "given target: le chat" in out.splitlines()
    code, _, err = run_command(["export", "the cat sat", "--model", str(tiny_model_dir), "--out",
                                str(tmp_path / "both"), "--target", "le chat", "--beam", "3"], check=False)
    assert code == 2 and "--beam and --target" in err and not (tmp_path / "both").exists()


def test_a_paper_column_figure_keeps_no_empty_band_under_its_column_labels(qapp):
    """At 450 × 380 (`export --size 450x380`, one figure drawing every head in turn) a head's columns fitted
    upright, and a later head's, staggered, kept the upright labels' room, empty, between them and "key
    (column)": a quarter of the figure. Each head's room is its labels' own."""
    from PySide6 import QtGui

    from model.families import load
    from visualizer.plotting.figure import HeatmapFigure
    trace = translate(load("en-fr"), "The animal didn't cross the street.").trace
    fig = HeatmapFigure(450, 380)
    rooms = []
    for spec in heatmap_specs(trace, "en-fr"):
        fig.show_spec(spec)
        axis = fig.plot.getAxis("bottom")
        line = QtGui.QFontMetricsF(axis.style["tickFont"]).lineSpacing()
        own = max((QtGui.QFontMetricsF(axis.style["tickFont"]).horizontalAdvance(t) for t in spec.cols)) + 4 \
            if axis.upright else (2 if axis.staggered else 1) * line
        rooms.append((spec.stem, float(axis.textHeight), own))
    del axis
    fig.widget.deleteLater()             # gone before an assertion's traceback could hold it (a crash, else)
    del fig
    qapp.processEvents()
    assert [(stem, room, own) for stem, room, own in rooms if room > own + 4] == []


def test_a_paper_column_figure_labels_every_row_in_smaller_type(qapp):
    """At 450 × 380 a 20-token translation's rows were labelled every other one (8.4 pt, the window's smallest, did
    not fit 11 pixels a row): a figure is read up close, so a small one draws its labels down to FIGURE_LABEL_PT first.
    The default size and the window keep their floor."""
    from model.families import load
    from visualizer.plotting.figure import HeatmapFigure
    from visualizer.plotting.text import FIGURE_LABEL_PT, MIN_LABEL_PT
    trace = translate(load("en-fr"), "The little girls are tired because they walked to the old school this "
                                     "morning.").trace
    spec = next(s for s in heatmap_specs(trace, "en-fr") if s.kind == "cross")
    shown = {}
    for size in ((450, 380), (900, 760)):
        fig = HeatmapFigure(*size)
        fig.show_spec(spec)
        axis = fig.plot.getAxis("left")
        font, rows = axis.fitted(axis._length(), *axis.range)
        shown[size] = (axis.min_points, len(rows), font.pointSizeF())
        del axis
        fig.widget.deleteLater()
        del fig
        qapp.processEvents()
    assert len(spec.rows) >= 20
    points, rows, size = shown[450, 380]
    assert points == FIGURE_LABEL_PT and rows == len(spec.rows) and FIGURE_LABEL_PT <= size < MIN_LABEL_PT
    assert shown[900, 760][:2] == (MIN_LABEL_PT, len(spec.rows))


LONG_TITLE = ("Decoder masked self-attention, layer 4, head 2 — “A man in a red hat is riding a bicycle down the street "
              "while two little girls in blue dresses watch him from a bench near the old fountain in the park.” (en-de)")


@pytest.mark.parametrize("size", [(900, 760), (450, 380), (300, 240)])
def test_a_long_title_spans_the_figure_above_the_matrix_in_a_quarter_of_its_height(qapp, size):
    """A long sentence's title took 40 % of a 450 × 380 figure, ran into the matrix at 300 × 250, and at 900 × 760
    was drawn in 9-point type under 12-point labels (QA as a researcher): it is now as wide as the figure, within a
    quarter of its height (an eighth in a paper's column, whose rows come first), no smaller than the tick labels where that fits, and above the matrix; where it cannot
    fit, its sentence loses words from its middle, never the kind, layer, head or model."""
    from visualizer.plotting.figure import SMALL_FIGURE_TITLE_SHARE, SMALL_TITLE_PT, TITLE_SHARE, HeatmapFigure
    rows = [f"w{i}" for i in range(20)]
    fig = HeatmapFigure(*size)
    fig.show_matrix(np.full((20, 20), 1 / 20), None, rows, rows, LONG_TITLE)
    item = fig.title_item
    shown = item.text.toPlainText().replace("\u2011", "-")
    height = item.text.boundingRect().height()
    share = TITLE_SHARE if size == (900, 760) else SMALL_FIGURE_TITLE_SHARE
    alone = "Decoder masked self-attention, layer 4, head 2 (en-de)"        # no word of the sentence left: none
    assert height <= share * size[1] or shown == alone                      # (kind, layer, head, model alone)
    assert item.sceneBoundingRect().bottom() <= fig.plot.vb.sceneBoundingRect().top() + 1
    assert item.text.boundingRect().width() > 0.8 * size[0]                 # the figure's width, not the plot's
    assert shown == alone or (shown.startswith("Decoder masked self-attention, layer 4, head 2 — “")
                              and shown.endswith("” (en-de)") and "“…”" not in shown)
    points = item.text.font().pointSizeF()
    if size == (900, 760):
        assert shown == LONG_TITLE and points >= fig.heatmap.font_size      # whole, in type as large as the labels
    if size == (300, 240):
        assert shown == alone and points == SMALL_TITLE_PT
    if size == (450, 380):
        assert "…" in shown and "“…”" not in shown and points == SMALL_TITLE_PT     # words from the middle left out
    assert fig.title == LONG_TITLE                                          # (a vector file's <title>)
    fig.show_matrix(np.full((20, 20), 1 / 20), None, rows, rows, "")
    assert not item.isVisible() and fig.plot.vb.sceneBoundingRect().top() < 0.2 * size[1]     # no title: no row


def test_the_export_command_refuses_a_figure_too_small_for_its_matrix(tiny_model_dir, tmp_path, qapp):
    """200 × 200 gave a figure of its title alone, one word a line, and "exported 61 files" (QA)."""
    from visualizer.export_command import main as export_main
    for size in ("200x200", "450x200", "299x380"):
        assert export_main(["the cat", "--out", str(tmp_path / size), "--model", str(tiny_model_dir),
                            "--size", size]) == 2
    assert export_main(["the cat", "--out", str(tmp_path / "ok"), "--model", str(tiny_model_dir), "--format", "png",
                        "--size", "300x240"]) == 0


def test_a_small_figures_colour_bar_and_axis_titles_are_no_larger_than_its_smallest_title(qapp):
    """At 450 × 380 the colour bar's numbers (12 pt) and axis titles (13 pt) stood larger than the token labels and
    took the matrix's room (QA as a researcher); the default size keeps the window's sizes."""
    from visualizer.plotting.figure import SMALL_TITLE_PT, HeatmapFigure
    rows = [f"w{i}" for i in range(12)]
    sizes = {}
    for size in ((450, 380), (900, 760)):
        fig = HeatmapFigure(*size)
        fig.show_matrix(np.full((12, 12), 1 / 12), None, rows, rows, "a title")
        sizes[size] = (fig.colorbar.axis.style["tickFont"].pointSizeF(), fig.heatmap._axis_title_points)
    assert sizes[450, 380] == (SMALL_TITLE_PT, SMALL_TITLE_PT + 1)
    assert sizes[900, 760][0] > SMALL_TITLE_PT and sizes[900, 760][1] is None


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_the_first_file_that_cannot_be_written_stops_the_export_and_says_how_far_it_got(qapp, trace, tmp_path, fmt):
    """QA as a researcher: a figure that could not be written (a folder in its place, a full disk) ended `export`
    with an error only after every other figure: 8 more were written after the failure, and nothing said how many
    had been."""
    specs = heatmap_specs(trace)[:12]
    (tmp_path / f"{specs[1].stem}.{fmt}").mkdir()                     # the second figure's place is taken
    with pytest.raises(ExportError) as failed:
        export_heatmaps(specs, tmp_path, fmt)
    message = str(failed.value)
    files = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert message.startswith(f"{tmp_path / specs[1].stem}.{fmt}: could not be written")
    assert message.endswith(f"; {len(files)} of 12 {'figure was' if len(files) == 1 else 'figures were'} written "
                            "before it stopped, each whole")
    assert f"{specs[0].stem}.{fmt}" in files and len(files) <= 3      # (two PNGs are encoded at once)


def test_a_long_sentence_is_quoted_short_and_said_to_be_cut_where_the_model_cut_it(tiny_lm):
    """QA as a researcher: 60 sentences pasted, the model read 128 tokens of them, and every figure's title quoted
    all 2,279 characters over 14 lines, ending with words the model never read; run.json said nothing of the cut."""
    import json

    from visualizer.export import TITLE_CHARS, run_record
    long = " ".join(["the cat sat on the mat."] * 60)
    trace = translate(tiny_lm, long).trace
    assert trace.meta["truncated"]
    title = heatmap_specs(trace, "tiny")[0].title
    quoted = title[title.index("“") + 1:title.index("”")]
    assert quoted.endswith("…") and len(quoted) <= TITLE_CHARS and long.startswith(quoted[:-1])
    assert "” (cut at the model's length) (tiny)" in title
    assert json.loads(run_record(trace, "tiny"))["sentence_cut"] is True
    short = translate(tiny_lm, "the cat sat on the mat.").trace
    assert "“the cat sat on the mat.” (tiny)" in heatmap_specs(short, "tiny")[0].title
    assert "sentence_cut" not in json.loads(run_record(short, "tiny"))


def test_scale_with_a_vector_or_table_format_is_said_to_do_nothing(run_command, tiny_model_dir, tmp_path):
    """QA: --scale 3 --format svg was taken and ignored without a word."""
    base = ["export", "the cat", "--model", str(tiny_model_dir)]
    code, _, err = run_command(base + ["--out", str(tmp_path / "a"), "--format", "csv", "--scale", "3"])
    assert code == 0 and "note: --scale sets a PNG's pixels; CSV holds numbers, not pixels" in err
    code, _, err = run_command(base + ["--out", str(tmp_path / "b"), "--format", "csv"])
    assert code == 0 and "--scale" not in err


def test_a_language_models_figures_say_how_many_of_their_rows_it_wrote(tmp_path):
    """QA as a researcher: a GPT-2 figure's rows are its prompt and 20 tokens it wrote, but the title quoted the
    prompt alone, and nothing told the two apart."""
    import hf_tiny
    from model.decoding import DecodingSettings
    lm = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    trace = translate(lm, "the cat sat on", DecodingSettings(max_new=5)).trace
    prompt = trace.meta["prompt_tokens"]
    rows = len(trace.tgt_tokens)
    assert rows > prompt and trace.tgt_tokens[:prompt] == ["the", "cat", "sat", "on"]
    title = heatmap_specs(trace, "gpt2")[0].title
    assert title.endswith(f"— “the cat sat on” + {rows - prompt} tokens it wrote (gpt2)")
    given = translate(lm, "the cat sat on", DecodingSettings(max_new=1)).trace        # the prompt's rows only
    assert len(given.tgt_tokens) == prompt and "it wrote" not in heatmap_specs(given, "gpt2")[0].title


def test_a_title_quotes_the_sentence_without_its_direction_controls():
    """U+202E had drawn "car is" of a figure's title as "si rac" while the axes read "car is" (QA)."""
    from visualizer.export import title_sentence
    assert title_sentence("The red \u202ecar is\u202c fast.") == "The red car is fast."
    assert title_sentence("I said \u2067שלום\u2069 to him.") == "I said שלום to him."


def test_a_long_causal_heads_svg_strokes_its_hatch_across_cells_and_fills_a_colour_at_once(qapp):
    """A 128-token causal head's SVG was 5 MB (a square and its own group a cell, four hatch strokes a masked cell:
    2 GB for a 24-layer model's export, QA). The hatch strokes run whole across the masked cells they cross, the
    cells of a colour are one path, and the picture is the same: hatch strokes exactly where cells are masked."""
    from PySide6 import QtGui
    from visualizer.plotting.vector_cells import HATCH_SPACING, colour_paths, hatch_segments
    n = 128
    masked = np.triu(np.ones((n, n), bool), 1)
    strokes = hatch_segments(masked)
    assert len(strokes) <= 2 * n / HATCH_SPACING                        # one a line (it was 4 a masked cell)
    # as dense as a cell's own four strokes were: their length, 3.39 cell widths a cell
    length = sum(line.length() for line in strokes) / masked.sum()
    assert length == pytest.approx((0.4 + 0.8 + 0.8 + 0.4) * 2 ** 0.5, rel=0.05)
    for line in strokes[::37]:                                          # each stroke lies on masked cells only
        for t in np.linspace(0.02, 0.98, 25):
            p = line.pointAt(t)
            assert masked[int(np.floor(p.y() + 0.5)), int(np.floor(p.x() + 0.5))]
    cells = np.zeros((4, 5), bool)
    cells[0, 2:] = cells[1, 4] = True                                   # padding-like, and a lone cell
    ink = QtGui.QImage(500, 400, QtGui.QImage.Format.Format_RGB32)
    ink.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(ink)
    painter.scale(100, 100)
    painter.translate(0.5, 0.5)
    painter.setPen(QtGui.QPen(QtGui.QColor("black"), 0))
    painter.drawLines(hatch_segments(cells))
    painter.end()
    for r in range(4):
        for c in range(5):
            block = [QtGui.QColor(ink.pixel(c * 100 + x, r * 100 + y)).red() for x in range(5, 95, 3)
                     for y in range(5, 95, 3)]
            assert (min(block) < 128) == bool(cells[r, c]), (r, c)
    rgba = np.zeros((3, 4, 4), np.uint8)
    rgba[..., 3] = 255
    rgba[0, :2, 0] = rgba[2, 1:, 0] = 200                               # two colours, and one masked cell
    rgba[1, 3, 3] = 0
    assert colour_paths(np.zeros((3, 0, 4), np.uint8)) == {} and hatch_segments(np.zeros((3, 0), bool)) == []
    paths = colour_paths(rgba)
    assert set(paths) == {(200, 0, 0, 255), (0, 0, 0, 255)}
    red = paths[(200, 0, 0, 255)]
    assert red.contains(QtCore.QPointF(0.4, 0)) and red.contains(QtCore.QPointF(2.9, 2)) and \
        not red.contains(QtCore.QPointF(2, 0))
    assert not any(p.contains(QtCore.QPointF(3, 1)) for p in paths.values())      # the masked cell: no fill


def test_a_number_with_a_decimal_comma_is_read_as_the_windows_boxes_read_it(run_command, tiny_model_dir, tmp_path):
    """"--scale 2,5" was "invalid float value: '2,5'", where the window's boxes read "0,7" as 0.7 (QA, a German
    locale): a comma for the point is read; anything else is refused in one line that says how to write it."""
    import argparse

    from model.command_line import decimal
    assert decimal("2,5") == decimal("2.5") == 2.5 and decimal(" 3 ") == 3.0
    for bad in ("1,000.5", "2,5,1", "two"):
        with pytest.raises(argparse.ArgumentTypeError, match="write it as 2.5"):
            decimal(bad)
    code, _, err = run_command(["export", "the cat", "--model", str(tiny_model_dir), "--out", str(tmp_path / "a"),
                                "--format", "csv", "--scale", "2,5"])
    assert code == 0 and "note: --scale sets a PNG's pixels" in err
    code, _, err = run_command(["animate", "the cat", "--model", str(tiny_model_dir), "--kind", "enc_self",
                                "--over", "heads", "--out", str(tmp_path / "x.gif"), "--fps", "2,x"])
    assert code == 2 and "invalid number '2,x': write it as 2.5 (or 2,5)" in err
