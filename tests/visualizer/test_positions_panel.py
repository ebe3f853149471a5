"""Positions a model uses besides an added p, in the embeddings panel and the math inspector: for a rotary model
(Llama with rope_theta, rope scaling and grouped-query heads) cos(position × θ_i) and θ_i on a log axis; for T5
each head's relative position bias, query × key, and the scores the inspector shows include it. The window's
positions switch runs a Hugging Face model without its positions."""
from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, translate  # noqa: E402
from visualizer.panels.embeddings import EmbeddingsPanel  # noqa: E402
from visualizer.panels.inspector import InspectorPanel  # noqa: E402
from visualizer.plot_menu import widget_export  # noqa: E402
from visualizer.state import ViewState  # noqa: E402

SENTENCE = "the cat sat on the mat"
LLAMA = dict(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 500.0})
_OPENED: dict = {}


def _open(family, tmp_path_factory, **config):
    if family not in _OPENED:
        folder = hf_tiny.build(family, tmp_path_factory.mktemp(family), **config)
        lm = load(folder)
        _OPENED[family] = folder, lm, translate(lm, SENTENCE, DecodingSettings(max_new=5)).trace
    return _OPENED[family]


@pytest.fixture
def llama(tmp_path_factory):
    return _open("llama", tmp_path_factory, **LLAMA)


@pytest.fixture
def t5(tmp_path_factory):
    return _open("t5", tmp_path_factory)


@pytest.fixture
def panel(qtbot):
    p = EmbeddingsPanel()
    qtbot.addWidget(p)
    p.resize(900, 900)
    p.show()
    return p


def _view(trace, **where) -> ViewState:
    return ViewState.for_trace(trace, **where)


def _laid_out(panel) -> list:
    return [w for w, _ in panel.grid.items]


def test_a_rotary_model_shows_its_cos_table_and_frequencies(panel, llama):
    folder, lm, t = llama
    sc = t.schema
    keys = sc.rotary_keys(sc.stacks[0].key)
    panel.render(t, _view(t, stack=sc.stacks[0].embed_stage))
    assert panel.mode == "rotary" and panel.positional and not panel.notice.isVisibleTo(panel)
    assert panel.rotary.table in _laid_out(panel) and panel.maps["pe"] not in _laid_out(panel)
    assert not panel.maps["pe"].isVisibleTo(panel) and panel.rotary.theta.isVisibleTo(panel)
    np.testing.assert_array_equal(panel.rotary.table.shown, t[keys.cos])
    assert panel.rotary.table.rows == t.tgt_tokens and panel.rotary.table.shown.shape == (len(t.tgt_tokens), 4)
    xs, ys = panel.rotary.curve.getOriginalDataset()
    np.testing.assert_array_equal(xs, np.arange(4))
    np.testing.assert_array_equal(ys, lm.model.model.rotary_emb.inv_freq.numpy())       # the module's own θ_i
    assert panel.rotary.theta.item.ctrl.logYCheck.isChecked()                             # on a log axis
    table = widget_export(panel.rotary.theta).table()                                     # CSV: θ, not log θ
    assert [float(r.split(",")[-1]) for r in table.strip().splitlines()[1:]] == [float(v) for v in ys]
    text = panel.caption.label.text()
    assert "Rotary positions" in text and "nothing is added" in text and panel.caption.isVisibleTo(panel)
    assert "x = e" in panel.header.label.text() and panel.notes.isVisibleTo(panel)
    assert "θ = 0.5 (a full turn every 12.6 tokens)" in panel.notes.text()        # pair 0: 1 / 500⁰ halved

    assert not panel.bias.head.isVisibleTo(panel) and not panel.dim.isVisibleTo(panel)


def test_a_model_that_turns_part_of_each_head_says_which_part(panel, tmp_path_factory):
    """GPT-NeoX (Pythia: a quarter of each head) rotates the first share of each head's dimensions: the table and
    the frequencies are that share's, the caption and notes say how much is not turned."""
    folder, lm, t = _open("gpt_neox", tmp_path_factory)                      # rotary_pct 0.5: 4 of d_k = 8
    sc = t.schema
    panel.render(t, _view(t, stack=sc.stacks[0].embed_stage))
    assert panel.mode == "rotary" and panel.rotary.table.shown.shape == (len(t.tgt_tokens), 2)
    np.testing.assert_array_equal(panel.rotary.curve.getOriginalDataset()[1],
                                  lm.model.gpt_neox.rotary_emb.inv_freq.numpy())
    assert "2 pairs per head turn, the first 4 of its d<sub>k</sub> = 8 dimensions; the other 4 are not rotated" \
        in panel.notes.text()
    assert "the first 50% of each query's and key's dimensions (the rest are not turned)" in sc.stacks[0].embed_caption


def test_gemma_3_shows_its_global_layers_table_and_says_its_local_layers_turn_by_their_own(panel,
                                                                                          tmp_path_factory):
    """Gemma 3's local and global layers turn q and k by two bases: the panel draws the global layers' θ and its
    notes give the local layers' slowest; a model with one base says nothing of it."""
    folder, lm, t = _open("gemma3", tmp_path_factory)                   # local base 10: θ down to 10^(-6/8)
    panel.render(t, _view(t, stack=t.schema.stacks[0].embed_stage))
    np.testing.assert_allclose(panel.rotary.curve.getOriginalDataset()[1],
                               lm.model.model.rotary_emb.full_attention_inv_freq.numpy(), rtol=1e-6)
    slowest = float(lm.model.model.rotary_emb.sliding_attention_inv_freq.min())
    assert f"These are the global layers' θ; the local (sliding-window) layers turn by a base of their own: their " \
           f"slowest pair θ = {slowest:.3g}" in panel.notes.text()
    panel.render(_open("gpt_neox", tmp_path_factory)[2], _view(t, stack=t.schema.stacks[0].embed_stage))
    assert "global layers" not in panel.notes.text()


def test_t5_shows_each_heads_bias_for_the_kind_and_head_in_view(panel, t5):
    folder, lm, t = t5
    sc = t.schema
    ref = hf_tiny.reference_model("t5", folder)
    enc, dec = sc.stacks
    for kind, stack, where in (("enc_self", ref.encoder, dict(stack=enc.embed_stage)),
                               ("dec_self", ref.decoder, dict(stack=dec.key, layer=1, sublayer="cross"))):
        rows, cols = t.axis_tokens(kind)
        with torch.no_grad():
            expected = stack.block[0].layer[0].SelfAttention.compute_bias(len(rows), len(cols))[0].numpy()
        for head in range(sc.n_heads):
            panel.render(t, _view(t, head=head, **where))
            assert panel.mode == "relative" and panel.bias.kind == kind
            mask = t.mask(kind, 0)
            shown = panel.bias.table.shown
            np.testing.assert_array_equal(shown[mask], expected[head][mask])
            assert np.isnan(shown[~mask]).all()                                 # the decoder's future: hatched
            assert panel.bias.table.rows == list(rows) and panel.bias.table.cols == list(cols)
            assert panel.bias.head.currentIndex() == head and f"head {head + 1}" in panel.bias.table.title
            offsets, values = panel.bias.curve.getData()
            for d, v in zip(offsets, values):
                i = max(0, -int(d))
                assert v == expected[head][i, i + int(d)]
    assert panel.bias.table in _laid_out(panel) and panel.maps["pe"] not in _laid_out(panel)
    panel.bias.head.setCurrentIndex(2)                          # the panel's own head picker
    np.testing.assert_array_equal(np.nan_to_num(panel.bias.table.shown),
                                  np.where(t.mask("dec_self", 0), t[sc.bias_keys("dec_self").bias][2], 0))
    text = panel.caption.label.text()
    assert "adds" in text and "before the softmax" in text and "√d<sub>k</sub>" in text
    assert "buckets" in panel.notes.text() and f"{len(np.unique(t[sc.bias_keys('dec_self').buckets]))} buckets" \
        in panel.notes.text()
    assert panel.bias.head.isVisibleTo(panel)


def test_a_model_that_adds_p_is_shown_as_before(panel, tmp_path_factory):
    folder, lm, t = _open("marian", tmp_path_factory)
    panel.render(t, _view(t, stack="enc"))
    assert panel.mode == "added" and panel.positional
    assert panel.maps["pe"] in _laid_out(panel) and panel.rotary.table not in _laid_out(panel)
    np.testing.assert_array_equal(panel.maps["pe"].shown, t["src.pe"])
    assert not panel.caption.isVisibleTo(panel) and panel.dim.isVisibleTo(panel)


@pytest.mark.parametrize("family", ["llama", "t5"])
def test_positions_off_is_announced_for_what_the_model_uses(panel, family, tmp_path_factory):
    folder, lm, _ = _open(family, tmp_path_factory, **(LLAMA if family == "llama" else {}))
    try:
        t = translate(lm, SENTENCE, DecodingSettings(max_new=5), positional=False).trace
    finally:
        lm.positional = True
    panel.render(t, _view(t, stack=t.schema.stacks[0].embed_stage))
    assert not panel.positional and panel.notice.isVisibleTo(panel)
    text = panel.notice.text()
    assert "OFF" in text and (("not rotated" in text) if family == "llama" else ("bias is 0" in text))
    shown = panel.rotary.table.shown if family == "llama" else panel.bias.table.shown
    assert (shown == 1).all() if family == "llama" else not np.nan_to_num(shown).any()


def _numbers(html: str) -> list[float]:
    return [float(x) for x in re.findall(r'href="n:([^"]+)"', html)]


def test_the_inspectors_t5_scores_are_q_dot_k_plus_the_bias(qtbot, t5):
    folder, lm, t = t5
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    s = _view(t, stack="enc", layer=1, sublayer="self", head=3)
    panel.render(t, s)
    panel.query.setCurrentIndex(2)
    bias = t[t.schema.bias_keys("enc_self").bias][3, 2]
    q, K = t.get("enc", 1, "self", "q", 3)[2], t.get("enc", 1, "self", "k", 3)
    scores = t.get("enc", 1, "self", "scores", 3)[2]
    np.testing.assert_allclose(scores, K @ q + bias, atol=1e-4)          # the model's scores include the bias
    vals = _numbers(panel.html)
    for j in range(len(bias)):                                            # each row: q·k, b, score
        dot, b, score = float((K @ q)[j]), float(bias[j]), float(scores[j])
        i = next(n for n, v in enumerate(vals) if abs(v - dot) < 1e-5 and n + 2 < len(vals)
                 and vals[n + 1] == b and vals[n + 2] == score)
        assert abs(vals[i] + vals[i + 1] - vals[i + 2]) < 1e-4
    assert "+ b<sub>ij</sub>" in panel.html and "not divided by √d<sub>k</sub>" in panel.html
    s.update(stack="dec", sublayer="cross")                               # cross-attention adds no bias
    panel.render(t, s)
    assert "b<sub>ij</sub>" not in panel.html


def test_the_inspector_says_q_and_k_are_rotated(qtbot, llama):
    folder, lm, t = llama
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    panel.render(t, _view(t, stack=t.schema.stacks[0].key, layer=0, sublayer="self"))
    assert "R<sub>i</sub>(RMSNorm(x<sub>i</sub>) · W<sub>Q</sub>)" in panel.html and "b<sub>ij</sub>" not in panel.html
    assert "x<sub>i</sub> = e<sub>i</sub> (no position is added)" in panel.html and "p<sub>i</sub>" not in panel.html


@pytest.mark.parametrize("family", ["llama", "t5"])
def test_the_windows_positions_switch_runs_the_hf_model_without_positions(qtbot, settings, family, tmp_path_factory):
    from visualizer.window import MainWindow
    folder, _, _ = _open(family, tmp_path_factory, **(LLAMA if family == "llama" else {}))
    w = MainWindow(model=str(folder), sentence=SENTENCE, settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy, timeout=60000)
    try:
        on = w.trace
        assert on.meta["positional"] is True and w.inputs.positional.isEnabled()
        tip = w.inputs.positional.toolTip()
        assert ("not rotated" in tip) if family == "llama" else ("bias is 0" in tip)
        w.inputs.positional.setChecked(False)
        qtbot.waitUntil(lambda: w.trace is not on and not w.runs.runner.busy, timeout=60000)
        off = w.trace
        assert off.meta["positional"] is False
        sc = off.schema
        if family == "llama":
            assert (off[sc.rotary_keys(sc.stacks[0].key).cos] == 1).all()
        else:
            assert not off[sc.bias_keys("enc_self").bias].any() and on[sc.bias_keys("enc_self").bias].any()
        kind = sc.kind_names[0]
        assert hf_tiny.differ(off.attention(kind, 0), on.attention(kind, 0))
        emb = w.panels["embeddings"]
        w.docking.render("embeddings", force=True)
        assert not emb.positional and "OFF" in emb.notice.text()
    finally:
        w.runs.runner.wait(10000)


def test_a_model_without_positions_has_its_switch_disabled_and_says_why(qtbot):
    from visualizer.controls import InputBar
    bar = InputBar()
    qtbot.addWidget(bar)
    bar.show_positions("none")
    assert not bar.positional.isEnabled() and "no positions" in bar.positional.toolTip()
    bar.show_positions("learned")
    assert bar.positional.isEnabled() and "p = 0" in bar.positional.toolTip()
