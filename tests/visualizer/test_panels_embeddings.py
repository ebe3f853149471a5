"""The embeddings panel shows the Trace's e, p, x = e + p and their cosine similarity, for the side in view."""
from __future__ import annotations

import re

import numpy as np
import pytest

from model import translate
from visualizer.panels.embeddings import EmbeddingsPanel, cosine_similarity
from visualizer.state import ViewState


@pytest.fixture
def panel(qtbot):
    p = EmbeddingsPanel()
    qtbot.addWidget(p)
    p.resize(900, 800)
    p.show()
    return p


def test_source_heatmaps_equal_the_trace(panel, trace):
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=1, sublayer="ffn"))
    assert panel.side == "src" and panel.tokens == trace.src_tokens
    for key in ("embedding", "pe", "x"):
        np.testing.assert_array_equal(panel.maps[key].shown, trace[f"src.{key}"].astype(np.float32))
        assert panel.maps[key].rows == trace.src_tokens
        np.testing.assert_array_equal(panel.arrays[key], trace[f"src.{key}"])
    np.testing.assert_allclose(panel.arrays["x"], panel.arrays["embedding"] + panel.arrays["pe"], atol=1e-5)
    assert "Source" in panel.header.text()
    m = float(np.abs(trace["src.x"]).max())                        # the sum's map: colours from −m to +m
    assert f"{panel.levels['x'][1]:.3g} for x" in panel.header.text() and panel.levels["x"] == (-panel.levels["x"][1],
                                                                                               panel.levels["x"][1])
    assert panel.levels["x"][1] == pytest.approx(m, rel=1e-3)


def test_cosine_similarity_of_the_sum_with_token_labels(panel, trace):
    panel.render(trace, ViewState.for_trace(trace, stack="src_embed"))
    x = trace["src.x"].astype(np.float64)
    T = len(x)
    expected = np.array([[x[i] @ x[j] / np.linalg.norm(x[i]) / np.linalg.norm(x[j]) for j in range(T)]
                         for i in range(T)])
    np.testing.assert_allclose(panel.arrays["similarity"], expected, atol=1e-9)
    np.testing.assert_allclose(panel.similarity.shown, expected, atol=1e-6)
    np.testing.assert_allclose(np.diag(panel.similarity.shown), 1.0, atol=1e-6)
    assert panel.similarity.rows == trace.src_tokens and panel.similarity.cols == trace.src_tokens
    assert panel.similarity.row_axis.labels == trace.src_tokens
    assert panel.similarity.col_axis.labels == trace.src_tokens
    assert cosine_similarity(np.zeros((2, 3))).tolist() == [[0.0, 0.0], [0.0, 0.0]]   # zero rows: no NaN


@pytest.mark.parametrize("stack", ["tgt_embed", "dec", "output"])
def test_target_side_shows_the_decoder_input(panel, trace, stack):
    panel.render(trace, ViewState.for_trace(trace, stack=stack))
    assert panel.side == "tgt" and panel.tokens == trace.tgt_tokens
    for key in ("embedding", "pe", "x"):
        np.testing.assert_array_equal(panel.maps[key].shown, trace[f"tgt.{key}"].astype(np.float32))
    assert panel.similarity.shown.shape == (trace.n_steps, trace.n_steps)
    assert "decoder input" in panel.header.text()
    # y, as the captions write the decoder's vectors (y_t = √d_model · E_y[token_t] + PE(t)); x had read as the
    # encoder's (a student)
    assert "<i>y = e + p</i>" in panel.header.text() and panel.maps["x"].title.startswith("sum y = e + p")
    assert "similarity of y" in panel.similarity.title and "y_t = " in trace.schema.caption(
        trace.schema.stages()[len(trace.schema.stacks[0].sublayers) * trace.schema.stacks[0].n_layers + 1])[2]


def test_sinusoids_follow_the_dimension_chooser(panel, trace):
    panel.render(trace, ViewState.for_trace(trace, stack="enc"))
    pe = trace["src.pe"]
    d = pe.shape[1]
    assert panel.dim.maximum() == d - 1 and panel.sinusoidal
    panel.dim.setValue(4)
    assert panel.wave_dims == [4, 5, 6, 7]
    for curve, k in zip(panel.curves, panel.wave_dims):
        xs, ys = curve.getData()
        np.testing.assert_array_equal(xs, np.arange(len(pe)))
        np.testing.assert_allclose(ys, pe[:, k])
    assert panel.wave_names[0] == f"dim 4: sin(pos / 10000^(4/{d}))" and panel.wave_names[1].startswith("dim 5: cos")
    for name, k in zip(panel.wave_names, panel.wave_dims):          # each legend's formula draws its curve
        fn, a, b = re.fullmatch(rf"dim {k}: (sin|cos)\(pos / 10000\^\((\d+)/(\d+)\)\)", name).groups()
        np.testing.assert_allclose(getattr(np, fn)(np.arange(len(pe)) / 10000 ** (int(a) / int(b))), pe[:, k],
                                   atol=1e-6)
    assert "dim&nbsp;4:&nbsp;sin" in panel.wave_legend.text()
    assert [m.value() for m in panel.dim_marks] == [4, 5, 6, 7]
    # told apart by more than colour (under red-green colour blindness two of the four were the same grey): each
    # curve its own line style and marker, its dimension's mark on p its line style, its legend entry its marker
    styles = [curve.opts["pen"].style() for curve in panel.curves]
    marks = [curve.opts["symbol"] for curve in panel.curves]
    assert len(set(styles)) == len(set(marks)) == 4
    assert [m.pen.style() for m in panel.dim_marks] == styles
    glyphs = re.findall(r"16pt'>(.)</span>&nbsp;dim", panel.wave_legend.text())
    assert len(set(glyphs)) == 4 and {"o": "●", "s": "■", "t": "▼", "d": "◆"}[marks[1]] == glyphs[1]
    panel.dim.setValue(d - 2)                          # near the end: only the dimensions that exist
    assert panel.wave_dims == [d - 2, d - 1]
    assert panel.curves[2].getData()[0] is None or len(panel.curves[2].getData()[0]) == 0
    assert "OFF" not in panel.maps["pe"].title and not panel.notice.isVisibleTo(panel)


def test_positional_encoding_off_is_announced(panel, tiny_lm):
    tiny_lm.model.positional = False
    try:
        tr = translate(tiny_lm, "the cat sat on the mat").trace
    finally:
        tiny_lm.model.positional = True
    assert tr.meta["positional"] is False and not tr["src.pe"].any()
    panel.render(tr, ViewState.for_trace(tr, stack="enc"))
    assert panel.notice.isVisibleTo(panel) and "OFF" in panel.notice.text()
    assert "OFF" in panel.maps["pe"].title and not panel.sinusoidal
    np.testing.assert_array_equal(panel.maps["x"].shown, panel.maps["embedding"].shown)
    # the encoder reads a bag of tokens; the decoder's causal mask still orders its tokens (en-fr writes its words
    # in order with the positions off: "the model cannot tell word order" said otherwise, QA)
    assert "the encoder cannot tell word order" in panel.notice.text() and "mask" not in panel.notice.text()
    assert "p = 0 (switched off)" in panel.short_header.parts[0] and "PE(" not in panel.short_header.parts[0]
    panel.render(tr, ViewState.for_trace(tr, stack="dec"))
    assert "causal mask still orders them" in panel.notice.text() and "bag of tokens" not in panel.notice.text()


def test_any_stage_and_any_length_renders(panel, tiny_lm):
    for text in ("", "the " * 80, "the cat"):
        tr = translate(tiny_lm, text).trace
        for stage in tr.schema.stages():
            panel.render(tr, ViewState.for_trace(tr, stack=stage.stack, layer=stage.layer, sublayer=stage.sublayer))
        labels = panel.similarity.row_axis.visible_labels()
        assert labels and set(labels) <= set(panel.tokens)
    long = translate(tiny_lm, "the " * 80).trace
    panel.render(long, ViewState.for_trace(long, stack="enc"))
    panel.grab()
    shown = panel.similarity.row_axis.visible_labels()
    assert len(long.src_tokens) > 40 and 0 < len(shown) < len(long.src_tokens)     # crowded: thinned out


def test_a_short_panel_keeps_the_formula_and_tooltips_the_colour_ranges(panel, trace, qtbot):
    """At 1280 × 720 the header's five lines left the first map a strip: in a short panel the header keeps who and
    the formula, and the colour ranges (read off the trace) become its tooltip; tall again, they are back."""
    from PySide6 import QtGui
    from visualizer.panels.widgets import SHORT_PANEL_LINES
    panel.render(trace, ViewState.for_trace(trace, stack="src_embed"))
    ranges = f"{panel.levels['x'][1]:.3g} for x"
    assert ranges in panel.header.text() and panel.header.toolTip() == ""
    line = QtGui.QFontMetrics(panel.header.label.font()).height()
    panel.resize(900, (SHORT_PANEL_LINES - 3) * line)
    qtbot.waitUntil(lambda: ranges not in panel.header.text() and ranges in panel.header.toolTip())
    assert "x = e + p" in panel.header.text() and "Source" in panel.header.text()
    panel.resize(900, (SHORT_PANEL_LINES + 3) * line)
    qtbot.waitUntil(lambda: ranges in panel.header.text() and panel.header.toolTip() == "")


def test_the_controls_and_notes_follow_the_text_size_both_ways(qtbot):
    """A panel first opened in presentation mode kept its 19.6-point controls after it (QA), and one opened before
    it kept 12 points in class: they follow the widgets' text size, 12 points at least."""
    from PySide6 import QtGui
    big = QtGui.QFont()
    big.setPointSizeF(19.6)
    panel = EmbeddingsPanel()
    qtbot.addWidget(panel)
    panel.setFont(big)                              # opened in class
    sized = (panel.dim_label, panel.dim, panel.head_label, panel.bias.head, panel.notes, panel.wave_legend)
    assert all(w.font().pointSizeF() == 19.6 for w in sized)
    small = QtGui.QFont(big)
    small.setPointSizeF(10)
    panel.setFont(small)                            # after it: the normal size, never under 12
    assert all(w.font().pointSizeF() == 12.0 for w in sized)
    panel.setFont(big)
    assert all(w.font().pointSizeF() == 19.6 for w in sized)


def test_the_dimension_choosers_label_keeps_d_and_its_equals_sign_together(panel):
    """"Dimensions from d" and "=" were the word-wrapped label's two lines (a student): "d =" is bound together,
    and the label still wraps in a narrow dock (on one line it had made the panel 365 pixels wide at 1024 × 768)."""
    from model import load
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    panel.render(tr, ViewState.for_trace(tr, stack="src_embed"))
    label = panel.dim_label
    assert label.text() == "Dimensions from d\u00a0=" and label.wordWrap()
    assert label.minimumSizeHint().width() < label.fontMetrics().horizontalAdvance(label.text())
