"""The attention panel: exact weight on hover, mean over heads, colour scales, small multiples, step row."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore


@pytest.fixture
def panel(window):
    return window.attention


def plain_hint(panel) -> bool:
    """The line below the heatmap shows a hint (how to read it), not a cell's read-out or a stage's note."""
    from visualizer.panels.attention import HOVER_HINT, LABELS_HIDDEN_HINT
    return panel.hover.text() in (HOVER_HINT[0], LABELS_HIDDEN_HINT[0])


def scene_pos(hp, row, col):
    return hp.plot.vb.mapViewToScene(QtCore.QPointF(col, row))      # cell (row, col) is centred on (col, row)


def test_hover_shows_the_exact_weight_and_the_two_tokens(qtbot, window, panel):
    window.state.update(kind="cross", layer=1, head=1)
    w = window.trace.attention("cross", 1, 1)
    rows, cols = window.trace.axis_tokens("cross")
    # the title never breaks between a word and its number ("head" on one line, "2" on the next)
    assert panel.focus.plot.titleLabel.text.endswith("— layer\u00a02, head\u00a02")
    panel._hovered(scene_pos(panel.focus, 2, 3))
    text = panel.hover.text()
    # positions from 0, as the Math tab's "position 2: …" and PE(pos) count them
    # a decoder's row reads its token and predicts the next (row "une" of "une voiture" looks at "car")
    assert text == (f"query “{rows[2]}” (position 2, predicting “{window.trace.out_tokens[2]}”) → key “{cols[3]}” "
                    f"(position 3): weight {float(w[2, 3]):.6f}")
    assert window.trace.tgt_tokens[3] == window.trace.out_tokens[2]              # the next row reads it
    window.state.update(kind="enc_self")                                        # an encoder's row predicts nothing
    panel._hovered(scene_pos(panel.focus, 2, 3))
    assert panel.hover.text().startswith(f"query “{window.trace.src_tokens[2]}” (position 2) → key")
    window.state.update(kind="cross")
    panel._hovered(scene_pos(panel.focus, 2, 3))
    panel.hover.resize(panel.hover.fontMetrics().horizontalAdvance(f"“{rows[2]}”→“{cols[3]}” 0.0000") + 4, 30)
    # a projector's narrow row
    assert panel.hover.shown_text() == f"“{rows[2]}”→“{cols[3]}” {float(w[2, 3]):.3g}"


def test_the_read_out_follows_the_heatmap_under_a_still_pointer(qtbot, window, panel, monkeypatch):
    """Another head under the pointer is read again; after a change with the pointer on no cell the read-out is
    the hint, never a cell of the matrix shown before (a new sentence kept the old sentence's tokens and weight),
    also when the pointer left without a Leave reaching the canvas (QA)."""
    from PySide6 import QtGui
    window.state.update(kind="cross", layer=1, head=1)
    cell = scene_pos(panel.focus, 2, 3)
    over = panel.canvas.mapToGlobal(panel.canvas.mapFromScene(cell))
    monkeypatch.setattr(QtGui.QCursor, "pos", staticmethod(lambda: over))
    panel._hovered(cell)
    window.state.update(head=0)
    w = window.trace.attention("cross", 1, 0)
    assert f"{float(w[2, 3]):.6f}" in panel.hover.text() and panel.focused_array[2, 3] == w[2, 3]
    away = panel.canvas.mapToGlobal(QtCore.QPoint(-50, -50))
    monkeypatch.setattr(QtGui.QCursor, "pos", staticmethod(lambda: away))
    panel._hovered(QtCore.QPointF(-1e6, -1e6))              # the pointer leaves the heatmap: the hint again
    assert plain_hint(panel)                                # (a stale read-out was taken for the pointer's cell)
    window.state.update(layer=0)
    assert plain_hint(panel)
    monkeypatch.setattr(QtGui.QCursor, "pos", staticmethod(lambda: over))
    panel._hovered(cell)                                    # on a cell, then away with no event at all
    monkeypatch.setattr(QtGui.QCursor, "pos", staticmethod(lambda: away))
    window.state.update(layer=1)
    assert plain_hint(panel)


def test_the_pointer_leaving_the_canvas_for_another_widget_leaves_no_cell_to_read(qtbot, window, panel):
    """Moved off the canvas (onto the Mean check box) the scene gets no more moves: its last position was a
    cell, and toggling Mean read that cell again as if the pointer were still on it."""
    window.state.update(kind="cross", layer=1, head=1)
    panel._hovered(scene_pos(panel.focus, 2, 3))
    assert "weight" in panel.hover.text()
    QtCore.QCoreApplication.sendEvent(panel.canvas, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert plain_hint(panel)                                # no reading stays for a cell no pointer is on
    panel.mean.setChecked(True)
    assert plain_hint(panel)
    panel.mean.setChecked(False)


def test_a_weight_too_small_for_six_decimals_is_written_in_powers_of_ten():
    """A researcher read "weight 0.000000" for a cell whose CSV held 9.546e-15, and took it for exactly 0."""
    from visualizer.panels.attention import weight_text
    assert [weight_text(w) for w in (0.912345, 0.0000012, 9.546e-15, 4.9e-7, 0.0)] == \
        ["0.912345", "0.000001", "9.55 × 10⁻¹⁵", "4.90 × 10⁻⁷", "0.000000"]      # (not "9.55e-15", QA as a teacher)


def test_a_narrow_panel_drops_words_from_the_hover_not_the_weight(qtbot, window, panel):
    """At 720 lines on a projector the whole read-out did not fit and its weight was cut to “…”."""
    window.state.update(kind="cross", layer=1, head=1)
    w = window.trace.attention("cross", 1, 1)
    rows, cols = window.trace.axis_tokens("cross")
    panel._hovered(scene_pos(panel.focus, 2, 3))
    full, label = panel.hover.text(), panel.hover
    weight = f"{float(w[2, 3]):.6f}"
    short = f"“{rows[2]}” → “{cols[3]}”: {weight}"
    metrics = label.fontMetrics()
    label.resize(metrics.horizontalAdvance(full) + 20, label.height())
    assert label.shown_text() == full
    nxt = window.trace.out_tokens[2]
    # the prediction at three digits before it is let go (QA as a teacher at 1024 × 768: it went first)
    three = f"“{rows[2]}” (next “{nxt}”) → “{cols[3]}” {float(w[2, 3]):.3g}"
    label.resize(metrics.horizontalAdvance(three) + 4, label.height())
    assert label.shown_text() == three and label.toolTip() == full
    label.resize(min(metrics.horizontalAdvance(short), metrics.horizontalAdvance(three) - 1), label.height())
    assert label.shown_text() == short or (label.shown_text() == f"“{rows[2]}”→“{cols[3]}” {float(w[2, 3]):.3g}"
                                           and metrics.horizontalAdvance(short) > label.width())
    # what the decoder's row predicts stays while it can (QA: at 1280 × 720 only the short form showed)
    predicting = f"“{rows[2]}” (predicting “{nxt}”) → “{cols[3]}”: {weight}"
    label.resize(metrics.horizontalAdvance(predicting) + 4, label.height())
    assert label.shown_text() == predicting
    next_form = f"“{rows[2]}” (next “{nxt}”) → “{cols[3]}”: {weight}"
    label.resize(metrics.horizontalAdvance(next_form) + 4, label.height())
    assert label.shown_text() == f"“{rows[2]}” (next “{nxt}”) → “{cols[3]}”: {weight}"
    # "→" points at the key in every form ("“.”→“</s>” · “mat”" read as the key "</s>", QA)
    assert all(form.split("→")[-1].lstrip().removeprefix("key ").startswith(f"“{cols[3]}”")
               for form in (full, *label._shorter))
    label.resize(metrics.horizontalAdvance(short) // 2, label.height())
    assert label.shown_text().endswith("…") and label.shown_text().startswith(f"“{rows[2]}”"[:2])


def test_hover_on_a_masked_cell_says_masked_not_zero(qtbot, window, panel):
    window.state.update(kind="dec_self", layer=0, head=0)
    panel._hovered(scene_pos(panel.focus, 0, 2))           # row 0 may not look at key 2: the future
    assert "masked" in panel.hover.text() and "0.000000" not in panel.hover.text()


def test_a_nan_the_model_computed_is_cyan_and_read_as_nan_not_as_masked(qtbot, window, panel):
    """QA: a NaN weight (weights holding NaN, a half-precision overflow) was drawn over the masked cells' hatch and
    the read-out called it "masked"."""
    import dataclasses

    from visualizer.plotting.colormaps import NAN_COLOUR
    window.state.update(kind="dec_self", layer=0, head=0)
    k = window.trace.schema.kind("dec_self")
    key = f"{k.stack}.0.{k.sublayer}.weights"
    weights = np.array(window.trace.arrays[key])
    weights[0, 2, 1] = np.nan                                        # row 2 may look at key 1: not masked
    trace = dataclasses.replace(window.trace, arrays={**window.trace.arrays, key: weights})
    panel.render(trace, window.state)
    pixels = panel.focus.image.image
    assert tuple(pixels[2, 1]) == NAN_COLOUR and pixels[0, 2][3] == 0   # the NaN cyan, the future transparent
    panel._hovered(scene_pos(panel.focus, 2, 1))
    assert "weight NaN (not a number)" in panel.hover.text() and "masked" not in panel.hover.text()
    panel._hovered(scene_pos(panel.focus, 0, 2))
    assert "masked — this cell gets no attention" in panel.hover.text()


def test_mean_over_heads_shows_the_mean_and_disables_the_head_box(qtbot, window, panel):
    window.state.update(kind="enc_self", layer=1)
    panel.mean.setChecked(True)
    expected = window.trace.attention("enc_self", 1).mean(0)
    np.testing.assert_allclose(panel.focused_array, expected, rtol=1e-6)
    assert not panel.head.isEnabled() and "mean" in panel.focus.plot.titleLabel.text
    panel.mean.setChecked(False)
    np.testing.assert_array_equal(panel.focused_array, window.trace.attention("enc_self", 1, window.state.head))


def test_shared_colour_scale_versus_one_scale_per_head(qtbot, window, panel):
    window.state.update(kind="enc_self", layer=0)
    weights = window.trace.attention("enc_self", 0)
    panel.set_colour_scale("layer")
    tops = [hp.levels[1] for hp in panel.small]
    assert np.allclose(tops, weights.max())
    panel.set_colour_scale("head")
    tops = [hp.levels[1] for hp in panel.small]
    assert np.allclose(tops, weights.reshape(len(weights), -1).max(1))
    # the pixels follow: each head's largest weight has the colour map's last colour
    lut = pg.colormap.get(panel.colormap).getLookupTable(nPts=256, alpha=True)
    for h, hp in enumerate(panel.small):
        r, c = np.unravel_index(np.argmax(weights[h]), weights[h].shape)
        np.testing.assert_array_equal(hp.image.image[r, c], lut[-1])
    panel.set_colour_scale("one")                    # 0 … 1: layers and sentences compare
    assert [hp.levels for hp in (panel.focus, *panel.small)] == [(0.0, 1.0)] * (1 + len(panel.small))
    assert window.settings.get("colour_scale") == "one"
    assert [a.isChecked() for a in panel.scale_actions.values()] == [False, False, True]


def test_colour_maps_are_colour_blind_safe_and_apply_everywhere(qtbot, window, panel):
    assert {"viridis", "cividis", "magma"} <= set(panel.cmap_actions)
    panel.cmap_actions["cividis"].trigger()
    assert panel.colormap == "cividis" and window.settings.get("colormap") == "cividis"
    # the pixels on screen are the cividis colours of the weights (masked cells transparent)
    lut = pg.colormap.get("cividis").getLookupTable(nPts=256, alpha=True)
    shown, (lo, hi) = panel.focus.shown, panel.focus.levels
    index = np.clip(np.floor((shown - lo) * 255 / (hi - lo) + 0.5), 0, 255)
    expected = np.where(np.isnan(shown)[..., None], 0, lut[np.nan_to_num(index).astype(int)])
    np.testing.assert_array_equal(panel.focus.image.image, expected)
    assert panel.focus.colorbar.colorMap().name == "cividis" and panel.focus.colorbar.levels() == (lo, hi)


def test_the_colours_buttons_menu_arrow_stands_apart_from_its_text(qtbot, panel):
    """QA: a tool button drew its arrow in its corner, against "Colours"; the arrow now has a column of its own."""
    from PySide6 import QtGui
    button = panel.colours
    button.resize(button.sizeHint())
    image = button.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    inner = pixels[3:-3, 3:image.width() - 3, :3].astype(int)           # inside the frame
    ink = np.abs(inner - np.median(inner.reshape(-1, 3), axis=0)).sum(-1) > 120
    columns = np.flatnonzero(ink.any(axis=0))
    gaps = np.diff(columns)
    assert gaps.max() >= 4, "the arrow touches the text"                       # a gap between text and arrow
    arrow = columns[np.argmax(gaps) + 1:]
    assert 0 < arrow.size <= 12 and columns[np.argmax(gaps)] - columns[0] > 30  # a small arrow after the word


def test_clicking_a_small_head_focuses_it(qtbot, window, panel):
    window.state.update(kind="enc_self", layer=0, head=0)
    hp = panel.small[1]

    class Click:
        def scenePos(self):
            return hp.plot.sceneBoundingRect().center()

    panel._clicked(Click())
    assert window.state.head == 1 and panel.shown_head == 1
    np.testing.assert_array_equal(panel.focused_array, window.trace.attention("enc_self", 0, 1))


@pytest.mark.parametrize("kind", ["dec_self", "cross"])
def test_generation_step_highlights_its_decoder_row(qtbot, window, panel, kind):
    window.state.update(kind=kind, step=1)
    box = panel.focus.row_box
    assert box.isVisible() and box.rect().center().y() == 1 and box.rect().height() == 1    # row 1 is centred on 1
    # told apart by more than red (red-green colour blindness saw the olive of the middle cells, QA): a white edge
    # around the red stroke, and the focused small head's title in bold
    from visualizer.plotting.colormaps import HIGHLIGHT
    from visualizer.plotting.halo import HALO
    assert box.pen().color().name() == HALO and box.core.color().name() == HIGHLIGHT.lower()
    assert box.pen().widthF() == box.core.widthF() + 3
    from visualizer.plotting.scenes import settle_scenes
    settle_scenes(panel)
    image = panel.canvas.grab().toImage()
    top = panel.focus.plot.vb.mapViewToScene(QtCore.QPointF(box.rect().center().x(), box.rect().top()))
    x, y = int(top.x()), int(top.y())
    ratio = panel.canvas.devicePixelRatioF()
    colours = {image.pixelColor(int(x * ratio), int((y + dy) * ratio)).name() for dy in range(-4, 5)}
    assert HALO in colours and HIGHLIGHT.lower() in colours
    assert [hp.marked for hp in panel.small] == [h == window.state.head for h in range(len(panel.small))]
    assert panel.small[window.state.head].plot.titleLabel.text.startswith("<b>")
    window.state.update(kind="enc_self")
    assert not panel.focus.row_box.isVisible()                 # the encoder has no generation steps


def test_small_multiples_follow_layer_and_run_changes_and_the_frame_follows_the_head(qtbot, window, panel):
    """A head change only moves the red frame; a layer change or a new run redraws every small head."""
    def small_equal_trace(kind, layer):
        for h, hp in enumerate(panel.small):
            np.testing.assert_array_equal(np.nan_to_num(hp.shown), window.trace.attention(kind, layer, h))

    last = window.trace.n_heads - 1
    assert last >= 1
    window.state.update(kind="cross", layer=0, head=0)
    window.state.update(head=last)
    small_equal_trace("cross", 0)
    borders = [hp.plot.getViewBox().border.color().name() for hp in panel.small]
    assert borders[last] == "#ff3b30" and borders.count("#ff3b30") == 1
    window.state.update(layer=1)
    small_equal_trace("cross", 1)
    np.testing.assert_array_equal(panel.focused_array, window.trace.attention("cross", 1, last))
    old = window.trace
    with qtbot.waitSignal(window.trace_shown, timeout=20000):
        window.inputs.sentence.setText("a dog ran to the house")
    assert window.trace is not old
    small_equal_trace("cross", 1)
    np.testing.assert_array_equal(panel.focused_array, window.trace.attention("cross", 1, last))


def test_small_multiple_titles_stay_apart_at_presentation_font(qtbot, window, panel):
    """At 18 pt in a 1500-pixel window the four small heads' titles ("head 1" …) once ran together."""
    from PySide6 import QtGui, QtWidgets

    size = QtWidgets.QApplication.font().pointSizeF()
    window.resize(1500, 950)
    window.presentation.set_font_size(18)
    try:
        qtbot.waitUntil(lambda: panel.focus.font_size == 19)
        window.state.update(kind="enc_self", layer=0)
        qtbot.wait(50)
        for hp in panel.small:
            assert hp.font_size <= 9
            title_font = QtGui.QFont(hp.font)
            title_font.setPointSizeF(hp.font_size + 2)
            title_font.setBold(hp.marked)                      # the focused head's title is bold
            text = hp.plot.titleLabel.text.removeprefix("<b>").removesuffix("</b>")
            assert QtGui.QFontMetricsF(title_font).horizontalAdvance(text) < hp.plot.width()
    finally:
        window.presentation.set_font_size(size)


def test_small_heads_show_their_own_layers_images_from_the_cache_and_the_warm_up(qtbot, window, panel):
    """The small heads' images are coloured once per trace (panels/thumbnails.py): at every layer, visited or
    coloured in the background, they equal what the heatmap colours from that layer's weights."""
    from visualizer.plotting.heatmap import coloured
    from visualizer.panels.thumbnails import head_levels
    kind = "enc_self"
    n_layers = window.trace.n_layers("enc")
    for layer in [*range(n_layers), 0]:                       # the last one seen before: from the cache
        window.state.update(kind=kind, layer=layer)
        weights, mask = window.trace.attention(kind, layer), window.trace.mask(kind, layer)
        levels = head_levels(weights, panel.colour_scale())
        for h, hp in enumerate(panel.small):
            expected = coloured(weights[h], mask, levels[h], hp.lut, hp.max_pixels)
            np.testing.assert_array_equal(hp.image.image, expected)
    panel.thumbnails.background.wait()                                    # the warm-up is done
    keys = {k[:2] for k in panel.thumbnails._images}
    assert {(kind, layer) for layer in range(n_layers)} <= keys


def test_at_the_output_the_panel_shows_the_last_layer_which_the_linear_map_reads(qtbot, window, panel):
    """The Linear + softmax stage showed layer 1's attention, the one furthest from the output."""
    window.state.update(kind="cross", layer=0)
    window.state.last()
    assert window.state.stage.stack == "output"
    last = window.trace.n_layers("dec") - 1
    assert panel.shown_layer == last and panel.layer.value() == last + 1 and not panel.layer.isEnabled()
    np.testing.assert_array_equal(panel.focused_array, window.trace.attention(panel.shown_kind, last, panel.shown_head))
    window.state.prev_sublayer()                                    # back into the last decoder layer
    assert panel.layer.isEnabled() and panel.shown_layer == window.state.layer



def test_a_stage_without_attention_says_which_attention_the_panel_shows(qtbot, window, panel):
    """At a feed-forward sublayer, an embedding or the output the caption names that stage while the heatmap shows
    an attention sublayer: the line below the plots says which, until a hover reads a cell, and goes back to the
    hint at an attention sublayer."""
    from visualizer.panels.attention import stand_in
    schema = window.trace.schema
    window.state.update(stack="enc", layer=1, sublayer="ffn")
    assert window.state.stage.sublayer == "ffn" and panel.shown_kind == "enc_self"
    assert panel.hover.text() == ("The feed-forward sublayer has no attention weights: shown is layer 2's "
                                  "encoder self-attention.")
    assert all(hp.dimmed for hp in (panel.focus, *panel.small))      # faded: not the feed-forward's own
    assert panel.focus.colorbar.bar.opacity() == panel.focus.image.opacity() < 1    # the bar as faded (QA)
    panel._hovered(scene_pos(panel.focus, 1, 1))                     # a cell read out, then left: the note again
    assert "weight" in panel.hover.text() and "feed-forward" not in panel.hover.text()
    QtCore.QCoreApplication.sendEvent(panel.canvas, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    window.state.update(stack="enc", layer=1, sublayer="self")
    assert plain_hint(panel)
    assert not any(hp.dimmed for hp in (panel.focus, *panel.small))
    assert panel.focus.image.opacity() == panel.focus.colorbar.bar.opacity() == 1.0
    window.state.update(stack="tgt_embed", layer=0, sublayer="")
    assert panel.hover.text().startswith("The embedding has no attention weights: shown is layer 1's decoder")
    window.state.update(stack="output", layer=0, sublayer="")
    last = schema.stack("dec").n_layers
    assert panel.hover.text().startswith(f"The output layer has no attention weights: shown is layer {last}'s")
    info = schema.kind("cross")
    assert stand_in(schema, "dec", "cross", info, 0) == ()
    short = stand_in(schema, "dec", "ffn", info, 0)
    assert short[1:] == ("Feed-forward: no attention; layer 1's cross-attention shown",
                         "Feed-forward: no attention; L1 cross-attention shown",
                         "No attention; L1 cross shown", "L1 cross shown",     # (QA: "no attention here" in class
                         "Feed-forward: no attention", "no attention here")   # at 1024 did not say which was shown)


def test_a_narrow_canvas_gives_the_focused_head_the_room(qtbot, window, panel):
    """At 1024×768 in class the row labels, the colour bar's label and three small heads a row left the focused
    matrix 45 pixels wide: a narrow canvas gives it 5/6 of the width, the bar its numbers only, the small heads two
    columns."""
    from visualizer.panels.attention import NARROW_CANVAS
    layout = panel.canvas.ci.layout
    window.resize(1800, 900)
    qtbot.waitUntil(lambda: panel.canvas.width() >= NARROW_CANVAS)
    assert layout.columnStretchFactor(0) == 3 and panel.focus.colorbar.getAxis("left").label.isVisible()
    window.resize(900, 700)
    qtbot.waitUntil(lambda: panel.canvas.width() < NARROW_CANVAS)
    assert layout.columnStretchFactor(0) == 5 and not panel.focus.colorbar.getAxis("left").label.isVisible()
    qtbot.waitUntil(lambda: panel.focus.plot.vb.width() > panel.canvas.width() / 3)     # the matrix itself
    H = len(panel.small)
    columns = {round(hp.plot.pos().x()) for hp in panel.small}
    assert len(columns) == min(2, H)
    window.resize(1800, 900)
    qtbot.waitUntil(lambda: panel.canvas.width() >= NARROW_CANVAS)
    assert panel.focus.colorbar.getAxis("left").label.isVisible()


def test_a_narrower_canvas_puts_the_small_heads_in_a_strip_under_the_focused_one(qtbot, window, panel):
    """At 1024 × 768 in class two columns of small heads beside the focused one left its matrix 75 pixels wide
    and 4 of 12 columns labelled: under STRIP_CANVAS they go in one short row under it, and the matrix is wider
    than half the canvas. The colour bar's numbers are smaller than the token labels there."""
    from visualizer.panels.attention import STRIP_CANVAS, STRIP_COLUMNS
    window.resize(1800, 900)
    qtbot.waitUntil(lambda: panel.canvas.width() >= STRIP_CANVAS)
    wide_bar_pt = panel.focus.colorbar.axis.style["tickFont"].pointSizeF()
    window.resize(800, 700)
    qtbot.waitUntil(lambda: panel.canvas.width() < STRIP_CANVAS)
    H = len(panel.small)
    assert 1 < H <= STRIP_COLUMNS
    qtbot.waitUntil(lambda: len({round(hp.plot.mapToScene(0, 0).y()) for hp in panel.small}) == 1)    # one row
    focus_bottom = panel.focus.plot.mapToScene(panel.focus.plot.boundingRect().bottomLeft()).y()
    assert all(hp.plot.mapToScene(0, 0).y() >= focus_bottom - 1 for hp in panel.small)            # under it
    assert len({round(hp.plot.mapToScene(0, 0).x()) for hp in panel.small}) == H
    qtbot.waitUntil(lambda: panel.focus.plot.vb.width() > panel.canvas.width() / 2)
    assert panel.grid.geometry().height() < panel.canvas.height() / 3
    assert panel.focus.colorbar.axis.style["tickFont"].pointSizeF() < wide_bar_pt
    hp = panel.small[H - 1]                        # a click on the strip's last head focuses that head

    class Click:
        def scenePos(self):
            return hp.plot.sceneBoundingRect().center()

    panel._clicked(Click())
    assert window.state.head == H - 1 and panel.shown_head == H - 1
    window.resize(1800, 900)                       # beside the focused head again

    def beside() -> bool:
        right = panel.focus.plot.mapToScene(panel.focus.plot.boundingRect().topRight()).x()
        return all(hp.plot.mapToScene(0, 0).x() >= right - 1 for hp in panel.small)
    qtbot.waitUntil(beside)


def test_the_line_below_follows_the_labels_when_the_matrix_gets_room_without_a_resize(qtbot, window, panel):
    """At 1280 × 720 in class the colour bar's numbers got smaller after the hint was chosen: the matrix got the
    room to label every token, yet the line below still said some were left out. It follows the matrix' size."""
    from visualizer.panels.attention import HOVER_HINT, LABELS_HIDDEN_HINT
    from visualizer.plotting.text import tick_font
    window.resize(1800, 900)
    qtbot.waitUntil(lambda: not panel.focus.labels_hidden() and panel.hint == HOVER_HINT)
    qtbot.wait(300)                                       # the layout settled
    panel.hint = LABELS_HIDDEN_HINT                       # as chosen for the matrix' room a moment before
    width = panel.focus.plot.vb.width()
    panel.focus.set_colorbar_font(tick_font(6))           # the bar narrower, the canvas as it was
    qtbot.waitUntil(lambda: panel.focus.plot.vb.width() > width)
    qtbot.waitUntil(lambda: panel.hint == HOVER_HINT)


def test_when_labels_are_left_out_the_line_below_says_how_to_read_them(qtbot, window, panel):
    """At 1024 × 768 in presentation mode a class could not tell which column was "garden": with some labels left
    out, the line below the heatmap says to hover or press F9; with room for all, the usual hint."""
    from visualizer.panels.attention import HOVER_HINT, LABELS_HIDDEN_HINT
    window.resize(1800, 1000)
    window.inputs.sentence.setText("the cat sat on the mat")
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the cat sat on the mat"
                    and not window.runs.runner.busy)
    qtbot.waitUntil(lambda: not panel.focus.labels_hidden())
    qtbot.waitUntil(lambda: panel.hint == HOVER_HINT)
    long = " ".join(["the cat sat on the mat"] * 8)                                # 48 tokens
    window.inputs.sentence.setText(long)
    window.resize(700, 500)
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == long and not window.runs.runner.busy, timeout=10000)
    qtbot.waitUntil(lambda: panel.focus.labels_hidden(), timeout=10000)
    qtbot.waitUntil(lambda: panel.hint == LABELS_HIDDEN_HINT, timeout=10000)
    axes = [panel.focus.plot.getAxis(name) for name in ("left", "bottom")]
    assert any(len(axis.visible_labels()) < len(axis.labels) == 49 for axis in axes)
    window.docking.toggle_alone()             # F9 on: the hint no longer says to press F9 (QA)
    try:
        from visualizer.panels.attention import ALONE_HIDDEN_HINT
        qtbot.waitUntil(lambda: panel.hint == ALONE_HIDDEN_HINT, timeout=10000)
        assert "F9" not in panel.hover.text()
    finally:
        window.docking.toggle_alone()
    qtbot.waitUntil(lambda: panel.hint == LABELS_HIDDEN_HINT and not panel.alone, timeout=10000)


def test_the_read_out_is_the_hint_after_a_menu_closed_with_the_pointer_elsewhere(qtbot, window, panel, monkeypatch):
    """A right-click menu closed by a click elsewhere (or its Save dialog) sends the canvas no Leave: the last
    cell's weight stayed under the heatmap (QA as a teacher). After the menu the read-out follows the pointer."""
    from PySide6 import QtGui

    window.state.update(kind="cross", layer=1, head=1)
    cell = scene_pos(panel.focus, 2, 3)
    panel._hovered(cell)
    assert "weight" in panel.hover.text()
    closed = type("Menu", (), {"exec": lambda self, *a: None, "deleteLater": lambda self: None})()   # closed at once
    monkeypatch.setattr(window.exports.attention_menu, "build", lambda: closed)
    away = panel.canvas.mapToGlobal(QtCore.QPoint(-50, -50))
    monkeypatch.setattr(QtGui.QCursor, "pos", staticmethod(lambda: away))
    window.exports.attention_menu.show_menu(panel.canvas.mapFromScene(cell))
    assert plain_hint(panel)
    over = panel.canvas.mapToGlobal(panel.canvas.mapFromScene(cell))
    monkeypatch.setattr(QtGui.QCursor, "pos", staticmethod(lambda: over))
    window.exports.attention_menu.show_menu(panel.canvas.mapFromScene(cell))
    assert "weight" in panel.hover.text()


def test_arrow_keys_on_the_heatmap_read_its_cells_out(qtbot, window, panel):
    """A keyboard user could not read one exact weight ("Hover over a cell…"): with the heatmap focused, the arrows
    walk its cells and the read-out names each, from the framed row's first cell."""
    window.state.update(kind="cross", layer=1, head=1, step=2)
    w = window.trace.attention("cross", 1, 1)
    rows, cols = window.trace.axis_tokens("cross")
    panel.canvas.setFocus()
    qtbot.waitUntil(panel.canvas.hasFocus)
    qtbot.keyClick(panel.canvas, QtCore.Qt.Key.Key_Right)          # the first press: the framed row's first cell
    assert (f"query “{rows[2]}” (position 2, predicting “{window.trace.out_tokens[2]}”) → key “{cols[0]}” "
            f"(position 0): weight {w[2, 0]:.6f}") in panel.hover.text()
    for key in (QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Down):
        qtbot.keyClick(panel.canvas, key)
    assert f"”) → key “{cols[2]}” (position 2): weight {w[3, 2]:.6f}" in panel.hover.text()
    marks = panel._cell_marks                                       # the cell read is framed, black and white
    assert all(m.isVisible() and m.rect() == QtCore.QRectF(1.5, 2.5, 1, 1) for m in marks)
    for _ in range(40):                                             # held at the edge
        qtbot.keyClick(panel.canvas, QtCore.Qt.Key.Key_Up)
    assert f"query “{rows[0]}” (position 0, predicting" in panel.hover.text()
    panel._hovered(scene_pos(panel.focus, 1, 1))                    # the pointer reads a cell: no frame
    assert not any(m.isVisible() for m in marks)


def test_the_kind_picker_cuts_a_label_it_has_no_room_for_with_an_ellipsis(qtbot, window, panel):
    """Presentation mode at 1024 × 768 drew "Cross (decoder → encoder" with no sign of what was missing."""
    window.state.update(kind="cross")
    picker = panel.kind
    label = window.trace.schema.kind("cross").label
    assert picker.currentText() == label and label.endswith(")")
    picker.resize(picker.sizeHint())
    assert picker.shown_text() == label                        # room: the whole label
    picker.resize(picker.sizeHint().width() // 2, picker.height())
    shown = picker.shown_text()
    assert shown.endswith("…") and label.startswith(shown[:-1]) and len(shown) < len(label)
    assert picker.itemText(picker.currentIndex()) == label    # the list keeps the whole label
    picker.grab()                                              # (paints with it)


def test_a_step_change_draws_the_row_axis_again_only_when_its_labels_are_thinned(shown_panel, show_trace, tiny_lm,
                                                                                 monkeypatch):
    """The framed row's label is kept when rows are left out, so a new step's row draws the axis again then; with
    every row's label drawn there is nothing to keep, and the axis' picture stays (it was drawn again at each
    step change: 1 ms)."""
    from model import translate
    from visualizer.panels.attention import AttentionPanel
    from visualizer.plotting.token_axis import TokenAxis
    drawn = []
    real = TokenAxis.drawPicture

    def draw(self, p, axis_spec, ticks, texts):
        drawn.append((self, [text.lstrip("\n") for _, _, text in texts]))
        real(self, p, axis_spec, ticks, texts)
    monkeypatch.setattr(TokenAxis, "drawPicture", draw)
    panel = shown_panel(AttentionPanel, 900, 700)

    def rows_drawn(trace, step: int) -> list[str] | None:
        """The framed heatmap's row labels drawn at this step, None when its axis was not drawn again."""
        drawn.clear()
        kind = [k for k in trace.schema.kinds if k.by_step][-1].name
        show_trace(panel, trace, kind=kind, step=step)
        panel.grab()
        rows = [texts for axis, texts in drawn if axis is panel.focus.plot.getAxis("left")]
        return rows[-1] if rows else None

    short = translate(tiny_lm, "the cat", target="le chat").trace
    rows_drawn(short, 0), rows_drawn(short, 1)             # shown and laid out
    assert rows_drawn(short, 2) is None and rows_drawn(short, 0) is None    # every row's label is drawn: kept
    words = ("le chat " * 20).strip()
    long = translate(tiny_lm, "the cat sat", target=words).trace
    panel.resize(900, 260)
    first = rows_drawn(long, 0)
    tokens = [str(t) for t in long.tokens(long.schema.output_stack.tokens)]
    assert first is not None and len(first) < len(tokens)
    hidden = next(i for i in range(1, len(tokens)) if panel.focus.plot.getAxis("left").labels[i] not in first
                  or first.count(panel.focus.plot.getAxis("left").labels[i]) < tokens[:i + 1].count(tokens[i]))
    again = rows_drawn(long, hidden)
    assert again is not None and again != first            # the new step's row is drawn


def test_a_head_that_computed_nan_leaves_its_layers_other_heads_their_colours(trace):
    """A model whose one head computed NaN (a damaged weight) made the layer's colour scale NaN, and the small
    multiples of its other heads were drawn all in the colour of 0 (QA). The scale is the largest finite weight."""
    from visualizer.panels.thumbnails import head_levels
    weights = trace.attention("enc_self", 0).astype(np.float64).copy()
    good = float(weights[1:].max())
    weights[0] = np.nan
    assert head_levels(weights, "layer")[1] == (0.0, good)
    assert head_levels(weights, "head")[1] == (0.0, float(weights[1].max()))
    assert head_levels(weights, "head")[0] == (0.0, 1.0)                 # nothing finite: 0 to 1
    weights[:] = np.inf
    assert head_levels(weights, "layer")[1] == (0.0, 1.0)


def test_a_token_its_axis_holds_twice_keeps_its_position_in_the_short_read_outs(qtbot, window, panel):
    """The seed example's decoder reads "<s> sat sat sat …": at 1366 × 768 the read-out "“sat” (predicting
    “sat”) → “sat”" named no cell (QA as a student). A repeated token keeps its position; a token once on its
    axis not."""
    window.state.update(target="le le chat", kind="dec_self", layer=0, head=0)
    qtbot.waitUntil(lambda: window.trace is not None and window.trace.meta.get("mode") == "teacher-forced"
                    and panel.focus.rows[:3] == ["<s>", "le", "le"], timeout=20000)
    panel._hovered(scene_pos(panel.focus, 2, 1))
    weight = panel.hover.toolTip().rsplit("weight ", 1)[-1]
    nxt = window.trace.out_tokens[2]
    assert f"“le” at 2 (next “{nxt}”) → “le” at 1: {weight}" in panel.hover._shorter
    panel._hovered(scene_pos(panel.focus, 2, 0))
    assert any(form.startswith("“le” at 2 (next") and "→ “<s>”:" in form for form in panel.hover._shorter)


def test_the_wheel_zooms_in_on_the_focused_heads_cells_and_a_double_click_shows_it_whole(qtbot, window, panel):
    """A 128-token head had a pixel a cell at 1366 × 768 and no zoom (QA): the wheel zooms in on the focused head
    (the small heads never), the read-out names the cell under the pointer in the zoomed view, another head keeps the
    zoom, the arrow keys move the view with the cell they read, and a double-click shows the matrix whole."""
    from PySide6 import QtGui, QtWidgets
    from test_window_controls import wait_idle
    words = " ".join(["the cat sat on the mat"] * 8)
    window.inputs.sentence.setText(words)
    wait_idle(qtbot, window, lambda t: t.meta["sentence"] == words)
    window.state.update(kind="enc_self", layer=0, head=0)
    qtbot.wait(50)
    vb = panel.focus.plot.vb
    assert not panel.focus.zoomed and not any(hp.plot.vb.state["mouseEnabled"][0] for hp in panel.small)
    centre = vb.mapViewToScene(QtCore.QPointF(10, 10))
    at = panel.canvas.mapFromScene(centre)
    for _ in range(6):
        wheel = QtGui.QWheelEvent(QtCore.QPointF(at), QtCore.QPointF(panel.canvas.mapToGlobal(at)), QtCore.QPoint(),
                                  QtCore.QPoint(0, 120), QtCore.Qt.MouseButton.NoButton,
                                  QtCore.Qt.KeyboardModifier.NoModifier, QtCore.Qt.ScrollPhase.NoScrollPhase, False)
        QtWidgets.QApplication.sendEvent(panel.canvas.viewport(), wheel)
    qtbot.waitUntil(lambda: panel.focus.zoomed)
    (x0, x1), (y0, y1) = vb.viewRange()
    assert x0 < 10 < x1 and y0 < 10 < y1 and x1 - x0 < 0.6 * len(window.trace.src_tokens)
    rows_axis = panel.focus.plot.getAxis("left")                    # rows in view, fewer labelled: the hint says so
    low, high = sorted(rows_axis.range)
    if len(rows_axis.visible_labels()) < sum(low <= p <= high for p in rows_axis.positions):
        assert panel.focus.labels_hidden() is True
    panel._hovered(vb.mapViewToScene(QtCore.QPointF(11, 9)))
    rows, cols = window.trace.axis_tokens("enc_self")
    assert panel.hover.text().startswith(f"query “{rows[9]}” (position 9) → key “{cols[11]}” (position 11)")
    window.state.update(head=1)                                        # another head: the same cells in view
    qtbot.wait(20)
    assert vb.viewRange()[0] == [x0, x1]
    panel.canvas.setFocus()
    for _ in range(len(cols)):                                         # the keyboard reads its way to the last column
        panel.step_cell(0, 1)
    assert vb.viewRange()[0][1] >= len(cols) - 1.5
    # another head keeps the cell the keys read, framed and read out (it went, and the next key started again from
    # the first cell: QA, a lecturer comparing one cell across heads); the pointer leaving the canvas keeps it too
    read = panel.focus.cell_at(panel._pointer)
    window.state.update(head=2)
    qtbot.wait(20)
    assert panel.focus.cell_at(panel._pointer) == read and panel._cell_marks[0].isVisible()
    assert panel.hover.text().startswith(f"query “{rows[read[0]]}” (position {read[0]})")
    QtWidgets.QApplication.sendEvent(panel.canvas, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    panel.step_cell(0, -1)
    assert panel.focus.cell_at(panel._pointer) == (read[0], read[1] - 1)
    # from the keyboard: − out, + in around the cell the arrow keys read, 0 whole (a remote has no wheel)
    from PySide6 import QtTest
    width = vb.viewRange()[0][1] - vb.viewRange()[0][0]
    QtTest.QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_Minus)
    assert vb.viewRange()[0][1] - vb.viewRange()[0][0] == pytest.approx(2 * width, rel=0.01)
    QtTest.QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_Plus, QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert vb.viewRange()[0][1] - vb.viewRange()[0][0] == pytest.approx(width, rel=0.01)
    (x0, x1), _ = vb.viewRange()
    assert x0 <= panel.focus.cell_at(panel._pointer)[1] <= x1         # around the cell read: still in view
    for _ in range(4):                                                 # in close: a handful of cells in view
        QtTest.QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_Plus, QtCore.Qt.KeyboardModifier.ShiftModifier)
    # every row and column in view has its label: no hint that some are hidden (it said so, QA); the rows' range
    # comes high to low (the axis inverted), and had counted none in view (QA)
    qtbot.wait(20)
    rows_axis = panel.focus.plot.getAxis("left")
    assert rows_axis.range[0] > rows_axis.range[1]
    assert panel.focus.labels_hidden() is False
    QtTest.QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_0)
    assert not panel.focus.zoomed
    assert panel.focus.labels_hidden() is True                         # 49 rows in 300 pixels: some unlabelled
    QtTest.QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_Equal)
    assert panel.focus.zoomed
    double = type("Click", (), {"double": lambda self: True, "scenePos": lambda self: vb.mapViewToScene(
        QtCore.QPointF(*vb.viewRect().center().toTuple()))})()
    panel._clicked(double)                                             # a double-click on the focused head
    assert not panel.focus.zoomed and window.state.head == 1


def test_the_keys_go_on_from_their_cell_after_the_view_moved_and_start_again_in_another_kind(qtbot, window, panel):
    """The next arrow key and + − worked from the point the cell had been read at: after a resize or another kind
    it fell on another cell or none, and Right went down a row or back to the first cell (QA). A stage without
    attention shows its note, not the cell; another kind or sentence starts the keys again."""
    window.state.update(kind="enc_self", layer=0, head=0)
    qtbot.wait(20)
    panel.canvas.setFocus()
    for d in ((0, 1), (0, 1), (1, 0), (1, 0)):                       # the first press reads the first cell
        panel.step_cell(*d)
    assert panel._key_cell == (2, 1)
    window.state.update(head=1)
    window.resize(window.width() - 150, window.height() - 100)       # the view's layout moves under the cell
    qtbot.wait(100)
    panel.step_cell(0, 1)
    assert panel._key_cell == (2, 2) and panel.focus.cell_at(panel._pointer) == (2, 2)
    window.state.update(sublayer="ffn")                              # no attention here: the stage's note
    qtbot.waitUntil(lambda: panel._key_cell is None and panel.hover.text().startswith("The feed-forward"))
    window.state.update(sublayer="self")
    panel.step_cell(0, 1)                                            # from the first cell again
    assert panel._key_cell == (0, 0)
    window.state.update(kind="cross")                                # other rows and columns: start again
    qtbot.wait(20)
    assert panel._key_cell is None
