"""The math inspector shows the Trace's numbers, and the seed example with the note's slip."""
from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from model import load, translate
from visualizer.equation_text import equation_html
from visualizer.panels.inspector import InspectorPanel
from visualizer.state import ViewState


def numbers(html: str) -> list[float]:
    return [float(x) for x in re.findall(r'href="n:([^"]+)"', html)]


def math_panel(qtbot, tr, **view):
    """A Math panel showing a trace at a view; returns (panel, state)."""
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    s = ViewState()
    s.set_shape(tr.schema, tr.n_steps)
    s.update(**view)
    panel.render(tr, s)
    return panel, s


def test_seed_example_cat(qtbot):
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    s = ViewState(model_name="seed-example")
    s.set_shape(tr.schema, tr.n_steps)
    s.update(stack="enc", layer=0, sublayer="self")
    panel.render(tr, s)
    panel.query.setCurrentIndex(1)                      # "cat"
    assert "query <b>cat</b>" in panel.html
    vals = numbers(panel.html)
    for expected in (0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 1.7, 2.0, 2.9, 3.2, 2.12, 2.62):
        assert any(abs(v - expected) < 1e-5 for v in vals), expected
    assert "The note's slip" in panel.html and "3.92" in panel.html


def test_numbers_equal_the_trace(qtbot, tiny_lm):
    tr = translate(tiny_lm, "the dog runs", target="le chien court").trace
    panel, s = math_panel(qtbot, tr, stack="dec", layer=1, sublayer="cross", head=1, step=2)
    assert panel.query.currentIndex() == 2
    alphas = tr.attention("cross", 1, 1)[2]
    vals = numbers(panel.html)
    for a in alphas:
        assert any(v == float(a) for v in vals)
    for stack, sub in (("src_embed", ""), ("enc", "ffn"), ("output", "")):
        s.update(stack=stack, sublayer=sub)
        panel.render(tr, s)
        assert panel.html
    s.update(stack="output", sublayer="")
    panel.render(tr, s)
    top = np.sort(tr.probs(s.step))[::-1][:5]
    vals = numbers(panel.html)
    for p in top:
        assert any(abs(v - p) < 1e-12 for v in vals)
    # a row of the output layer is a step, named as the Output panel names it ("position 2: court" had named the
    # token that position 2 predicts, "chien" at the attention stages), and small p as it writes them (not 0.000)
    from visualizer.panels.output import probability
    assert panel.query.currentText() == f"step 2: predicting token 3 ({tr.out_tokens[2]})"
    assert all(f">{probability(float(p))}</a>" in panel.html for p in top)


def test_cross_attention_keys_are_the_memorys_projections_with_their_bias(qtbot, tiny_lm):
    """k_j and v_j of cross-attention are the encoder output (memory) times W_K, W_V plus their biases, as the
    table's header says: recomputed here from the model's own weights."""
    import torch
    tr = translate(tiny_lm, "the dog runs", target="le chien court").trace
    panel, s = math_panel(qtbot, tr, stack="dec", layer=1, sublayer="cross", head=1, step=2)
    html = panel.html
    assert "k<sub>j</sub> = m<sub>j</sub> · W<sub>K</sub> + b<sub>K</sub>" in html
    assert "v<sub>j</sub> = m<sub>j</sub> · W<sub>V</sub> + b<sub>V</sub>" in html
    # the decoder's vectors are y, as the captions write them (LayerNorm(y + MHA(y, memory))): x here had read as
    # the encoder's (a student)
    assert "q<sub>i</sub> = y<sub>i</sub> · W<sub>Q</sub> + b<sub>Q</sub>" in html
    assert "y<sub>i</sub> (output of the previous sublayer)" in html and "LayerNorm(y + MHA(y, memory))" in \
        tr.schema.caption(s.stage)[2]
    attn = tiny_lm.model.decoder[1].cross_attn
    d_k = tr.schema.d_k
    memory = torch.tensor(tr["enc.out"])
    with torch.no_grad():
        K = attn.W_K(memory)[:, d_k: 2 * d_k].numpy()
        K_no_bias = (memory @ attn.W_K.weight.T)[:, d_k: 2 * d_k].numpy()
    shown = numbers(html)
    for j in range(len(tr.src_tokens)):
        assert all(any(abs(v - float(k)) < 1e-6 for v in shown) for k in K[j, :4])
    assert not all(any(abs(v - float(k)) < 1e-6 for v in shown) for k in K_no_bias[0, :4])
    assert f"(√d<sub>k</sub> = √{d_k} = " in html


def test_a_model_without_projection_biases_has_none_in_its_formulas(qtbot, tmp_path):
    import pytest
    pytest.importorskip("transformers")
    import hf_tiny
    from model.families import load as load_any, translate as translate_any
    lm = load_any(hf_tiny.build("t5", tmp_path / "t5"))
    tr = translate_any(lm, "the cat").trace
    panel, s = math_panel(qtbot, tr, stack="enc", layer=0, sublayer="self")
    assert "· W<sub>Q</sub> = " in panel.html and "b<sub>Q</sub>" not in panel.html
    assert "scores not scaled" not in panel.html
    assert tr.schema.output_equation.endswith("softmax((h_t / √d_model) E_yᵀ)")


@pytest.mark.parametrize("family", ["qwen3", "llama"])
def test_qwen3s_queries_and_keys_are_written_normalised_before_the_rotation(qtbot, tmp_path, family):
    """Qwen3 normalises each head's q and k (q_norm, k_norm) before rotating them: the Math page and the attention's
    equation say so, and the q shown is the trace's (the family tests check it is the model's); Llama's do not."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model.families import load as load_any, translate as translate_any
    tr = translate_any(load_any(hf_tiny.build(family, tmp_path / family)), "the cat sat").trace
    panel, s = math_panel(qtbot, tr, stack="dec", layer=1, sublayer="self", head=2, step=1)
    normed = family == "qwen3"
    assert tr.schema.qk_norm == normed
    assert ("q<sub>i</sub> = R<sub>i</sub>(N<sub>q</sub>(RMSNorm(x<sub>i</sub>) · W<sub>Q</sub>))" in panel.html) \
        == normed
    assert ("k<sub>j</sub> = R<sub>j</sub>(N<sub>k</sub>(RMSNorm(x<sub>j</sub>) · W<sub>K</sub>))" in panel.html) \
        == normed
    assert ("R(N_q(Q))R(N_k(K))ᵀ / √d_k" in tr.schema.stacks[0].sublayers[0].equation) == normed
    q = tr.get("dec", 1, "self", "q")[2, panel.query.currentIndex()]
    shown = numbers(panel.html.split("q<sub>i</sub> = ", 1)[1].split("</p>", 1)[0])
    assert len(shown) >= 3
    np.testing.assert_allclose(shown, q[:len(shown)], atol=1e-3)


def test_gemma_2s_page_writes_its_capped_scores_and_scaled_embedding(qtbot, tmp_path):
    """Gemma 2 caps its scores as c · tanh(s / c) and scales its embedding inside the model: the Math page writes
    both, and its score column is the trace's capped scores (the softmax's input)."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model.families import load as load_any, translate as translate_any
    tr = translate_any(load_any(hf_tiny.build("gemma2", tmp_path / "gemma2")), "the cat sat on the mat").trace
    panel, s = math_panel(qtbot, tr, stack="dec", layer=1, sublayer="self", head=0, step=5)
    assert "score<sub>ij</sub> = c · tanh((q<sub>i</sub> · k<sub>j</sub> / √d<sub>k</sub>) / c), c = 2;" in panel.html
    table = panel.html.split("</table>")[0]
    rows = [numbers(row) for row in table.split("<tr")[2:] if "masked" not in row]
    shown = [row[1] for row in rows]                               # each key's q·k, then its score
    scores = tr.get("dec", 1, "self", "scores")[0, len(shown) - 1]   # the query's row: causal, it sees as many
    assert len(shown) >= 3 and np.abs(scores).max() < 2 and np.abs(rows[1][0]) > 2       # capped: q·k was not
    np.testing.assert_allclose(shown, scores[:len(shown)], atol=1e-6)
    s.update(stack="tgt_embed", sublayer="")
    panel.render(tr, s)
    assert "x = √d<sub>model</sub> · E[token] = " in panel.html


def test_a_gemma_that_divides_by_its_own_scalar_writes_it_not_the_square_root_of_d_k(qtbot, tmp_path):
    """Gemma 2 27B divides q·kᵀ by √144 (its query_pre_attn_scalar), not by √d_k = √128: the Math page wrote
    "√d_k = √128" under scores the model divides by 12. The page and the attention's equation write s, and each
    score is q·k / √s, as the model computed it."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model.families import load as load_any, translate as translate_any
    lm = load_any(hf_tiny.build("gemma2", tmp_path / "g", query_pre_attn_scalar=18, attn_logit_softcapping=None))
    tr = translate_any(lm, "the cat sat on the mat").trace
    assert tr.schema.score_scalar == 18 and tr.schema.d_k == 8
    assert "R(Q)R(K)ᵀ / √s + M" in tr.schema.stacks[0].sublayers[0].equation
    assert "s = 18: the model's scale for q·kᵀ, not d_k" in tr.schema.stacks[0].sublayers[0].equation
    panel, s = math_panel(qtbot, tr, stack="dec", layer=1, sublayer="self", head=0, step=5)
    assert "score<sub>ij</sub> = q<sub>i</sub> · k<sub>j</sub> / √s;" in panel.html
    assert "(√s = √18 = <a href=\"n:4.242640687119285\">4.243</a>; s: the model's scale for q·k (its " \
        "query_pre_attn_scalar), not d<sub>k</sub> = 8)" in panel.html
    table = panel.html.split("</table>")[0]
    rows = [numbers(row) for row in table.split("<tr")[2:] if "masked" not in row]
    dots, shown = np.array([row[0] for row in rows]), np.array([row[1] for row in rows])     # q·k, score
    np.testing.assert_allclose(shown, dots / np.sqrt(18), atol=2e-3)
    np.testing.assert_allclose(shown, tr.get("dec", 1, "self", "scores")[0, len(shown) - 1][:len(shown)], atol=1e-6)
    plain = translate_any(load_any(hf_tiny.build("gemma2", tmp_path / "p")), "the cat").trace.schema
    assert plain.score_scalar == 0 and "/ √d_k" in plain.stacks[0].sublayers[0].equation      # 8 = d_k: as before


def test_layernorm_sigma_is_the_biased_spread_it_says_and_positions_count_from_0(qtbot, tiny_lm):
    tr = translate(tiny_lm, "the dog runs").trace
    panel, s = math_panel(qtbot, tr, stack="enc", layer=1, sublayer="ffn")
    panel.query.setCurrentIndex(1)
    v = tr["enc.1.ffn.residual"][1].astype(np.float64)
    sigma = np.sqrt(v.var() + tiny_lm.cfg.ln_eps)                 # ddof = 0: divided by d_model
    assert abs(sigma - np.sqrt(v.var(ddof=1) + tiny_lm.cfg.ln_eps)) > 1e-4          # the two would differ
    assert "σ = √(mean((v − μ)²) + ε)" in panel.html and "not d<sub>model</sub> − 1" in panel.html
    assert any(abs(x - sigma) < 1e-5 for x in numbers(panel.html))
    assert panel.query.itemText(1) == f"position 1: {tr.src_tokens[1]}"
    assert f"token <b>{tr.src_tokens[1]}</b> at position 1" in panel.html
    assert "v = x + Sublayer(x)" in panel.html
    panel, s = math_panel(qtbot, tr, stack="dec", layer=0, sublayer="cross")      # the decoder's letter
    assert "v = y + Sublayer(y)" in panel.html and "x + Sublayer" not in panel.html


@pytest.mark.parametrize("theme", ["high-contrast", "dark", "light"])
def test_numbers_and_headers_are_drawn_in_the_themes_text_colour(qtbot, qapp, tiny_lm, theme):
    """Numbers are links (their full value on hover); they were drawn in the link colour, black, unreadable on
    the high-contrast theme's black. Read back from the laid-out document: every number's colour."""
    from visualizer.theme import THEMES, apply_theme
    apply_theme(qapp, theme)
    try:
        tr = translate(tiny_lm, "the dog runs", target="le chien court").trace
        panel, _ = math_panel(qtbot, tr, stack="dec", layer=1, sublayer="cross", head=1, step=2)
        text = THEMES[theme].text
        colours, block = [], panel.view.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fmt = it.fragment().charFormat()
                if fmt.isAnchor() and fmt.anchorHref().startswith("n:"):
                    colours.append(fmt.foreground().color().name()
                                   if fmt.foreground().style() != QtCore.Qt.BrushStyle.NoBrush else "link colour")
                it += 1
            block = block.next()
        assert len(colours) > 20 and set(colours) == {text}
        assert "th{background:" in panel.html and f"color:{text}}}" in panel.html
    finally:
        apply_theme(qapp, "light")


def test_the_math_page_is_one_tab_stop_not_one_a_number(qtbot, tiny_lm):
    """Every number is a link (its full value on hover): Tab walked them one by one, 230 presses and still inside."""
    from PySide6 import QtWidgets
    tr = translate(tiny_lm, "the dog runs").trace
    holder = QtWidgets.QWidget()
    qtbot.addWidget(holder)
    layout = QtWidgets.QVBoxLayout(holder)
    panel, _ = math_panel(qtbot, tr, stack="enc", layer=0, sublayer="self", head=0, step=1)
    after = QtWidgets.QLineEdit()
    layout.addWidget(panel)
    layout.addWidget(after)
    holder.show()
    assert panel.html.count('href="n:') > 10
    panel.view.setFocus()
    qtbot.waitUntil(panel.view.hasFocus)
    qtbot.keyClick(panel.view, QtCore.Qt.Key.Key_Tab)
    assert not panel.view.hasFocus()


def test_a_switched_off_heads_sum_is_its_rows_and_the_page_says_it_is_off(qtbot, tiny_lm):
    """The trace records a switched-off head's output after the switch (0): the page read Σ α v = [0, 0, …] under
    rows of non-zero α and v (QA). It shows the sum of its rows and says the head is off."""
    tr = translate(tiny_lm, "the dog runs", ablations=frozenset({("enc_self", 0, 1)})).trace
    panel, s = math_panel(qtbot, tr, stack="enc", layer=0, sublayer="self", head=1)
    panel.query.setCurrentIndex(1)
    from model.equations import attention_equation
    eq = attention_equation(tr, "enc_self", 0, 1, 1)
    assert not np.asarray(eq.output).any()                          # what the trace holds
    total = eq.alpha.astype(np.float64) @ eq.V.astype(np.float64)
    assert np.abs(total).max() > 1e-3
    shown = numbers(panel.html.split("head output = ")[1])[:4]
    assert shown == pytest.approx(total[:4], abs=1e-6)
    assert "This head is switched off" in panel.html
    other, _ = math_panel(qtbot, tr, stack="enc", layer=0, sublayer="self", head=0)
    assert "switched off" not in other.html


def test_positions_switched_off_read_p_equals_0_not_pe_of_the_position(qtbot, tiny_lm):
    tr = translate(tiny_lm, "the dog runs", positional=False).trace
    try:
        panel, s = math_panel(qtbot, tr, stack="src_embed", sublayer="")
        panel.query.setCurrentIndex(2)
        assert "p = 0 (the positional encoding is switched off) = " in panel.html and "PE(2)" not in panel.html
    finally:
        translate(tiny_lm, "the dog runs", positional=True)          # the model's switch back on
    on = translate(tiny_lm, "the dog runs").trace
    panel, s = math_panel(qtbot, on, stack="src_embed", sublayer="")
    panel.query.setCurrentIndex(2)
    assert "p = PE(2) = " in panel.html


def test_a_sampled_runs_output_step_shows_the_top_k_distribution_it_drew_from(qtbot, tiny_lm):
    """As the Output panel: the Math page showed the full softmax beside the panel's renormalised top k."""
    from model import DecodingSettings
    settings = DecodingSettings(method="sample", top_k=3, seed=1)
    tr = translate(tiny_lm, "the dog runs", settings).trace
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    s = ViewState()
    s.set_shape(tr.schema, tr.n_steps)
    s.update(stack="output", sublayer="", step=1, decoding=settings)
    panel.render(tr, s)
    kept = np.sort(tr.probs(1, 1.0, 3))[::-1][:3]
    assert kept.sum() == pytest.approx(1.0)
    vals = numbers(panel.html)
    assert all(any(abs(v - p) < 1e-12 for v in vals) for p in kept)
    assert "over the top k = 3 logits" in panel.html


def test_a_masked_keys_row_has_its_alpha_0_in_the_alpha_column(qtbot, tiny_lm):
    tr = translate(tiny_lm, "the dog runs", target="le chien court").trace
    panel, s = math_panel(qtbot, tr, stack="dec", layer=0, sublayer="self", step=0)
    row = re.search(r"<tr style='color:#888'><td>1: .*?</tr>", panel.html).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    header = re.search(r"<table><tr>(.*?)</tr>", panel.html).group(1)
    columns = re.findall(r"<th>(.*?)</th>", header)
    spans = [int(m) if m else 1 for m in re.findall(r"<td(?: colspan=(\d+))?[^>]*>", row)]
    alpha_at = columns.index("α<sub>ij</sub>")
    # α the fourth column: the key's position and token share one (at 1366 × 768 α was past the dock's edge, QA)
    assert columns[:alpha_at] == ["j: key", "q·k<sub>j</sub>", "score"] and cells[0].startswith("1: ")
    starts = np.cumsum([0] + spans[:-1])
    assert cells[list(starts).index(alpha_at)] == "<b>0</b>"


def test_the_numbers_take_the_theme_back_after_presentation_mode(qtbot, window):
    """After F5 and Esc (presentation mode's high-contrast theme, then the light one again) every number of the Math
    tab was white on white: the page had been drawn again before its view had the light palette (QA)."""
    from visualizer.theme import THEMES
    window.docks["inspector"].raise_()
    qtbot.waitUntil(lambda: "inspector" in window.panels and bool(window.panels["inspector"].html))
    panel = window.panels["inspector"]

    def number_colour() -> str:
        return re.search(r"a\{color:(#[0-9a-f]{6})", panel.html).group(1)
    window.toggle_presentation()
    qtbot.waitUntil(lambda: number_colour() == QtGui.QColor(THEMES["high-contrast"].text).name())
    window.toggle_presentation()
    qtbot.wait(200)
    text = panel.view.palette().color(QtGui.QPalette.ColorRole.Text)
    assert number_colour() == text.name() and text.lightness() < 60          # dark numbers on the light page


def test_the_output_page_starts_at_the_vector_the_linear_map_reads(qtbot, tiny_lm):
    """The linear + softmax page began at the logits (a student): it shows h_t, the decoder's output at the step,
    and the output layer's equation; h_t times the tied embedding table gives the logits the table lists."""
    tr = translate(tiny_lm, "the dog runs", target="le chien court").trace
    panel, s = math_panel(qtbot, tr, stack="output", sublayer="", step=1)
    h = tr["dec.out"][1]
    assert "h<sub>t</sub> = the decoder's output at step 1" in panel.html
    assert equation_html(tr.schema.output_equation) in panel.html
    shown = numbers(panel.html.split("h<sub>t</sub> = ", 1)[1].split("</p>", 1)[0])
    np.testing.assert_allclose(shown, h[:len(shown)], atol=1e-7)
    gen = tiny_lm.model.generator                                      # logits = h_t W_out (+ b_out)
    bias = gen.bias.detach().numpy() if gen.bias is not None else 0.0
    np.testing.assert_allclose(h @ gen.weight.detach().numpy().T + bias, tr["logits"][1], atol=1e-4)
