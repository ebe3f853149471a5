"""Text on a projector: token labels that never overlap, architecture labels that fit their boxes."""
from __future__ import annotations

import numpy as np
import pytest
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from visualizer.heatmap_figure import HeatmapPlot, TokenAxis, short_token
from model.families.shapes import encoder_decoder
from visualizer.panels.architecture import ArchitectureMap
from visualizer.state import ViewState


def axis(orientation, tokens, points=12):
    a = TokenAxis(orientation)
    font = QtGui.QFont()
    font.setPointSize(points)
    a.setTickFont(font)
    a.set_tokens(tokens)
    return a, QtGui.QFontMetricsF(font)


def test_few_short_tokens_all_get_a_label_on_one_line(qapp):
    a, _ = axis("bottom", ["a", "b", "c", "d", "e"])
    assert a.label_step(500) == (1, False)


def test_crowded_bottom_labels_stagger_or_thin_and_never_overlap(qapp):
    tokens = ["The", "little", "girl", "gave", "her", "brother", "a", "red", "book", "in", "the", "garden", ".", "</s>"]
    for length in (120, 300, 420, 2000):
        a, fm = axis("bottom", tokens, points=16)
        step, staggered = a.label_step(length)
        per_cell = length / len(tokens)
        shown = list(range(0, len(tokens), step))
        lines = 2 if staggered else 1
        for i, j in zip(shown, shown[lines:]):        # neighbours on the same line of text
            assert (fm.horizontalAdvance(tokens[i]) + fm.horizontalAdvance(tokens[j])) / 2 <= (j - i) * per_cell
        if length == 2000:
            assert step == 1 and not staggered
        if length == 120:
            assert step > 1


def test_row_labels_thin_out_by_line_height_even_on_an_inverted_axis(qapp):
    tokens = [f"t{i}" for i in range(100)]
    a, _ = axis("left", tokens)
    (spacing, values), = a.tickValues(100.0, 0.0, 400)          # invertY: the range comes reversed
    step = int(spacing)
    smallest = QtGui.QFont()
    smallest.setPointSizeF(12 * TokenAxis.SMALLEST)             # 100 rows in 400 px: labels at their smallest
    assert step >= int(np.ceil(QtGui.QFontMetricsF(smallest).height() / 4.0)) and values[:2] == [0.5, 0.5 + step]
    assert a.tickValues(0.0, 100.0, 400) == [(spacing, values)]


def test_labels_get_smaller_before_any_is_left_out(qapp):
    """8 rows at 12 pt need 8 line heights; given 0.8 of that, every row keeps its label, drawn at 0.8 size."""
    tokens = ["<s>", "J", "'", "##ai", "une", "voiture", "rouge", "."]
    a, fm = axis("left", tokens)
    need = len(tokens) * fm.height() * 1.05
    font, step, _ = a.fitted(need)
    assert step == 1 and font.pointSizeF() == 12
    font, step, _ = a.fitted(0.8 * need)
    assert step == 1 and font.pointSizeF() < 12
    assert len(tokens) * QtGui.QFontMetricsF(font).height() * 1.05 <= 0.8 * need       # and they fit
    (spacing, values), = a.tickValues(8.0, 0.0, 0.8 * need)
    assert spacing == 1 and len(values) == 8
    font, step, _ = a.fitted(0.3 * need)                 # too little room even at the smallest size: thinned
    assert step > 1 and font.pointSizeF() == 12 * TokenAxis.SMALLEST
    b, _ = axis("bottom", ["brother", "garden", "station", "morning"], points=20)
    assert b.fitted(10_000)[0].pointSizeF() == 20 and b.base_font.pointSizeF() == 20


def test_staggered_labels_alternate_lines_and_odd_tokens_are_cleaned(qapp):
    a, _ = axis("bottom", ["brother", "garden", "station", "morning"], points=20)
    a.tickValues(0.0, 4.0, 60)
    assert a.staggered
    assert a.tickStrings([0.5, 1.5, 2.5], 1, 1) == ["brother", "\ngarden", "station"]
    assert short_token("bell\x07") == "bell·" and short_token("x" * 40).endswith("…")


def test_heatmap_plot_keeps_nan_at_masked_cells_and_exact_values_elsewhere(qapp):
    widget = pg.GraphicsLayoutWidget()
    hp = HeatmapPlot(widget.addPlot())
    m = np.array([[0.25, 0.75], [0.1, 0.9]], dtype=np.float32)
    mask = np.array([[True, False], [True, True]])
    hp.show_matrix(m, mask, ["a", "b"], ["c", "d"], "title")
    assert np.isnan(hp.shown[0, 1]) and hp.shown[0, 0] == np.float32(0.25) and hp.shown[1, 1] == np.float32(0.9)
    assert hp.plot.getAxis("left").tokens == ["a", "b"] and hp.plot.getAxis("bottom").tokens == ["c", "d"]
    assert hp.plot.titleLabel.text == "title"
    assert hp.plot.titleLabel.minimumWidth() == 0           # a long title never widens the plot


def test_architecture_labels_fit_their_boxes_with_a_big_font_in_a_narrow_dock(qtbot):
    schema = encoder_decoder("seed", 3, 3, 32, 4, 64)
    state = ViewState(schema=schema)
    arch = ArchitectureMap(state)
    qtbot.addWidget(arch)
    font = arch.font()
    font.setPointSize(22)
    arch.setFont(font)
    arch.resize(210, 620)
    arch.schema = schema
    arch._layout()
    fm = QtGui.QFontMetricsF(arch.box_font)
    flags = int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap)
    assert arch.box_font.pointSizeF() < 22
    assert len(arch.boxes) == len(state.stages())
    for stage, r in arch.boxes.items():
        inner = r.adjusted(3, 2, -3, -2)
        text = fm.boundingRect(inner, flags, schema.short(stage))
        assert text.width() <= inner.width() + 0.5 and text.height() <= inner.height() + 0.5, stage
        assert r.right() <= arch.width() and r.bottom() <= arch.height()
    arch.resize(420, 1100)
    font.setPointSize(11)
    arch.setFont(font)
    arch._layout()
    assert arch.box_font.pointSizeF() == 11                  # room enough: the font stays as it is


def test_two_staggered_lines_get_room_above_the_axis_title(qtbot):
    """pyqtgraph reserves 0.8 of the tick text's height: two staggered lines would run into 'key (column)'."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(420, 330)
    hp = HeatmapPlot(widget.addPlot(), font_size=19)
    hp.show_matrix(np.full((3, 7), 0.5), None, ["a", "b", "c"], ["I", "have", "a", "red", "car", ".", "</s>"], "t")
    widget.show()
    axis = hp.plot.getAxis("bottom")
    for _ in range(2):                               # the first paint measures the text, the second lays it out
        widget.grab()
        qtbot.wait(10)
    assert axis.staggered
    line = QtGui.QFontMetricsF(axis.style["tickFont"]).lineSpacing()
    assert axis.textHeight >= 2 * line - 1
    tick_text_bottom = max(0, axis.style["tickLength"]) + axis.style["tickTextOffset"][1] + 2 * line
    assert axis.label.pos().y() + 5 >= tick_text_bottom      # the title (a few pixels of its box are padding)


def test_plot_token_axes_stagger_or_shrink_before_leaving_a_label_out(qapp):
    """The LayerNorm and output panels' token axes: 8 tokens in less room than they need all keep their label."""
    from visualizer.panels.plotkit import TokenAxis as PlotTokenAxis

    tokens = ["<s>", "J", "'", "##ai", "une", "voiture", "rouge", "."]
    a = PlotTokenAxis("bottom")
    a.set_labels(tokens)
    base = a._font.pointSizeF()
    length = 0.85 * len(tokens) * a._extents(a._font).max()        # one unit per token, the widest label decides
    assert len(a.label_indices(length, -0.5, 7.5)) < len(tokens)    # one line at the set size leaves some out
    font, shown = a.fitted(length, -0.5, 7.5)
    assert shown == list(range(8)) and (a.staggered or font.pointSizeF() < base)
    strings = a.tickStrings([float(i) for i in shown], 1, 1)
    assert [t.lstrip("\n") for t in strings] == tokens
    assert all(t.startswith("\n") == (a.staggered and j % 2 == 1) for j, t in enumerate(strings))
    font, shown = a.fitted(0.1 * length, -0.5, 7.5)                 # far too little room: thinned, smallest
    assert 0 < len(shown) < 8 and font.pointSizeF() == pytest.approx(0.7 * base) and a.staggered
    font, shown = a.fitted(10 * length, -0.5, 7.5)
    assert shown == list(range(8)) and font.pointSizeF() == base and not a.staggered
    rows = PlotTokenAxis("left")                                     # rows: never staggered, only smaller
    rows.set_labels(tokens)
    height = 0.75 * len(tokens) * rows._extents(rows._font).max()
    font, shown = rows.fitted(height, -0.5, 7.5)
    assert shown == list(range(8)) and font.pointSizeF() < base and not rows.staggered
