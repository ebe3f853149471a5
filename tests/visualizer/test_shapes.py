"""Three model shapes the bundled models do not have (decoder-only with RMSNorm, rotary positions and grouped-query
heads; encoder-only; 6+6 layers with 8 heads), as synthetic Traces with no weights: every panel and the
architecture map render every stage from the schema, stepping visits exactly the schema's stages, and every
attention matrix exports in every format with the Trace's numbers."""
from __future__ import annotations

import html

import numpy as np
import pytest

from model.schema import OUTPUT, Stage
from visualizer.export import export_heatmaps, heatmap_specs, read_heatmap_csv
from visualizer.panels.architecture import ArchitectureMap
from visualizer.panels.attention import AttentionPanel
from visualizer.panels.embeddings import EmbeddingsPanel
from visualizer.panels.inspector import InspectorPanel
from visualizer.panels.layernorm import LayerNormPanel, ln_stage
from visualizer.panels.output import OutputPanel
from visualizer.state import ViewState


@pytest.fixture
def panels(qtbot):
    state = ViewState()
    made = {"architecture": ArchitectureMap(state), "attention": AttentionPanel(state),
            "layernorm": LayerNormPanel(), "embeddings": EmbeddingsPanel(), "inspector": InspectorPanel(),
            "output": OutputPanel()}
    for p in made.values():
        qtbot.addWidget(p)
        p.resize(700, 600)
        p.show()
    return state, made


def test_stepping_visits_exactly_the_schema_stages(shaped_trace):
    sc = shaped_trace.schema
    s = ViewState.for_trace(shaped_trace)
    s.first()
    seen = [s.stage]
    while s.next_sublayer():
        seen.append(s.stage)
    assert seen == sc.stages()
    kinds_seen = {sc.kind_at(st.stack, st.sublayer).name for st in seen if sc.kind_at(st.stack, st.sublayer)}
    assert kinds_seen == set(sc.kind_names)           # no kind the model lacks (no cross-attention without one)
    while s.prev_sublayer():
        pass
    assert s.stage == seen[0]


def test_every_panel_shows_the_trace_at_every_stage(panels, shaped_trace):
    state, p = panels
    t, sc = shaped_trace, shaped_trace.schema
    state.set_shape(sc, t.n_steps)
    for stage in sc.stages():
        state.go_to(stage)
        state.update(head=sc.n_heads - 1, step=t.n_steps - 1)
        for panel in p.values():
            panel.render(t, state)
        # attention: the picker lists the model's kinds; the large heatmap is the trace's head
        att = p["attention"]
        assert [att.kind.itemData(i) for i in range(att.kind.count())] == list(sc.kind_names)
        k = sc.kind(state.kind)
        n_layers = sc.stack(k.stack).n_layers
        layer = (min(state.layer, n_layers - 1) if sc.is_layer_stage(stage)
                 else n_layers - 1 if stage.stack == OUTPUT else state.layer)      # the output reads the last layer
        w, m = t.attention(k.name, att.shown_layer), t.mask(k.name, att.shown_layer)
        np.testing.assert_array_equal(att.focus.shown, np.where(m, w[sc.n_heads - 1], np.nan))
        assert att.shown_layer == layer
        # the norm panel: the statistics of the norm in view
        stack, ln_layer, sub, _ = ln_stage(state, sc)
        np.testing.assert_array_equal(p["layernorm"].shown["mu"], t.get(stack, ln_layer, sub, "ln_mean"))
        np.testing.assert_array_equal(p["layernorm"].shown["gamma"], t.get(stack, ln_layer, sub, "gamma"))
        # embeddings: the input of the stack in view
        side = sc.stack_of_stage(stage).tokens
        np.testing.assert_array_equal(p["embeddings"].arrays["x"], t[f"{side}.x"])
        assert p["embeddings"].tokens == t.tokens(side)
        # the output distribution of the row in view
        if sc.has_output:
            np.testing.assert_allclose(p["output"].top_probs, np.sort(t.probs(t.n_steps - 1))[::-1][:10], rtol=1e-6)
        assert p["inspector"].html
    assert set(p["architecture"].boxes) == set(sc.stages())


def test_the_architecture_map_has_one_column_a_stack(panels, shaped_trace):
    state, p = panels
    sc = shaped_trace.schema
    state.set_shape(sc, shaped_trace.n_steps)
    arch = p["architecture"]
    arch.render(shaped_trace, state)
    lefts = {round(arch.boxes[Stage(st.embed_stage)].left()) for st in sc.stacks}
    assert len(lefts) == len(sc.stacks)
    labels = [label for label, _, _ in arch.frames]
    assert labels == [f"{st.title} layer {l + 1}" for st in sc.stacks for l in range(st.n_layers)]
    if sc.has_output:
        assert Stage(OUTPUT) in arch.boxes


def test_a_model_without_an_output_layer_says_so_in_one_line(qtbot, shapes):
    from dataclasses import replace
    from model.synthetic import synthetic_trace
    t = synthetic_trace(replace(shapes["encoder-only"], has_output=False))
    panel = OutputPanel()
    qtbot.addWidget(panel)
    panel.render(t, ViewState.for_trace(t))
    assert "no output layer" in panel.header.text() and "<br>" not in panel.header.text()
    assert OUTPUT not in [s.stack for s in t.schema.stages()]


@pytest.mark.parametrize("fmt", ["csv", "png", "svg"])
def test_every_head_exports_in_every_format(qapp, shaped_trace, tmp_path, fmt):
    t, sc = shaped_trace, shaped_trace.schema
    specs = heatmap_specs(t, "synthetic")
    assert len(specs) == sum(sc.stack(k.stack).n_layers * (sc.n_heads + 1) for k in sc.kinds)
    if fmt != "csv":
        specs = [specs[0], specs[-1]]                 # images are slow: the first and the last of each shape
    written = export_heatmaps(specs, tmp_path, fmt)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)
    if fmt == "csv":
        k = sc.kinds[-1]
        rows, cols, matrix = read_heatmap_csv(tmp_path / f"{k.file}_L1_H{sc.n_heads}.csv")
        assert (rows, cols) == t.axis_tokens(k.name)
        shown = np.where(t.mask(k.name, 0), t.attention(k.name, 0, sc.n_heads - 1), np.nan)   # masked: empty
        np.testing.assert_array_equal(matrix.astype(np.float32), shown.astype(np.float32))


def show_synthetic(window, trace):
    """Put a synthetic trace on screen as a run's result (no model made it; view changes never run one)."""
    from types import SimpleNamespace
    result = SimpleNamespace(text=" ".join(trace.out_tokens), out_ids=[], trace=trace, truncated=0)
    window.set_vocab(trace.meta["vocab"])
    window.show_result(result, 0.0, False)


def test_the_window_steps_through_every_stage_with_the_keys(qtbot, window, shaped_trace):
    """PageDown (a presenter remote) walks the schema's pipeline; every stage is drawn in every panel, the caption
    names it, and the status bar describes the model's shape."""
    from PySide6 import QtCore
    sc = shaped_trace.schema
    show_synthetic(window, shaped_trace)
    window.menus.step_actions["First stage"].trigger()
    seen = [window.state.stage]
    for _ in range(len(sc.stages()) - 1):
        qtbot.keyClick(window, QtCore.Qt.Key.Key_PageDown)
        if window.state.stage != seen[-1]:
            seen.append(window.state.stage)
        assert sc.caption(window.state.stage)[0] in html.unescape(window.caption.label.text()).replace("\xa0", " ")
    assert seen == sc.stages()
    assert sc.describe() in window.status_model.text()
    att = window.attention
    assert [att.kind.itemData(i) for i in range(att.kind.count())] == list(sc.kind_names)
    k = sc.kind(window.state.kind)
    np.testing.assert_array_equal(att.focus.shown, np.where(shaped_trace.mask(k.name, att.shown_layer),
                                                            shaped_trace.attention(k.name, att.shown_layer)[0],
                                                            np.nan))
    assert not window.grab().isNull()


@pytest.mark.parametrize("parallel", [True, False])
def test_a_parallel_layers_sublayers_sit_side_by_side_on_the_map(panels, parallel):
    """GPT-NeoX and Phi add the attention's and the feed-forward network's outputs to the same input: the map draws
    a layer's two boxes on one row, side by side; a sequential layer's one under the other."""
    from model.families.shapes import decoder_only
    from model.synthetic import synthetic_trace
    schema = decoder_only("test", 2, 32, 4, 64, norm_place="pre", positions="rotary", parallel=parallel)
    trace = synthetic_trace(schema, None, ["the", "cat", "sat", "on"], seed=1)
    state, made = panels
    state.set_shape(schema, trace.n_steps)
    arch = made["architecture"]
    arch.render(trace, state)
    for layer in range(2):
        attn, ffn = (arch.boxes[Stage("dec", layer, key)] for key in ("self", "ffn"))
        if parallel:
            assert attn.top() == ffn.top() and attn.right() < ffn.left() and attn.width() == ffn.width()
        else:
            assert attn.bottom() < ffn.top() and attn.left() == ffn.left()
        assert arch.stage_at(ffn.center()) == Stage("dec", layer, "ffn")        # each box its own click
