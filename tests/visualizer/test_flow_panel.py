"""The Rollout & lines panel: the rollout it shows is the trace's, its lines are the focused head's weights, and
both save as PNG, SVG and CSV."""
from __future__ import annotations

import numpy as np
import pytest

from PySide6 import QtWidgets

from model.analysis.rollout import trace_rollout
from model.synthetic import synthetic_trace
from visualizer.export import read_heatmap_csv
from visualizer.panels.flow import LINES, MIN_WEIGHT, ROLLOUT, FlowPanel
from visualizer.plot_menu import widget_export, write_plot
from visualizer.plotting.scenes import settle_scenes
from visualizer.state import ViewState


@pytest.fixture
def panel(qtbot):
    p = FlowPanel(ViewState())
    qtbot.addWidget(p)
    p.resize(500, 500)
    p.show()
    return p


def test_rollout_shows_the_traces_rollout(panel, shapes):
    trace = synthetic_trace(shapes["encoder-decoder"], seed=3)
    state = ViewState.for_trace(trace, kind="enc_self", layer=3)
    panel.state = state
    panel.render(trace, state)
    np.testing.assert_allclose(panel.rollout_box.shown, trace_rollout(trace, "enc_self")[3], rtol=1e-6)
    assert panel.rollout_box.rows == trace.src_tokens
    state.update(kind="cross", layer=5)          # not a self-attention kind: the decoder's own self-attention
    panel.render(trace, state)
    assert panel.shown_kind == "dec_self"
    np.testing.assert_allclose(panel.rollout_box.shown, trace_rollout(trace, "dec_self")[5], rtol=1e-6)
    assert "off" not in panel.rollout_box.title
    import dataclasses
    n = trace.attention("dec_self", 1).shape[0]
    heads = ["dec_self:1:1"] + [f"dec_self:2:{h + 1}" for h in range(n)]     # (a run's meta lists each head)
    off = dataclasses.replace(trace, meta=dict(trace.meta, ablations=heads))
    panel.render(off, state)                     # the heads off in the run, up to the layer shown, are named
    assert panel.rollout_box.title.endswith(f"to layer 6 ({1 + n} heads off: adding nothing)")
    np.testing.assert_allclose(panel.rollout_box.shown, trace_rollout(off, "dec_self")[5], rtol=1e-6)


def test_at_the_output_both_views_show_the_last_layer_as_the_attention_panel_does(panel, shapes):
    """At Linear + softmax the attention panel shows layer 5's cross-attention and the Rollout tab stayed at layer
    1 (QA, a 90-minute lesson): one rule for both, ViewState.attention_layer."""
    from model.schema import OUTPUT, Stage
    trace = synthetic_trace(shapes["encoder-decoder"], seed=3)
    state = ViewState.for_trace(trace, kind="dec_self", layer=0)
    panel.state = state
    state.go_to(Stage(OUTPUT))
    assert state.stack == OUTPUT and state.layer == 0
    last = trace.n_layers("dec") - 1
    panel.render(trace, state)
    np.testing.assert_allclose(panel.rollout_box.shown, trace_rollout(trace, "dec_self")[last], rtol=1e-6)
    assert panel.rollout_box.title.endswith(f"to layer {last + 1}")
    panel.mode.setCurrentIndex(LINES)
    panel.render(trace, state)
    assert f"layer {last + 1}," in panel.lines_box.title


def test_lines_are_the_focused_heads_weights(panel, shaped_trace):
    kind = shaped_trace.schema.kinds[-1].name
    state = ViewState.for_trace(shaped_trace, kind=kind, layer=1, head=2)
    panel.state = state
    panel.mode.setCurrentIndex(LINES)
    panel.render(shaped_trace, state)
    w = shaped_trace.attention(kind, 1, 2)
    mask = shaped_trace.mask(kind, 1)
    expected = {(i, j): float(w[i, j]) for i in range(w.shape[0]) for j in range(w.shape[1])
                if mask[i, j] and w[i, j] >= MIN_WEIGHT}
    drawn = {(i, j): v for i, j, v in panel.lines_box.lines}
    assert drawn.keys() == expected.keys()
    assert np.allclose([drawn[k] for k in expected], list(expected.values()))
    assert sum(len(c.getData()[0] if c.getData()[0] is not None else []) for c in panel.lines_box.curves) == 2 * len(drawn)
    rows, cols = shaped_trace.axis_tokens(kind)
    assert [t.toPlainText() for t in panel.lines_box.labels] == rows + cols
    panel.mean.setChecked(True)
    assert np.allclose(np.nan_to_num(panel.lines_box.shown), np.where(mask, shaped_trace.attention(kind, 1).mean(0), 0))


def test_lines_mean_leaves_out_the_heads_switched_off(panel, shaped_trace):
    """QA: with 3 of 8 heads off, the lines' "mean of heads" was all 8 heads' mean; the attention panel's is the
    mean of the heads on (and says so)."""
    from copy import copy
    kind = shaped_trace.schema.kinds[-1].name
    trace = copy(shaped_trace)
    trace.meta = {**shaped_trace.meta, "ablations": [f"{kind}:2:1", f"{kind}:2:3"]}
    state = ViewState.for_trace(trace, kind=kind, layer=1, head=0)
    panel.state = state
    panel.mode.setCurrentIndex(LINES)
    panel.mean.setChecked(True)
    panel.render(trace, state)
    w, mask = trace.attention(kind, 1), trace.mask(kind, 1)
    on = [h for h in range(len(w)) if h not in (0, 2)]
    assert np.allclose(np.nan_to_num(panel.lines_box.shown), np.where(mask, w[on].mean(0), 0))
    assert panel.lines_box.title.endswith(f"mean of the {len(on)} heads on")


def test_both_views_save_as_png_svg_and_csv(panel, trace, tmp_path):
    state = ViewState.for_trace(trace, kind="cross", layer=1, head=1)
    panel.state = state
    # rollout of the decoder's self-attention (cross-attention has none): target tokens; lines: the cross head
    for mode, box, keys in ((ROLLOUT, panel.rollout_box, trace.tgt_tokens), (LINES, panel.lines_box, trace.src_tokens)):
        panel.mode.setCurrentIndex(mode)
        panel.render(trace, state)
        settle_scenes(panel)                       # as the window does after every render
        QtWidgets.QApplication.processEvents()
        export = widget_export(box)
        for fmt in ("png", "svg", "csv"):
            write_plot(export, tmp_path / f"{mode}.{fmt}", fmt)
        assert (tmp_path / f"{mode}.png").read_bytes()[:4] == b"\x89PNG"
        assert keys[2] in (tmp_path / f"{mode}.svg").read_text(encoding="utf-8")
        rows, cols, matrix = read_heatmap_csv(tmp_path / f"{mode}.csv")
        assert cols == keys
    np.testing.assert_allclose(matrix, trace.attention("cross", 1, 1), rtol=1e-6)
