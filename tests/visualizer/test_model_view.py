"""Model view: its thumbnails hold the trace's arrays, a click focuses the head, hovering names its metrics,
switched-off heads are crossed out."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore

from model.analysis.metrics import trace_metrics
from model.synthetic import synthetic_trace
from visualizer.panels.model_view import ModelViewPanel
from visualizer.plotting.colormaps import lookup_table


@pytest.fixture
def panel(shown_panel):
    return shown_panel(ModelViewPanel, 700, 700)


def test_thumbnails_hold_the_traces_arrays(panel, shaped_trace, show_trace):
    for info in shaped_trace.schema.kinds:
        show_trace(panel, shaped_trace, kind=info.name)
        L, H = shaped_trace.n_layers(info.stack), shaped_trace.n_heads
        assert panel.shape[:2] == (L, H)
        for l in range(L):
            mask = shaped_trace.mask(info.name, l)
            for h in range(H):
                expected = np.where(mask, shaped_trace.attention(info.name, l, h), np.nan)
                np.testing.assert_array_equal(panel.thumbnail(l, h), expected)
        # the gaps between thumbnails hold nothing
        assert np.isnan(panel.raw).sum() == panel.raw.size - sum(
            shaped_trace.mask(info.name, l).sum() for l in range(L)) * H


def test_a_click_focuses_the_head_and_hover_shows_its_metrics(panel, shapes, show_trace):
    trace = synthetic_trace(shapes["encoder-decoder"], seed=2)
    state = show_trace(panel, trace, kind="cross")
    centre = panel.tile_rect(4, 6).center()
    scene = panel.plot.vb.mapViewToScene(centre)
    assert panel.head_at(scene) == (4, 6)
    panel._clicked(scene)
    assert (state.kind, state.layer, state.head) == ("cross", 4, 6)
    panel.render(trace, state)
    assert panel.frame.isVisible() and panel.frame.rect().center() == centre
    panel._hovered(scene)
    m = next(r for r in trace_metrics(trace) if (r.kind, r.layer, r.head) == ("cross", 5, 7))
    assert panel.hover.text().startswith(f"Layer 5, head 7: entropy {m.entropy_bits:.2f} bits, max")
    assert "itself" not in panel.hover.text() and "distance" not in panel.hover.text()   # two sentences' positions
    gap = panel.tile_rect(0, 0).bottomRight() + QtCore.QPointF(0.5 * panel.gap, 0.5 * panel.gap)
    assert panel.head_at(panel.plot.vb.mapViewToScene(gap)) is None


def test_the_arrow_keys_choose_a_head_and_read_out_its_metrics(panel, shapes, show_trace, monkeypatch):
    """It could not be used from the keyboard: the arrow keys did nothing, and its description asked for a mouse
    (QA, a blind student). The arrows move the focused head a layer or a head, within the mosaic, and its metrics
    are shown and read out."""
    from PySide6.QtTest import QTest

    from visualizer import accessible
    heard = []
    monkeypatch.setattr(accessible, "announce", lambda widget, text: heard.append(text))
    trace = synthetic_trace(shapes["encoder-decoder"], seed=2)
    state = show_trace(panel, trace, kind="cross", layer=1, head=1)
    L, H = panel.shape[:2]
    panel.canvas.setFocus()
    for key, expected in ((QtCore.Qt.Key.Key_Right, (1, 2)), (QtCore.Qt.Key.Key_Down, (2, 2)),
                          (QtCore.Qt.Key.Key_Left, (2, 1)), (QtCore.Qt.Key.Key_Up, (1, 1))):
        QTest.keyClick(panel.canvas, key)
        assert (state.kind, state.layer, state.head) == ("cross", *expected)
        assert heard[-1] == panel.hover.text() and heard[-1].startswith(
            f"Layer {expected[0] + 1}, head {expected[1] + 1}: entropy")
    for _ in range(L + H):                                   # stops at the mosaic's corner
        QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_Down)
        QTest.keyClick(panel.canvas, QtCore.Qt.Key.Key_Right)
    assert (state.layer, state.head) == (L - 1, H - 1)
    assert "arrow keys" in panel.canvas.accessibleDescription()


def test_hover_leaves_out_the_end_token_a_causal_decoder_never_reads(panel, shapes, show_trace):
    """QA: a decoder self head's read-out said "the end token nan%" (no query reads </s>)."""
    trace = synthetic_trace(shapes["encoder-decoder"], seed=2)
    show_trace(panel, trace, kind="dec_self")
    panel._hovered(panel.plot.vb.mapViewToScene(panel.tile_rect(0, 0).center()))
    m = next(r for r in trace_metrics(trace) if (r.kind, r.layer, r.head) == ("dec_self", 1, 1))
    assert np.isnan(m.end_token)
    assert "nan" not in panel.hover.text() and "end token" not in panel.hover.text()
    assert f"on the first token {m.first_token:.0%}, punctuation {m.punctuation:.0%}" in panel.hover.text()


def test_switched_off_heads_are_crossed_out(panel, shapes, show_trace):
    trace = synthetic_trace(shapes["encoder-only"])
    kind = trace.schema.kinds[0].name
    trace.meta["ablations"] = [f"{kind}:2:3", f"{kind}:1:1"]
    show_trace(panel, trace, kind=kind)
    assert panel.crossed == [(0, 0), (1, 2)]
    x, y = panel.crosses.getData()
    assert len(x) == 8
    assert (x[0], y[0]) == (panel.tile_rect(0, 0).left(), panel.tile_rect(0, 0).top())


def test_the_pixels_are_each_heads_weights_on_its_own_scale(panel, shapes, show_trace):
    trace = synthetic_trace(shapes["decoder-only"], tgt_tokens=["<s>", "a", "b", "c", "d"])
    kind = trace.schema.kinds[0].name
    show_trace(panel, trace, kind=kind)
    lut = panel.lut
    for l in range(panel.shape[0]):
        for h in range(panel.shape[1]):
            w = trace.attention(kind, l, h)
            mask = trace.mask(kind, l)
            r = panel.tile_rect(l, h)
            pixels = panel.rgba[int(r.top()): int(r.bottom()), int(r.left()): int(r.right())]
            expected = lut[np.floor(w / w.max() * 255 + 0.5).astype(int)]
            np.testing.assert_array_equal(pixels[mask], expected[mask])
            assert np.all(pixels[~mask] == 0)             # masked (the causal triangle): transparent
    # and a colour bar of that scale under the heads, in the colour map of the heads (a sentence in the hint had
    # been all there was of it: QA)
    from visualizer.panels.model_view import SCALE
    for name in ("viridis", "cividis"):
        panel.set_colormap(name)
        np.testing.assert_array_equal(panel.bar.colorMap().getLookupTable(nPts=256, alpha=True), lookup_table(name))
    assert panel.bar.isVisible() and panel.bar.getAxis("bottom").labelText == SCALE


def test_the_focus_frame_on_the_grids_edge_is_shown_whole(panel, shapes, show_trace):
    """QA: on a 2 × 4 grid of 8-token heads the frame round L2 H1 showed its top and right edges only: the view
    ended a third of a cell outside the grid, the frame lies half a cell outside its tile."""
    trace = synthetic_trace(shapes["encoder-only"])
    kind = trace.schema.kinds[0].name
    L = trace.n_layers(trace.schema.kinds[0].stack)
    show_trace(panel, trace, kind=kind, layer=L - 1, head=0)
    (x0, x1), (y0, y1) = panel.plot.vb.viewRange()
    frame = panel.frame.rect()
    assert frame == panel.tile_rect(L - 1, 0).adjusted(-0.5, -0.5, 0.5, 0.5)
    assert x0 < frame.left() and frame.right() < x1 and y0 < frame.top() and frame.bottom() < y1


def test_row_and_column_labels_of_many_layers_and_heads_never_overlap(shown_panel, show_trace, qtbot):
    """24 layers × 16 heads in a 400 × 380 dock: "L10" … "L24" piled up and the columns read "H9H10H11…" (QA).
    Every k-th label is drawn where all would overlap, the focused layer's and head's always; a roomy panel draws
    all."""
    from PySide6 import QtGui

    from model.families.shapes import decoder_only
    from visualizer.plotting.text import tick_font
    trace = synthetic_trace(decoder_only("gpt2", 24, 64, 16, 256), tgt_tokens=["<s>"] + [f"w{i}" for i in range(20)])
    panel = shown_panel(ModelViewPanel, 400, 380)
    show_trace(panel, trace, kind=trace.schema.kinds[0].name, layer=19, head=9)
    qtbot.wait(20)
    metrics = QtGui.QFontMetricsF(tick_font(9))
    vb = panel.plot.vb
    for side, labels_at, room in (("left", lambda p: vb.mapViewToScene(QtCore.QPointF(0, p)).y(), metrics.height()),
                                  ("top", lambda p: vb.mapViewToScene(QtCore.QPointF(p, 0)).x(),
                                   metrics.horizontalAdvance("H16"))):
        ticks = panel.plot.getAxis(side)._tickLevels[0]
        places = [labels_at(p) for p, _ in ticks]
        assert all(b - a >= room for a, b in zip(places, places[1:])), (side, ticks)
        assert len(ticks) < (24 if side == "left" else 16)
    assert "L20" in [t for _, t in panel.plot.getAxis("left")._tickLevels[0]]
    assert "H10" in [t for _, t in panel.plot.getAxis("top")._tickLevels[0]]
    panel.resize(1400, 1300)
    qtbot.waitUntil(lambda: panel.label_steps == (1, 1))
    assert len(panel.plot.getAxis("left")._tickLevels[0]) == 24


def test_at_the_output_the_last_layers_head_is_framed_as_the_attention_panel_shows_it(panel, shapes, show_trace):
    """At linear + softmax the attention panel shows the last layer (the one the linear map reads), and the Model
    view framed layer 1 (QA in class)."""
    from model.schema import OUTPUT
    trace = synthetic_trace(shapes["encoder-decoder"], seed=3)
    kind = trace.schema.kinds[-1].name
    state = show_trace(panel, trace, kind=kind, head=2, stack=OUTPUT, sublayer="", layer=0)
    last = trace.n_layers(trace.schema.kind(kind).stack) - 1
    assert state.attention_layer(last + 1) == last
    assert panel.frame.isVisible() and panel.frame.rect().center() == panel.tile_rect(last, 2).center()
