"""Text on a projector: token labels that never overlap, architecture labels that fit their boxes."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from model.families.shapes import encoder_decoder
from visualizer.panels.architecture import ArchitectureMap
from visualizer.plotting.heatmap import Heatmap
from visualizer.plotting.text import MIN_LABEL_PT, label_sizes, scaled_fonts, short, tick_font
from visualizer.plotting.token_axis import TokenAxis
from model.schema import OUTPUT, Stage
from visualizer.state import ViewState


def axis(orientation, tokens, points=12):
    a = TokenAxis(orientation)
    font = QtGui.QFont()
    font.setPointSize(points)
    a.setTickFont(font)
    a.set_labels(tokens)
    return a, QtGui.QFontMetricsF(font)


def thinned_best(a, length, lo, hi):
    """(count, size) of thinned labels: the most labels any way of 0.7 of the set size or more shows, at the
    largest size that shows that many."""
    base = a.base_font.pointSizeF()
    ways = [(len(a.label_indices(length, lo, hi, f, n)), f.pointSizeF()) for f in scaled_fonts(a.base_font)
            for n in ((1, 2, 0) if a.orientation == "bottom" else (1,)) if f.pointSizeF() >= 0.7 * base - 1e-6]
    return max(ways)


def span(tokens):
    """The range of a heatmap's axis: cell i is centred on i."""
    return -0.5, len(tokens) - 0.5


def test_few_short_tokens_all_get_a_label_on_one_line(qapp):
    tokens = ["a", "b", "c", "d", "e"]
    a, _ = axis("bottom", tokens)
    font, shown = a.fitted(500, *span(tokens))
    assert shown == [0, 1, 2, 3, 4] and not a.staggered and font.pointSizeF() == 12


def test_switching_label_sets_back_finds_the_same_fit_and_a_new_font_fits_again(qapp):
    src = ["The", "little", "girl", "gave", "her", "brother", "a", "red", "book", "."]
    tgt = ["<s>", "La", "petite", "fille", "a", "donné", "un", "livre", "rouge", "à", "son", "frère", "."]
    a, _ = axis("bottom", src, points=16)
    first = a.fitted(200, *span(src))
    a.set_labels(tgt)
    other = a.fitted(200, *span(tgt))
    a.set_labels(src)                                   # an attention kind and back: the fit is looked up again
    again = a.fitted(200, *span(src))
    assert again[0] is first[0] and again[1] is first[1] and first[1] != other[1]
    fresh, _ = axis("bottom", src, points=16)           # and equals a fit made from scratch
    assert fresh.fitted(200, *span(src))[1] == first[1]
    big = QtGui.QFont()
    big.setPointSize(30)
    a.setTickFont(big)                                  # another size: fitted again, from the new size's steps
    font, _ = a.fitted(200, *span(src))
    assert font is not first[0] and any(font.pointSizeF() == pytest.approx(pt) for pt in label_sizes(30))
    assert a.fitted(10_000, *span(src))[0].pointSizeF() == 30


def test_crowded_bottom_labels_stagger_or_thin_and_never_overlap(qapp):
    tokens = ["The", "little", "girl", "gave", "her", "brother", "a", "red", "book", "in", "the", "garden", ".", "</s>"]
    for length in (120, 300, 420, 2000):
        a, _ = axis("bottom", tokens, points=16)
        font, shown = a.fitted(length, *span(tokens))
        fm = QtGui.QFontMetricsF(font)
        per_cell = length / len(tokens)
        lines = 2 if a.staggered else 1
        for i, j in zip(shown, shown[lines:]):        # neighbours on the same line of text
            if a.upright:                             # upright: a line's height apart
                assert fm.height() * 1.05 <= (j - i) * per_cell + 1e-6
            else:
                assert (fm.horizontalAdvance(tokens[i]) + fm.horizontalAdvance(tokens[j])) / 2 <= (j - i) * per_cell
        if length == 2000:
            assert shown == list(range(len(tokens))) and not a.staggered and font.pointSizeF() == 16
        if length == 120:
            assert len(shown) < len(tokens)


def test_row_labels_thin_out_by_line_height_even_on_an_inverted_axis(qapp):
    tokens = [f"t{i}" for i in range(100)]
    a, _ = axis("left", tokens)
    (spacing, values), = a.tickValues(99.5, -0.5, 400)          # invertY: the range comes reversed
    step = int(values[1] - values[0])
    smallest = QtGui.QFont()
    smallest.setPointSizeF(label_sizes(12)[-1])             # 100 rows in 400 px: labels at their smallest
    assert step >= int(np.ceil(QtGui.QFontMetricsF(smallest).height() / 4.0)) and values[0] == 0.0
    assert a.tickValues(-0.5, 99.5, 400) == [(spacing, values)]


def test_labels_get_smaller_before_any_is_left_out(qapp):
    """8 rows at 12 pt need 8 line heights; given 0.8 of that, every row keeps its label, drawn at 0.8 size."""
    tokens = ["<s>", "J", "'", "##ai", "une", "voiture", "rouge", "."]
    a, fm = axis("left", tokens)
    need = len(tokens) * fm.height() * 1.05
    font, shown = a.fitted(need, *span(tokens))
    assert len(shown) == 8 and font.pointSizeF() == 12
    font, shown = a.fitted(0.8 * need, *span(tokens))
    assert len(shown) == 8 and font.pointSizeF() < 12
    assert len(tokens) * QtGui.QFontMetricsF(font).height() * 1.05 <= 0.8 * need       # and they fit
    (spacing, values), = a.tickValues(7.5, -0.5, 0.8 * need)
    assert len(values) == 8
    font, shown = a.fitted(0.3 * need, *span(tokens))    # too little room even at the smallest size: thinned
    assert len(shown) < 8 and (len(shown), font.pointSizeF()) == thinned_best(a, 0.3 * need, *span(tokens))
    b, _ = axis("bottom", ["brother", "garden", "station", "morning"], points=20)
    assert b.fitted(10_000, -0.5, 3.5)[0].pointSizeF() == 20 and b.base_font.pointSizeF() == 20


def test_at_most_max_labels_and_none_at_zero(qapp):
    tokens = [f"t{i}" for i in range(40)]
    a, _ = axis("left", tokens)
    a.set_labels(tokens, max_labels=10)
    font, shown = a.fitted(10_000, *span(tokens))
    assert shown == list(range(0, 40, 4)) and font.pointSizeF() == 12
    a.set_labels(tokens, max_labels=0)
    assert a.fitted(10_000, *span(tokens))[1] == [] and a.tickValues(-0.5, 39.5, 10_000) == []


def test_staggered_labels_alternate_lines_and_odd_tokens_are_cleaned(qapp):
    a, _ = axis("bottom", ["brother", "garden", "station", "morning"], points=20)
    a.tickValues(-0.5, 3.5, 300)
    assert a.staggered and not a.upright
    assert a.tickStrings([0.0, 1.0, 2.0], 1, 1) == ["brother", "\ngarden", "station"]
    assert short("bell\x07") == "bell·" and short("x" * 40).endswith("…") and short("a\nb") == "a⏎b"


def test_a_computed_nan_is_coloured_apart_from_masked_cells_also_when_pooled():
    from visualizer.plotting.colormaps import COLORMAPS, NAN_COLOUR, lookup_table
    from visualizer.plotting.heatmap import coloured
    lut = lookup_table("viridis")
    values = np.full((40, 40), 0.5, dtype=np.float32)
    values[30, 3] = np.nan
    mask = np.tril(np.ones((40, 40), dtype=bool))
    image = coloured(values, mask, (0.0, 1.0), lut)
    assert tuple(image[30, 3]) == NAN_COLOUR and image[3, 30][3] == 0 and tuple(image[4, 3]) == tuple(lut[128])
    pooled = coloured(values, mask, (0.0, 1.0), lut, max_pixels=10)       # blocks of 4 × 4
    assert tuple(pooled[7, 0]) == NAN_COLOUR and pooled[0, 9][3] == 0 and tuple(pooled[8, 0]) == tuple(lut[128])
    assert tuple(coloured(values, None, (0.0, 1.0), lut)[30, 3]) == NAN_COLOUR
    for name in COLORMAPS:                             # far from every colour a weight can take
        assert np.linalg.norm(lookup_table(name)[:, :3] - np.array(NAN_COLOUR[:3]), axis=1).min() > 150


def test_heatmap_plot_keeps_nan_at_masked_cells_and_exact_values_elsewhere(qapp):
    widget = pg.GraphicsLayoutWidget()
    hp = Heatmap(widget.addPlot())
    m = np.array([[0.25, 0.75], [0.1, 0.9]], dtype=np.float32)
    mask = np.array([[True, False], [True, True]])
    hp.show_matrix(m, mask, ["a", "b"], ["c", "d"], "title")
    assert np.isnan(hp.shown[0, 1]) and hp.shown[0, 0] == np.float32(0.25) and hp.shown[1, 1] == np.float32(0.9)
    assert not np.isnan(m).any()                             # the caller's matrix is left as it was
    assert hp.plot.getAxis("left").labels == ["a", "b"] and hp.plot.getAxis("bottom").labels == ["c", "d"]
    assert hp.hatch is not None and hp.hatch.isVisible()     # masked cells over a hatch
    hp.show_matrix(m, None, ["a", "b"], ["c", "d"], "title")
    assert not hp.hatch.isVisible()
    assert hp.plot.titleLabel.text == "title"
    assert hp.plot.titleLabel.minimumWidth() == 0           # a long title never widens the plot


def laid_out_map(qtbot, schema, points: int, width: int, height: int) -> ArchitectureMap:
    arch = ArchitectureMap(ViewState(schema=schema))
    qtbot.addWidget(arch)
    font = arch.font()
    font.setPointSize(points)
    arch.setFont(font)
    arch.resize(width, height)
    arch.schema = schema
    arch._layout()
    return arch


def assert_labels_fit_their_boxes(arch: ArchitectureMap) -> None:
    fm = QtGui.QFontMetricsF(arch.box_font)
    flags = int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap)
    for stage, r in arch.boxes.items():
        inner = r.adjusted(3, 2, -3, -2)
        text = fm.boundingRect(inner, flags, arch.labels[stage])
        assert text.width() <= inner.width() + 0.5 and text.height() <= inner.height() + 0.5, stage
        assert r.right() <= arch.width() and r.bottom() <= arch.height()


def test_architecture_labels_fit_their_boxes_with_a_big_font_in_a_narrow_dock(qtbot):
    schema = encoder_decoder("seed", 3, 3, 32, 4, 64)
    arch = laid_out_map(qtbot, schema, 22, 210, 620)
    assert arch.box_font.pointSizeF() < 22
    hidden = sum(len(schema.stack(st.stack).sublayers) - 1 for st in arch.folded)   # a folded layer is one box
    assert len(arch.boxes) == len(schema.stages()) - hidden
    assert_labels_fit_their_boxes(arch)
    arch.resize(420, 1100)
    font = arch.font()
    font.setPointSize(11)
    arch.setFont(font)
    arch._layout()
    assert arch.box_font.pointSizeF() == 11                  # room enough: the font stays as it is
    assert all(arch.labels[st] == schema.short(st) for st in arch.boxes)


def test_a_narrow_map_on_a_projector_drops_the_repeated_norm_step_to_keep_its_text_readable(qtbot):
    """4 + 4 layers in presentation mode at 720p (14 pt, a 230 px dock): the whole labels fitted at 7 pt."""
    schema = encoder_decoder("seed", 4, 4, 32, 4, 64)
    arch = laid_out_map(qtbot, schema, 14, 230, 580)
    whole = ArchitectureMap._fitting_font(QtGui.QFont(arch.font()), [(r.adjusted(3, 2, -3, -2), schema.short(st))
                                                                    for st, r in arch.boxes.items()])
    assert whole.pointSizeF() < 0.85 * 14 and arch.box_font.pointSizeF() > whole.pointSizeF()
    cross = next(st for st in arch.boxes if st.stack == "dec" and st.sublayer == "cross")
    assert schema.short(cross) == "Cross-attention → Add & Norm" and arch.labels[cross] == "Cross-attention"
    assert arch.labels[next(iter(arch.boxes))] == schema.short(next(iter(arch.boxes)))   # the embedding's as it is
    assert_labels_fit_their_boxes(arch)
    from model.families.shapes import decoder_only
    from model.schema import NORM_BEFORE
    gpt = decoder_only("gpt2", 2, 32, 4, 64, norm_place=NORM_BEFORE)      # the norm comes first there
    ffn = next(st for st in gpt.stages() if st.sublayer == "ffn")
    assert gpt.short(ffn).startswith("LayerNorm → ") and gpt.terse(ffn) == gpt.short(ffn).split(" → ", 1)[1]


def drawn_map(qtbot, schema, points: int, height: int, stage: Stage | None = None):
    """A map of schema in a 230-pixel-wide dock of this height, its text at these points, rendered at a stage (the
    first): (state, map, a stand-in trace)."""
    state = ViewState(schema=schema)
    arch = ArchitectureMap(state)
    qtbot.addWidget(arch)
    font = arch.font()
    font.setPointSize(points)
    arch.setFont(font)
    arch.resize(230, height)
    trace = type("T", (), {"schema": schema, "meta": {}})()
    if stage is not None:
        state.go_to(stage)
    arch.render(trace, state)
    return state, arch, trace


def test_a_short_dock_whose_per_layer_boxes_cannot_hold_their_labels_folds_the_layers_into_ranges(qtbot):
    """5 + 5 layers at 150 % scaling on a 1280 × 800 screen (a dock 200 by 441 logical pixels at 10 pt): a box a
    layer still left 6-point labels cut in half (QA, a low-vision teacher). The layers before and after the current
    one fold into ranges where that lets every label fit."""
    schema = encoder_decoder("seed", 5, 5, 32, 4, 64)
    arch = laid_out_map(qtbot, schema, 10, 200, 441)
    assert_labels_fit_their_boxes(arch)
    assert arch.box_font.pointSizeF() > 6 and "Layers 2–5" in arch.labels.values()


def projector_map(qtbot):
    """A 5 + 5-layer map in presentation mode at 720p (14 pt, a 230 px by 600 px dock), rendered at the first
    stage: (schema, state, map, a stand-in trace)."""
    schema = encoder_decoder("seed", 5, 5, 32, 4, 64)
    return (schema, *drawn_map(qtbot, schema, 14, 600))


def test_a_five_layer_map_on_a_720p_projector_folds_the_other_layers_and_follows_the_current_one(qtbot):
    """5 + 5 layers, presentation mode at 720p (14 pt, a 230 px by 600 px dock): every sublayer's box was 14 px high
    and its text 7 pt. The layers but the current one fold into one box each; the fold follows the state."""
    schema, state, arch, trace = projector_map(qtbot)
    width = arch.boxes[Stage("dec", 0, "self")].width() - 6          # a sublayer box's inside, 14 px high unfolded
    unfolded = ArchitectureMap._fitting_font(QtGui.QFont(arch.font()), [
        (QtCore.QRectF(0, 0, width, 14 - 4), schema.terse(st)) for st in schema.stages() if st.sublayer])
    assert unfolded.pointSizeF() <= 7 and arch.box_font.pointSizeF() >= 10
    assert_labels_fit_their_boxes(arch)
    dec = schema.stack("dec")
    folded = {(st.stack, st.layer) for st in arch.folded}
    assert folded == {(k, l) for k in ("enc", "dec") for l in range(1, 5)}            # layer 1 is the current one
    assert [arch.labels[st] for st in arch.boxes if st.stack == "dec" and st.layer == 0] == [
        s.short for s in dec.sublayers]                                                  # whole labels, not terse
    assert {arch.labels[st] for st in arch.folded} == {f"Layer {l}" for l in range(2, 6)}
    # the folded boxes are in layer order, between the embedding and the output, and do not overlap
    column = sorted((r.top(), r.bottom()) for st, r in arch.boxes.items() if st.stack in ("dec", "tgt_embed"))
    assert all(a[1] <= b[0] for a, b in zip(column, column[1:]))
    # going to decoder layer 4's cross-attention opens layer 4 in both columns and folds layer 1
    target = Stage("dec", 3, "cross")
    state.go_to(target)
    arch.render(trace, state)
    assert target in arch.boxes and target not in arch.folded and arch.highlighted == target
    assert {(st.stack, st.layer) for st in arch.folded} == {(k, l) for k in ("enc", "dec") for l in (0, 1, 2, 4)}
    assert Stage("enc", 3, "ffn") in arch.boxes
    assert_labels_fit_their_boxes(arch)
    # a click on a folded layer goes to its first sublayer; at the output the last layer opens (the one the
    # linear map reads, whose attention the panel shows), at an embedding the first (Alt+Home kept layer 2 open)
    box = next(st for st in arch.folded if st.stack == "enc" and st.layer == 1)
    qtbot.mouseClick(arch, QtCore.Qt.MouseButton.LeftButton, pos=arch.boxes[box].center().toPoint())
    assert state.stage == Stage("enc", 1, "self")
    arch.render(trace, state)
    assert Stage("enc", 1, "ffn") in arch.boxes
    state.go_to(Stage(OUTPUT))
    arch.render(trace, state)
    last = schema.stack("dec").n_layers - 1
    assert Stage("dec", last, "ffn") in arch.boxes and Stage(OUTPUT) in arch.boxes
    assert Stage("enc", 1, "ffn") not in arch.boxes
    state.go_to(schema.stages()[0])                      # the source embedding
    arch.render(trace, state)
    assert Stage("enc", 0, "ffn") in arch.boxes and Stage("dec", last, "ffn") not in arch.boxes
    # with room enough nothing folds
    arch.resize(420, 1400)
    arch._layout()                       # (a widget not shown gets no resize event)
    assert not arch.folded and len(arch.boxes) == len(schema.stages())


def test_two_staggered_lines_get_room_above_the_axis_title(qtbot):
    """pyqtgraph reserves 0.8 of the tick text's height: two staggered lines would run into 'key (column)'."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(420, 330)
    hp = Heatmap(widget.addPlot(), font_size=19)
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
    """The LayerNorm and output panels' token axes (bars centred on 0, 1, …): 8 tokens in less room than they
    need all keep their label."""
    tokens = ["<s>", "J", "'", "##ai", "une", "voiture", "rouge", "."]
    a = TokenAxis("bottom")
    a.set_labels(tokens)
    base = a.base_font.pointSizeF()
    length = 0.85 * len(tokens) * a._extents(a.base_font).max()        # one unit per token, the widest label decides
    assert len(a.label_indices(length, -0.5, 7.5)) < len(tokens)    # one line at the set size leaves some out
    font, shown = a.fitted(length, -0.5, 7.5)
    assert shown == list(range(8)) and (a.staggered or a.upright or font.pointSizeF() < base)
    strings = a.tickStrings([float(i) for i in shown], 1, 1)
    assert [t.lstrip("\n") for t in strings] == tokens
    assert all(t.startswith("\n") == (a.staggered and j % 2 == 1) for j, t in enumerate(strings))
    font, shown = a.fitted(0.1 * length, -0.5, 7.5)                 # far too little room: thinned, the most
    assert 0 < len(shown) < 8 and font.pointSizeF() >= 0.7 * base - 1e-6
    assert (len(shown), font.pointSizeF()) == thinned_best(a, 0.1 * length, -0.5, 7.5)
    font, shown = a.fitted(10 * length, -0.5, 7.5)
    assert shown == list(range(8)) and font.pointSizeF() == base and not a.staggered
    rows = TokenAxis("left")                                     # rows: never staggered, only smaller
    rows.set_labels(tokens)
    height = 0.75 * len(tokens) * rows._extents(rows.base_font).max()
    font, shown = rows.fitted(height, -0.5, 7.5)
    assert shown == list(range(8)) and font.pointSizeF() < base and not rows.staggered


def test_columns_turn_upright_before_any_is_left_out_and_lie_down_again(qtbot):
    """A projector at 1024 × 768 in presentation mode showed 6 of 11 key labels: upright labels, a line's height
    apart, now show them all, at a readable size; the axis is as tall as the longest label, and short again once
    the labels lie down."""
    tokens = ["My", "sister", "is", "reading", "a", "book", "in", "the", "garden", ".", "</s>"]
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    a = TokenAxis("bottom")
    font = QtGui.QFont()
    font.setPointSizeF(16)
    a.setTickFont(font)
    plot = widget.addPlot(axisItems={"bottom": a})
    plot.setXRange(-0.5, 10.5, padding=0)
    a.set_labels(tokens)
    lh = QtGui.QFontMetricsF(font).height()
    widget.resize(int(11 * lh * 1.15) + 60, 400)     # an axis of about 1.1 line heights a column
    widget.show()
    qtbot.waitUntil(lambda: a.upright, timeout=3000)
    assert a.visible_labels() == tokens and a.style["tickFont"].pointSizeF() >= 0.8 * 16 - 1e-6
    longest = QtGui.QFontMetricsF(a.style["tickFont"]).horizontalAdvance("reading")
    qtbot.waitUntil(lambda: a.height() >= longest, timeout=3000)
    image = widget.grab().toImage()                  # drawn: dark pixels in the label band below the axis line
    band = [image.pixelColor(x, y).lightness() for x in range(image.width())
            for y in range(int(a.mapRectToScene(a.boundingRect()).top()) + 8, image.height() - 4, 3)]
    assert min(band) < 100
    widget.resize(2000, 400)                         # room: the labels lie down, the axis is one line tall again
    qtbot.waitUntil(lambda: not a.upright and a.height() < longest, timeout=3000)
    assert a.visible_labels() == tokens


@pytest.mark.parametrize("turned", [True, False])
def test_a_long_last_label_is_drawn_not_dropped_past_the_axis_end(qtbot, turned):
    """GPT-2's last column, "<0xFA>" turned upright, had no label and no word of it: pyqtgraph drops a label whose
    flat text reaches 15 pixels past the axis' end, whatever the fitting chose. Every label chosen is drawn."""
    tokens = ["The", "red", "c", "##ar", "is", "f", "##as", "##t", ".", "tired", "##B", "<0xE0>", "##X",
              "<0xFA>", "<|endoftext|>"]
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    a = TokenAxis("bottom")
    plot = widget.addPlot(axisItems={"bottom": a})
    plot.setXRange(-0.5, len(tokens) - 0.5, padding=0)
    a.set_labels(tokens)
    widget.resize(330 if turned else 1400, 400)
    widget.show()
    qtbot.waitUntil(lambda: a.upright == turned, timeout=3000)
    image = QtGui.QImage(10, 10, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        drawn = [text.lstrip("\n") for _rect, _flags, text in a.generateDrawSpecs(painter)[2]]
    finally:
        painter.end()
    assert drawn == a.visible_labels() == tokens


def test_upright_columns_take_a_capped_share_of_a_short_plot_smaller_and_cut_to_fit(qtbot, monkeypatch):
    """At 1024 × 768 in presentation mode a 15-token sentence's upright "classroom" and "listening" took 100 of a
    260-pixel plot, and the rows kept 130 pixels. Upright labels now take at most UPRIGHT_SHARE of the plot's height:
    drawn smaller to fit, and a label still too long cut with an ellipsis."""
    from visualizer.plotting import token_axis
    tokens = ["The", "students", "are", "listening", "to", "the", "teacher", "in", "the", "big", "new",
              "classroom", "today", ".", "</s>"]
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    hp = Heatmap(widget.addPlot(), font_size=20)
    widget.resize(420, 260)
    widget.show()
    hp.show_matrix(np.full((len(tokens), len(tokens)), 0.5), None, tokens, tokens, "t")
    bottom = hp.plot.getAxis("bottom")
    qtbot.waitUntil(lambda: bottom.upright, timeout=3000)
    for _ in range(4):
        widget.grab()
        qtbot.wait(10)
    room = token_axis.UPRIGHT_SHARE * hp.plot.size().height()
    assert bottom.textHeight <= room + 1
    font = bottom.style["tickFont"]
    big = QtGui.QFontMetricsF(bottom.base_font).horizontalAdvance("classroom")
    assert big > room + 10 and font.pointSizeF() < bottom.base_font.pointSizeF()     # smaller than set
    assert bottom.visible_labels() == tokens

    widget.resize(420, 200)                          # shorter still: the smallest labels are cut
    for _ in range(4):
        widget.grab()
        qtbot.wait(10)
    assert bottom.textHeight <= max(token_axis.UPRIGHT_SHARE * hp.plot.size().height(),
                                    3 * QtGui.QFontMetricsF(tick_font(bottom.min_points)).height()) + 1
    drawn, original = [], QtGui.QPainter.drawText

    def spy(painter, *args):
        if len(args) == 3 and isinstance(args[2], str):
            drawn.append(args[2])
        return original(painter, *args)

    image = QtGui.QImage(420, 200, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    monkeypatch.setattr(QtGui.QPainter, "drawText", spy)
    bottom.drawPicture(painter, *bottom.generateDrawSpecs(painter))
    monkeypatch.undo()
    painter.end()
    metrics = QtGui.QFontMetricsF(bottom.style["tickFont"])
    assert len(drawn) == len(tokens) and all(metrics.horizontalAdvance(t) <= bottom.textHeight for t in drawn)
    assert "classroom" not in drawn and any(t.startswith("cla") and t.endswith("…") for t in drawn), drawn


def test_presentation_sized_rows_shrink_further_than_normal_ones_but_not_below_the_normal_smallest(qapp):
    """A 720-line projector in presentation mode gave the attention heatmap (15 pt labels) of 10 source tokens about
    150 px: at 0.7 of 15 pt the rows showed every other token. Labels now shrink to the normal size's smallest
    (8.4 pt, 0.7 of 12 pt) whatever their set size where that shows them all, so all ten show; where labels must
    be left out anyway they stay at 0.7 of their size."""
    assert label_sizes(12) == pytest.approx([12, 10.8, 9.6, 8.4]) and label_sizes(12)[-1] == MIN_LABEL_PT
    assert label_sizes(15) == pytest.approx([15, 13.5, 12, 10.5, 9, 8.4]) and label_sizes(8) == [8]
    tokens = ["▁two", "▁young", "▁dogs", "▁are", "▁playing", "▁in", "▁the", "▁snow", ".", "</s>"]
    rows = TokenAxis("left")
    rows.setTickFont(tick_font(15))
    rows.set_labels(tokens)
    need = {pt: QtGui.QFontMetricsF(tick_font(pt)).height() * 1.05 * len(tokens) for pt in (MIN_LABEL_PT, 9)}
    assert need[MIN_LABEL_PT] < need[9]
    font, shown = rows.fitted(need[MIN_LABEL_PT] + 0.5, -0.5, 9.5)      # too short at 0.6 of 15 pt, enough at 8.4
    assert shown == list(range(10)) and font.pointSizeF() == pytest.approx(MIN_LABEL_PT)
    font, shown = rows.fitted(need[MIN_LABEL_PT] - 2, -0.5, 9.5)        # not even then: thinned, at 0.7 of 15 pt
    assert (len(shown), font.pointSizeF()) == thinned_best(rows, need[MIN_LABEL_PT] - 2, -0.5, 9.5)   # or more
    assert 0 < len(shown) < 10


def test_a_1080p_class_rows_shrink_a_point_at_a_time_below_the_set_sizes_scales(qapp):
    """Presentation mode at 1080p (19.6 pt): a 20-row heatmap had about 18 pixels a row; its labels went from
    11.8 pt (too tall) straight to 8.4 pt, half the columns' size. They now take the largest size in steps of at
    most a point that fits."""
    sizes = label_sizes(19.6)
    assert sizes[:5] == pytest.approx([19.6, 17.64, 15.68, 13.72, 11.76]) and sizes[-1] == MIN_LABEL_PT
    assert all(0 < a - b <= 1.0 + 1e-9 for a, b in zip(sizes[4:], sizes[5:]))
    rows = TokenAxis("left")
    rows.setTickFont(tick_font(19.6))
    rows.set_labels([f"tok{i}" for i in range(20)])
    height = {pt: QtGui.QFontMetricsF(tick_font(pt)).height() * 1.05 * 20 for pt in sizes}
    fits = [pt for pt in sizes if height[pt] <= 18 * 20]
    assert fits and fits[0] > MIN_LABEL_PT + 1            # (the fonts here fit a size between)
    font, shown = rows.fitted(18 * 20, -0.5, 19.5)
    assert shown == list(range(20)) and font.pointSizeF() == pytest.approx(fits[0])


def test_a_long_title_wraps_within_its_plot_instead_of_being_cut(qtbot):
    """Presentation mode once showed "ecoder masked…": a centred title wider than its plot, cut at both ends."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(320, 420)
    hp = Heatmap(widget.addPlot(), font_size=19)
    hp.show_matrix(np.full((3, 3), 0.5), None, ["a", "b", "c"], ["d", "e", "f"],
                   "Decoder masked self-attention — layer 1, head 1")
    widget.show()

    def settled():
        for _ in range(3):
            widget.grab()
            qtbot.wait(10)

    settled()
    label = hp.plot.titleLabel
    text = label.item.mapRectToScene(label.item.boundingRect())
    plot = hp.plot.sceneBoundingRect()
    line = 0.7 * QtGui.QFontMetricsF(QtGui.QFont(label.item.font().family(), 21)).lineSpacing()   # at its smallest
    assert plot.left() - 1 <= text.left() and text.right() <= plot.right() + 1      # nothing cut at the sides
    assert text.height() >= 2 * line - 2                   # smaller, then on two lines or more
    assert label.geometry().height() >= text.height() - 1                           # and its row holds them
    hp.show_matrix(np.full((3, 3), 0.5), None, ["a", "b", "c"], ["d", "e", "f"], "head 1")
    settled()
    assert label.geometry().height() >= text.height() - 1      # a shorter title keeps the row: no new layout
    widget.resize(1600, 420)
    settled()
    one = label.item.mapRectToScene(label.item.boundingRect())
    assert one.height() < 2 * line - 2 and label.geometry().height() < text.height()   # wide: one line again


def test_a_long_hover_read_out_ends_in_an_ellipsis_and_keeps_the_whole_text_in_its_tooltip(qtbot):
    from PySide6 import QtWidgets

    from visualizer.panels.widgets import ElidedLabel
    label = ElidedLabel()
    qtbot.addWidget(label)
    label.resize(120, 30)
    text = "query “voiture” (row 5) → key “car” (column 4): weight 0.912345"
    label.setText(text)
    assert label.toolTip() == text and label.text() == text
    assert label.shown_text().endswith("…") and len(label.shown_text()) < len(text)
    assert label.minimumSizeHint().width() == 0 and \
        label.sizePolicy().horizontalPolicy() == QtWidgets.QSizePolicy.Policy.Ignored
    label.resize(2000, 30)
    assert label.shown_text() == text
    middle, short = "“voiture” (5) → “car” (4): 0.912345", "“voiture” → “car”: 0.912345"
    label.setText(text, shorter=(middle, short))
    metrics = label.fontMetrics()
    for width, shown in ((metrics.horizontalAdvance(middle) + 2, middle), (metrics.horizontalAdvance(short), short)):
        label.resize(width + label.width() - label.contentsRect().width(), 30)
        assert label.shown_text() == shown and label.toolTip() == text
    label.setText(text)                                     # a new text without shorter forms forgets the old ones
    label.resize(metrics.horizontalAdvance(short), 30)
    assert label.shown_text().endswith("…") and label.shown_text().startswith("query")


def test_the_colour_bar_label_shrinks_to_fit_a_short_plot_and_grows_back(qtbot):
    """A 720-line projector in presentation mode cut the bar's "attention weight" to "attention weigh"."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    hp = Heatmap(widget.addPlot(), font_size=18)
    hp.add_colorbar("attention weight")
    widget.addItem(hp.colorbar)
    hp.show_matrix(np.full((3, 3), 0.5), None, ["a", "b", "c"], ["d", "e", "f"], "head 1")
    axis = hp.colorbar.getAxis("left")

    def label_points():
        return float(re.search(r"font-size: *([0-9.]+)pt", axis.labelString() + str(axis.labelStyle)).group(1))

    def text_length():             # the label runs along the bar: its unrotated width against the axis' height
        return axis.label.boundingRect().width()

    widget.resize(500, 600)
    widget.show()
    qtbot.waitUntil(lambda: axis.height() > 300 and label_points() == pytest.approx(18))
    assert text_length() <= axis.height()
    widget.resize(500, 190)                                   # shorter than the label at 18 pt
    qtbot.waitUntil(lambda: label_points() < 18)
    qtbot.wait(50)
    assert 0.7 * 18 - 0.05 <= label_points() and (text_length() <= axis.height() + 1
                                                   or label_points() == pytest.approx(0.7 * 18, abs=0.05))
    widget.resize(500, 600)
    qtbot.waitUntil(lambda: label_points() == pytest.approx(18))


def test_a_new_matrix_typesets_no_axis_label_again(qtbot, monkeypatch):
    """A change of attention kind changes every heatmap's ranges. With the SI prefix on, each range change of an
    axis, the hidden right and top ones too, typeset its label again (QGraphicsTextItem.setHtml) and repainted
    it: a third of the axis work of that change. Plain numbers on every axis of the plot and of its colour bar."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    hp = Heatmap(widget.addPlot(), font_size=12)
    hp.add_colorbar("attention weight")
    widget.addItem(hp.colorbar)
    widget.resize(400, 400)
    widget.show()
    hp.show_matrix(np.full((3, 3), 0.5), None, ["a", "b", "c"], ["d", "e", "f"], "head 1")
    typeset = []
    monkeypatch.setattr(pg.AxisItem, "_updateLabel", lambda self: typeset.append(self.orientation))
    for n in (5, 8, 2):                                        # sentences of other lengths: new ranges
        hp.show_matrix(np.full((n, n + 1), 0.5), None, ["t"] * n, ["s"] * (n + 1), "head 1")
    assert typeset == []
    for item in (hp.plot, hp.colorbar):
        assert not any(item.getAxis(side).autoSIPrefix for side in ("left", "bottom", "right", "top"))


def test_the_framed_rows_label_is_drawn_when_rows_are_left_out(qapp):
    """QA: at generation step 5 the red frame sat on the unlabelled "fini" row between "ont" and "leurs", and a
    class read it as "leurs". The kept row is drawn, the others clear it as they clear each other."""
    tokens = [f"token{i}" for i in range(20)]
    rows, metrics = axis("left", tokens)
    lo, hi = span(tokens)
    length = 5 * metrics.height()                         # room for about five rows' labels
    free = rows.label_indices(length, lo, hi)
    kept = next(i for i in range(1, 20) if i not in free)
    rows.set_keep(kept)
    shown = rows.label_indices(length, lo, hi)
    assert kept in shown and 2 <= len(shown) < 20
    per_row, half = length / (hi - lo), metrics.height() / 2
    centres = [(rows.positions[i] - lo) * per_row for i in shown]
    assert all(b - a >= 2 * half - 1e-3 for a, b in zip(centres, centres[1:]))       # no two overlap
    _, fitted = rows.fitted(length, lo, hi)
    assert kept in fitted
    rows.set_keep(None)
    assert rows.label_indices(length, lo, hi) == free


@pytest.mark.parametrize("side", ["left", "bottom"])
def test_a_rare_words_marked_labels_are_drawn_when_labels_are_left_out(qapp, side):
    """The note under the translation points to the underlined pieces: they are drawn however small the heatmap
    (they clear the kept row and each other, the others clear them), and unmarking gives the first fit back."""
    tokens = [f"token{i}" for i in range(24)]
    rows, metrics = axis(side, tokens)
    lo, hi = span(tokens)
    length = 8 * (metrics.height() if side == "left" else metrics.horizontalAdvance("token00"))
    free = rows.label_indices(length, lo, hi)
    hidden = [i for i in range(1, 23) if i not in free]
    marked = {hidden[0], hidden[-1], hidden[-1] + 1}      # two neighbours: the first of them is drawn
    rows.set_keep(hidden[len(hidden) // 2])
    rows.set_marked(marked)
    shown = rows.label_indices(length, lo, hi)
    widths = rows._extents(rows.base_font)
    per_unit = length / (hi - lo)
    spans = [((rows.positions[i] - lo) * per_unit - widths[i] / 2, (rows.positions[i] - lo) * per_unit + widths[i] / 2)
             for i in shown]
    assert all(a[1] <= b[0] + 1e-3 for a, b in zip(spans, spans[1:]))         # no two overlap
    assert {hidden[0], hidden[-1], rows.keep} <= set(shown) and hidden[-1] + 1 not in shown
    assert 4 <= len(shown) < 24
    _, fitted = rows.fitted(length, lo, hi)
    assert {hidden[0], hidden[-1], rows.keep} <= set(fitted)
    rows.set_marked(())
    rows.set_keep(None)
    assert rows.label_indices(length, lo, hi) == free


def test_label_room_grows_while_labels_change_and_fits_again_when_let_shrink(qtbot):
    """Long upright column labels, then short ones: the room under the heatmap stays (a class typing sees no plot
    move) until TokenAxis.let_shrink_all (the window calls it once a result has settled), then fits the short ones;
    a left axis' width likewise."""
    from visualizer.plotting.token_axis import TokenAxis
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(330, 420)
    hp = Heatmap(widget.addPlot(), font_size=14)
    widget.show()
    bottom, left = hp.plot.getAxis("bottom"), hp.plot.getAxis("left")

    def shown(rows, cols):
        hp.show_matrix(np.full((len(rows), len(cols)), 0.5), None, rows, cols, "t")
        for _ in range(4):
            widget.grab()
            qtbot.wait(10)
        return bottom.height(), left.width()

    short = shown(["a", "b"], ["I", "am", "."])
    long = shown(["extraordinarily", "b"], ["Yesterday", "evening", "extraordinarily", "tickets", "sold"])
    assert bottom.upright and long[0] > short[0] + 20 and long[1] > short[1] + 20
    assert shown(["a", "b"], ["I", "am", "."]) == long
    TokenAxis.let_shrink_all()
    height, width = shown(["a", "b"], ["I", "am", "."])
    assert height == pytest.approx(short[0]) and width <= short[1]   # (the first width held the empty plot's ticks)


def test_a_folded_map_lays_each_layer_out_once_and_the_same_every_visit(qtbot, monkeypatch):
    """The fold follows the layer: every layer change laid the map out anew (2.3 ms of a 17 ms change). Each open
    layer's layout is kept until the size, font or model changes; a kept one equals a fresh one."""
    schema, state, arch, trace = projector_map(qtbot)
    assert arch.folded
    placed = []
    real = ArchitectureMap._place
    monkeypatch.setattr(ArchitectureMap, "_place", lambda self, fold: (placed.append(fold), real(self, fold))[1])
    seen = {}
    for layer in (3, 0, 3, 1, 0):
        state.go_to(Stage("dec", layer, "cross"))
        arch.render(trace, state)
        shown = (dict(arch.boxes), list(arch.frames), set(arch.folded), dict(arch.labels), arch.box_font.pointSizeF())
        assert seen.setdefault(layer, shown) == shown
    assert len(placed) == 2 * 2                   # layers 3 and 1 laid out once each (unfolded, then folded)
    arch._relayout()                              # a fresh layout of the layer in view: the same as the kept one
    assert (dict(arch.boxes), list(arch.frames), set(arch.folded), dict(arch.labels),
            arch.box_font.pointSizeF()) == seen[0]
    arch.resize(240, 600)                         # a new size: laid out anew
    placed.clear()
    state.go_to(Stage("dec", 3, "cross"))
    arch.render(trace, state)
    assert placed


def test_a_heatmaps_highlighted_row_keeps_its_label(qtbot):
    from visualizer.plotting.heatmap import Heatmap
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    hp = Heatmap(widget.addPlot())
    tokens = [f"w{i}" for i in range(30)]
    hp.show_matrix(np.full((30, 30), 1 / 30, dtype=np.float32), tokens, tokens)
    widget.resize(300, 200)                                   # far too short for 30 row labels
    widget.show()
    hp.highlight_row(7)
    qtbot.waitUntil(lambda: 0 < len(hp.plot.getAxis("left").visible_labels()) < 30)
    assert "w7" in hp.plot.getAxis("left").visible_labels()
    hp.highlight_row(None)
    assert hp.plot.getAxis("left").keep is None


def test_a_long_sentence_in_a_large_figure_gets_every_token_label(qtbot):
    """A 75-token sentence exported at 1600 × 1500 labelled only every other row and column (a cap of 60 labels an
    axis), though each row had room for its label. The labels that fit are all drawn; a small plot still thins."""
    tokens = [f"w{i}" for i in range(75)]
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(1600, 1500)
    hp = Heatmap(widget.addPlot())
    hp.show_matrix(np.full((75, 75), 1 / 75), None, tokens, tokens, "t")
    widget.show()
    for _ in range(2):                               # the first paint measures the text, the second lays it out
        widget.grab()
        qtbot.wait(10)
    left, bottom = hp.plot.getAxis("left"), hp.plot.getAxis("bottom")
    assert left.visible_labels() == tokens and bottom.visible_labels() == tokens
    widget.resize(500, 400)
    for _ in range(2):
        widget.grab()
        qtbot.wait(10)
    assert 0 < len(left.visible_labels()) < 75


def test_column_labels_are_drawn_as_the_fit_that_chose_their_font_placed_them(qtbot):
    """At 1366 × 768 a pasted text of 18 source tokens read "Ihavedog.Shehasacat…" under its cross-attention: the
    font and the upright flag came from the fit at the axis' length, the labels from pyqtgraph's length a few pixels
    off, whose fit was one line of other labels. Labels drawn lying down never overlap, at any width."""
    tokens = "I have a dog . She has a cat . We are happy . The end . </s>".split()
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    hp = Heatmap(widget.addPlot())
    axis = hp.plot.getAxis("bottom")
    drawn = []
    draw = axis.drawPicture

    def record(p, axis_spec, tick_specs, text_specs):
        drawn.append((axis.upright, sorted((r.left(), r.right(), t) for r, _, t in text_specs)))
        return draw(p, axis_spec, tick_specs, text_specs)

    axis.drawPicture = record
    rows = "<s> J ' ##ai un chien . Elle a un chat heureux .".split()
    hp.show_matrix(np.full((13, 18), 0.05), None, rows, tokens, "t")
    widget.show()
    for width, height in itertools.product(range(348, 360, 3), (250, 300, 380)):      # 354 × 250 overlapped
        widget.resize(width, height)
        for _ in range(2):
            widget.grab()
            QtWidgets.QApplication.processEvents()
        upright, specs = drawn[-1]
        on_a_line = [s for s in specs if not s[2].startswith("\n")], [s for s in specs if s[2].startswith("\n")]
        assert upright or all(b[0] >= a[1] - 1 for line in on_a_line for a, b in zip(line, line[1:])), width


def test_upright_column_labels_never_run_into_the_axis_title(qtbot):
    """A panel's heatmap keeps its bottom axis at a fixed height: turned upright, "listening" ran into "key" below it
    in Compare runs and Rollout (QA). The axis grows to its upright labels and its title."""
    from visualizer.plotting.plot_box import HeatmapBox
    from visualizer.plotting.scenes import settle_scenes
    words = "The students are listening to the music . </s>".split()
    box = HeatmapBox("title", "query", "key", bar_label="weight")
    qtbot.addWidget(box)
    box.show()
    box.show_matrix(np.random.default_rng(0).random((len(words), len(words))), words, words, (0.0, 1.0))
    bottom = box.item.getAxis("bottom")
    for width in (420, 380, 340, 300, 260):           # narrow enough for the labels to turn upright
        box.resize(width, 460)
        qtbot.wait(20)
        settle_scenes(box)
        if bottom.upright:
            break
    assert bottom.upright and bottom.fixedHeight is not None
    metrics = QtGui.QFontMetricsF(bottom.style["tickFont"])
    longest = max(metrics.horizontalAdvance(w) for w in words)
    assert bottom.height() >= longest + 0.8 * bottom.label.boundingRect().height()


@pytest.mark.parametrize("size, cols, upright", [
    ((700, 400), ["We", "went", "to", "the", "c", "##ine", "##ma", "."], False),
    ((260, 420), ["Yesterday", "evening", "cinema", "tickets", "were", "sold"], True),
])
def test_marked_labels_are_drawn_underlined_in_the_warning_colour_and_only_they(qtbot, size, cols, upright):
    """A rare word's pieces ("c ##ine ##ma") are underlined in orange on the heatmap's axes; the others are not."""
    from visualizer.plotting.colormaps import MARKED
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(*size)
    hp = Heatmap(widget.addPlot(), font_size=14)
    hp.show_matrix(np.full((2, len(cols)), 0.5), None, ["a", "b"], cols, "t")
    widget.show()
    axis = hp.plot.getAxis("bottom")

    def orange_columns() -> set[int]:
        """The cells whose x range holds a pixel of MARKED under the plot (the bottom axis' labels)."""
        for _ in range(3):                       # the first paints measure and lay the labels out
            image = widget.grab().toImage()
            qtbot.wait(10)
        want = QtGui.QColor(MARKED)
        vb = hp.plot.vb
        bottom = int(widget.mapFromScene(vb.mapViewToScene(QtCore.QPointF(0, 1.5))).y())
        found = set()
        for x in range(image.width()):
            for y in range(bottom + 1, image.height()):
                c = image.pixelColor(x, y)
                if abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 40:
                    found.add(int(round(vb.mapSceneToView(widget.mapToScene(QtCore.QPoint(x, 0))).x())))
        return found

    assert orange_columns() == set()
    marked = {4, 5, 6} if not upright else {2}
    hp.mark_labels(cols=marked)
    assert orange_columns() == marked and axis.upright == upright
    assert axis.marked_labels() == [cols[i] for i in sorted(marked)]
    hp.mark_labels()
    assert orange_columns() == set()


def test_a_numbers_axis_fits_its_labels_again_when_the_font_or_the_room_changes(qapp):
    """fit_number_ticks remembers its choices (a step change asks again with the same range): a class's font or a
    narrower dock must still get labels that do not run together."""
    from visualizer.plotting.text import fit_number_ticks
    axis = pg.AxisItem("bottom")

    def fit(points: float, pixels: float) -> tuple[float, int]:
        axis.setTickFont(tick_font(points))
        reach = fit_number_ticks(axis, 0.0, 1.0, pixels)
        return axis._tickSpacing[0][0], reach

    step_small, reach_small = fit(12, 400)
    step_large, reach_large = fit(30, 400)
    assert step_large > step_small and reach_large > reach_small
    assert fit(12, 400) == (step_small, reach_small)
    assert fit(12, 120)[0] > step_small


def test_a_heatmap_without_its_title_keeps_room_for_its_colour_bars_top_number_and_axis_titles_clear(qtbot):
    """In presentation mode at 1080p (QA as a teacher) the focused heatmap's title goes for room: the colour bar's
    top number, which stands half above the bar, was cut by the view's edge ("0.974"), and the row axis' title
    "query (row)" touched the longest token, "tomorrow"."""
    from visualizer.plotting.plot_box import HeatmapBox
    box = HeatmapBox("title", "query (row)", "key (column)", bar_label="attention weight")
    qtbot.addWidget(box)
    box.resize(700, 500)
    box.show()
    rows = ["We", "are", "going", "tomorrow"]
    box.show_matrix(np.full((4, 4), 0.25, dtype=np.float32), rows, rows, (0.0, 0.974))
    hp = box.heatmap
    hp.show_title(False)
    for _ in range(5):
        QtWidgets.QApplication.processEvents()
        box.grab()                                      # pyqtgraph's axes measure their labels as they paint
    font = hp.colorbar.axis.style["tickFont"]
    assert hp.plot.layout.rowMaximumHeight(0) >= QtGui.QFontMetricsF(font).height() / 2
    top = hp.colorbar.sceneBoundingRect().top()                # the bar's top end: its number centred on it
    assert top - QtGui.QFontMetricsF(font).height() / 2 >= 0     # inside the view
    axis = hp.plot.getAxis("left")
    widest = max(QtGui.QFontMetricsF(axis.style["tickFont"]).horizontalAdvance(t) for t in rows)
    title = QtGui.QFontMetricsF(axis.label.font()).height()
    assert axis.width() >= widest + axis.style["tickTextOffset"][0] + 0.8 * axis.label.boundingRect().height() \
        + 0.2 * title


@pytest.mark.parametrize("token,first,then", [("\u05e9<0xD7>", "\u05e9", "<"), ("\u05d0 (#116)", "\u05d0", "("),
                                              ("<0xD7>\u05e9\u05dc", "<", "\u05e9"), ("##\u05e8", "#", "\u05e8")])
def test_token_labels_with_right_to_left_letters_read_in_the_models_order(qapp, token, first, then):
    """A GPT-2 piece "ש<0xD7>" was drawn ">0xD7ש<" on its axis, and an output bar's "א (#116)" as ")#116א (" (QA):
    laid out as drawn, what the model reads first stands left of what it reads next; Latin-only labels unchanged."""
    a, _ = axis("bottom", [token, "cat"])
    drawn = a.tickStrings([0.0, 1.0], 1.0, 1.0)
    assert drawn[1] == "cat" and drawn[0].replace("\u200e", "") == token

    def x_of(text: str, index: int) -> float:
        layout = QtGui.QTextLayout(text, tick_font(12))
        layout.beginLayout()
        line = layout.createLine()
        layout.endLayout()
        return line.cursorToX(index)[0]
    shown = drawn[0]
    i, j = shown.index(first), shown.index(then, shown.index(first) + 1)
    assert x_of(shown, i) < x_of(shown, j)
    raw_i, raw_j = token.index(first), token.index(then, token.index(first) + 1)
    assert token.startswith("<") or not x_of(token, raw_i) < x_of(token, raw_j)      # unmarked, the order was lost


@pytest.mark.parametrize("n_layers", [24, 32])
def test_a_map_of_many_layers_folds_those_before_and_after_the_current_one_into_two_boxes(qtbot, n_layers):
    """24 or 32 layers at 1366 × 768 (11 pt, a 230 × 669 dock): a box a layer was 7-point text and ran past the
    dock's foot, the current layer's off it at layer 20 (QA). The layers before the current one fold into one box
    and those after it into another; a click on either opens its nearest layer; every box is inside the dock."""
    from model.families.shapes import decoder_only
    state, arch, trace = drawn_map(qtbot, decoder_only("gpt2", n_layers, 64, 16, 256), 11, 669,
                                   Stage("dec", 19, "self"))
    assert_labels_fit_their_boxes(arch)
    assert arch.box_font.pointSizeF() >= 0.75 * 11
    assert sorted(arch.labels[st] for st in arch.folded) == ["Layers 1–19", f"Layers 21–{n_layers}"]
    assert Stage("dec", 19, "self") in arch.boxes and Stage("dec", 19, "self") not in arch.folded
    before = next(st for st in arch.folded if arch.labels[st] == "Layers 1–19")
    qtbot.mouseClick(arch, QtCore.Qt.MouseButton.LeftButton, pos=arch.boxes[before].center().toPoint())
    assert state.stage == Stage("dec", 18, "self")                       # the nearest layer of the range
    arch.render(trace, state)
    assert sorted(arch.labels[st] for st in arch.folded) == ["Layers 1–18", f"Layers 20–{n_layers}"]
    state.go_to(Stage(OUTPUT))
    arch.render(trace, state)
    assert [arch.labels[st] for st in arch.folded] == [f"Layers 1–{n_layers - 1}"]
    assert_labels_fit_their_boxes(arch)


def test_vowel_marks_and_joiners_stay_in_their_right_to_left_run():
    """A left-to-right mark went between each letter and its vowel mark: "שָׁלוֹם" was drawn scrambled and
    "مَرْحَبًا" disjoined (QA). A word with marks or a joiner is one run: marks only at its two ends."""
    from visualizer.text_safety import LRM, model_order
    for word in ("שָׁלוֹם", "مَرْحَبًا", "می\u200cخواهم"):
        assert model_order(word) == f"{LRM}{word}{LRM}"
    assert model_order("שָׁ<0xD7>") == f"{LRM}שָׁ{LRM}<0xD7>"
