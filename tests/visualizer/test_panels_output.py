"""The output panel shows the top-k next-token probabilities under the temperature, the token taken, the entropy."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore

from model import DecodingSettings, translate
from model.text import probability
from visualizer.panels.output import OutputPanel, entropy_bits
from visualizer.plotting.text import MAX_LABEL_CHARS, short
from visualizer.plotting.colormaps import BLUE, VERMILLION
from visualizer.state import ViewState


def state_for(trace, temperature=1.0, **view) -> ViewState:
    return ViewState.for_trace(trace, decoding=DecodingSettings(temperature=temperature), **view)


@pytest.fixture(scope="module")
def vocab(tiny_lm):
    return tiny_lm.tgt_tok.pieces(range(tiny_lm.tgt_tok.vocab_size))


@pytest.fixture
def panel(qtbot, vocab):
    p = OutputPanel()
    qtbot.addWidget(p)
    p.set_vocab(vocab)
    p.resize(700, 600)
    p.show()
    return p


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_top_k_bars_equal_the_trace_under_the_temperature(panel, trace, vocab, temperature):
    step = min(2, trace.n_steps - 1)
    panel.render(trace, state_for(trace, temperature, stack="output", step=step))
    p = trace.probs(step, temperature)
    ids = np.argsort(-p)[:10]
    np.testing.assert_array_equal(panel.top_ids, ids)
    np.testing.assert_allclose(panel.top_probs, p[ids])
    np.testing.assert_allclose(panel.bars.opts["width"][:10], p[ids])
    assert panel.top_labels == [vocab[i] for i in ids]
    assert panel.plot.getAxis("left").labels[:10] == [vocab[i][:14] if len(vocab[i]) <= 14 else vocab[i][:13] + "…"
                                                      for i in ids]
    expected_h = -sum(q * np.log2(q) for q in p if q > 0)
    assert panel.entropy == pytest.approx(expected_h, rel=1e-9)
    assert f"H = {expected_h:.2f} bits" in panel.header.text()
    assert f"T&nbsp;=&nbsp;{temperature:.2f}" in panel.header.text()       # never "T =" / "1.00" on two lines


def test_chosen_token_is_highlighted(panel, trace, vocab):
    for step in range(trace.n_steps):
        panel.render(trace, state_for(trace, step=step))
        assert panel.chosen_label == trace.out_tokens[step]
        assert panel.chosen_rank == 1 and panel.chosen_index == 0          # greedy takes the most probable
        assert vocab[panel.chosen_id] == trace.out_tokens[step]
        colors = [b.color().name() for b in panel.bars.opts["brushes"]]
        assert colors[0] == VERMILLION and set(colors[1:]) == {BLUE}
        # and framed: printed in grey, its orange was the blue's grey (QA, a handout)
        pens = panel.bars.opts["pens"]
        assert pens[0].style() != QtCore.Qt.PenStyle.NoPen and pens[0].widthF() >= 2 and pens[0].color().value() < 60
        assert all(p.style() == QtCore.Qt.PenStyle.NoPen for p in pens[1:])
        # a screen reader gets the bars: the plot had said its title alone (QA, a blind student)
        assert panel.box.accessibleName() == f"Output distribution: {panel.title}"
        said = panel.box.accessibleDescription()
        first = f"“{panel.bar_labels[0]}” {probability(float(panel.bar_probs[0]))}, {panel._taken}; "
        assert said.startswith(f"Bars, most probable first: {first}") and said.count("“") == len(panel.bar_ids)
        assert panel.title.startswith(f"Step {step}: predicting token {step + 1} after “")
        # on screen each number is bound to its word: a narrow dock wrapped the "3" of "token 3" alone (QA)
        assert panel.box.title.startswith(f"Step&nbsp;{step}: predicting token&nbsp;{step + 1}<br>")


def test_title_names_the_prefix(panel, trace):
    panel.render(trace, state_for(trace, step=1))
    assert panel.title == f"Step 1: predicting token 2 after “<s> {trace.tgt_tokens[1].removeprefix('##')}”"


def test_a_narrow_docks_title_shows_the_prefix_end_on_one_line(panel, tiny_lm, qtbot):
    """QA at 1024 × 768: the title's "after “…”" took two or three lines more as the sentence went on, and the
    chart shrank and grew from step to step. In a narrow dock the prefix keeps its end, on one line."""
    from PySide6 import QtGui

    from visualizer.plotting.text import TITLE_PT, tick_font
    trace = translate(tiny_lm, "the cat sat on the mat and the dog sat on the red car", target=" ".join(
        ["le chat"] * 12)).trace
    panel.resize(300, 600)
    qtbot.waitUntil(lambda: panel.box.width() <= 300)
    step = trace.n_steps - 1
    panel.render(trace, state_for(trace, step=step))
    second = panel.box.title.split("<br>")[1]
    metrics = QtGui.QFontMetricsF(tick_font(TITLE_PT))
    assert second.startswith("after “…") and metrics.horizontalAdvance(second) <= panel.box.width() - 24 + 1
    assert panel.title.endswith(f"{second.removeprefix('after “…')}")      # the whole title keeps the whole end


def test_the_two_line_title_keeps_its_room_at_every_step(panel, trace):
    """pyqtgraph's setTitle shrinks the title row to 30 px: rewriting the title must not clip its second line."""
    label = panel.box.item.titleLabel
    for step in (0, 1, 2, 1, 0):
        panel.render(trace, state_for(trace, step=step))
        needed = label.itemRect().height()
        assert needed > 40                                           # two lines at 14 pt
        assert label.maximumHeight() >= needed
        assert panel.box.item.layout.rowMaximumHeight(0) >= needed


def test_temperature_sharpens_or_flattens_the_bars(panel, trace):
    s = state_for(trace, 1.0, step=1)
    panel.render(trace, s)
    p1, h1, top1 = panel.top_probs.copy(), panel.entropy, panel.top_ids.copy()
    s.update(decoding=DecodingSettings(temperature=3.0))
    panel.render(trace, s)
    assert panel.top_probs[0] < p1[0] and panel.entropy > h1
    np.testing.assert_array_equal(panel.top_ids, top1)                  # the order does not change with T
    s.update(decoding=DecodingSettings(temperature=0.25))
    panel.render(trace, s)
    assert panel.top_probs[0] > p1[0] and panel.entropy < h1
    np.testing.assert_allclose(panel.top_probs, np.sort(trace.probs(1, 0.25))[::-1][:10])


def test_a_chosen_token_below_the_top_k_gets_its_own_bar(panel, tiny_lm, vocab):
    tr = translate(tiny_lm, "the cat sat on the mat", target="la maison est grande").trace
    found = False
    for step in range(tr.n_steps):
        panel.render(tr, state_for(tr, step=step))
        p = tr.probs(step)
        cid = panel.chosen_id
        assert vocab[cid] == tr.out_tokens[step]
        assert panel.chosen_rank == int(np.sum(p > p[cid])) + 1
        assert panel.chosen_prob == pytest.approx(p[cid])
        colors = [b.color().name() for b in panel.bars.opts["brushes"]]
        assert colors[panel.chosen_index] == VERMILLION and colors.count(VERMILLION) == 1
        if panel.chosen_rank > 10:
            found = True
            assert panel.chosen_index == 10 and len(panel.bar_ids) == 11 and panel.bar_ids[10] == cid
            x, y = panel.chosen_mark.getData()             # marked where its bar starts, however thin the bar
            assert list(x) == [0.0] and list(y) == [10.5]
            rank = f" (#{panel.chosen_rank})"               # whole, its token cut to leave it room (QA)
            assert panel.bar_labels[10] == short(vocab[cid], MAX_LABEL_CHARS - len(rank)) + rank
            assert panel.plot.getAxis("left").labels[10].endswith(rank)
            assert panel.separator.isVisible()
        else:
            assert len(panel.bar_ids) == 10 and not panel.separator.isVisible()
    assert found, "the random model should rank some reference token below 10"
    assert "teacher-forced" in panel.header.text()
    low = next(step for step in range(tr.n_steps) if (panel.render(tr, state_for(tr, step=step)) or
                                                       panel.chosen_rank > 10))
    long_vocab = list(vocab)
    long_vocab[panel.chosen_id] = "sûrementétrange"                    # a long piece ranked low: its rank stays
    panel.set_vocab(long_vocab)
    panel.render(tr, state_for(tr, step=low))
    rank = f" (#{panel.chosen_rank})"
    assert panel.plot.getAxis("left").labels[10] == short("sûrementétrange", MAX_LABEL_CHARS - len(rank)) + rank


def test_without_a_vocabulary_bars_show_ids(qtbot, trace):
    panel = OutputPanel()
    qtbot.addWidget(panel)
    panel.render(trace, state_for(trace))
    assert panel.top_labels == [f"#{i}" for i in panel.top_ids] and panel.chosen_id == trace.out_id(0)
    assert panel.chosen_label == trace.out_tokens[0] and trace.out_tokens[0] in panel.header.text()


def test_the_chosen_token_is_found_by_its_id_when_two_pieces_read_alike(panel, tiny_lm, vocab):
    """GPT-2's "Ġre" and "re" both read "re": looked up by its text, the forced token's bar, p and rank were those of
    the more probable homonym."""
    tr = translate(tiny_lm, "the cat sat on the mat", target="la maison est grande").trace
    step = next(t for t in range(tr.n_steps) if tr.probs(t).argmax() != tr.out_id(t))
    p, cid = tr.probs(step), tr.out_id(step)
    assert vocab[cid] == tr.out_tokens[step]
    other = int(p.argmax())                                # more probable than the forced token
    alike = list(vocab)
    alike[other] = vocab[cid]
    panel.set_vocab(alike)
    panel.render(tr, state_for(tr, step=step))
    assert panel.chosen_id == cid and panel.chosen_prob == pytest.approx(p[cid])
    assert panel.chosen_rank == int(np.sum(p > p[cid])) + 1 > 1
    assert "p&nbsp;=&nbsp;" in panel.header.text() and f"rank&nbsp;{panel.chosen_rank}" in panel.header.text()   # kept together


def test_bars_of_tokens_drawn_alike_say_their_characters(panel, trace, vocab):
    """en-fr's bars at a step held "'" and "’", drawn alike: which one the model took could not be read (QA). Labels
    that look alike get the code points that tell them apart; the others stay as they are."""
    step = min(2, trace.n_steps - 1)
    order = np.argsort(-trace.probs(step), kind="stable")
    alike = list(vocab)
    alike[int(order[0])], alike[int(order[1])] = "l'", "l’"
    panel.set_vocab(alike)
    panel.render(trace, state_for(trace, step=step))
    assert panel.bar_labels[:2] == ["l' (U+0027)", "l’ (U+2019)"]
    k = len(panel.top_ids)                                  # (a chosen token below the top k has its rank after it)
    assert panel.bar_labels[2:k] == [alike[int(i)] for i in panel.bar_ids[2:k]]
    alike[int(order[0])], alike[int(order[1])] = "�", "�"   # the same to the letter: their ids (a review)
    panel.set_vocab(alike)
    panel.render(trace, state_for(trace, step=step))
    assert panel.bar_labels[:2] == [f"� #{int(order[0])}", f"� #{int(order[1])}"]
    from visualizer.plotting.text import told_apart
    assert told_apart(["-", "–", "−", "a", "a"]) == ["- (U+002D)", "– (U+2013)", "− (U+2212)", "a", "a"]


def test_a_trace_without_ids_still_finds_the_chosen_token_by_its_text(panel, trace, vocab):
    """Saved frames of earlier versions have no out_ids."""
    from model.trace import Trace
    old = Trace(trace.src_tokens, trace.tgt_tokens, trace.out_tokens,
                {k: v for k, v in trace.arrays.items() if k != "out_ids"}, trace.meta, trace.schema)
    assert old.out_id(0) is None
    panel.render(old, state_for(old, step=0))
    assert panel.chosen_id == trace.out_id(0) and vocab[panel.chosen_id] == trace.out_tokens[0]


def test_entropy_bits():
    assert entropy_bits(np.array([0.5, 0.5, 0.0])) == pytest.approx(1.0)
    assert entropy_bits(np.full(8, 1 / 8)) == pytest.approx(3.0)
    assert entropy_bits(np.array([1.0, 0.0])) == 0.0
    assert np.isnan(entropy_bits(np.array([np.nan, np.nan])))      # not "0.00 bits" beside p = nan (QA)


def test_every_stage_step_and_odd_state_renders(panel, tiny_lm):
    for text in ("", "the cat sat on the mat", "the " * 70):
        tr = translate(tiny_lm, text).trace
        s = state_for(tr)
        for stage in tr.schema.stages():
            for step in range(tr.n_steps):
                s.update(stack=stage.stack, layer=stage.layer, sublayer=stage.sublayer, step=step)
                panel.render(tr, s)
                assert panel.step == step
        s.step = 10_000                                 # out of range (not clamped by the state): the last step
        panel.render(tr, s)
        assert panel.step == tr.n_steps - 1
        panel.grab()


def test_top_k_ids_orders_like_a_stable_sort():
    from model.top_k import top_k_ids
    rng = np.random.default_rng(0)
    for _ in range(500):
        probs = rng.integers(0, 4, int(rng.integers(1, 40))).astype(float)   # many ties
        k = int(rng.integers(0, probs.size + 3))
        np.testing.assert_array_equal(top_k_ids(probs, k), np.argsort(-probs, kind="stable")[:k])


def test_a_sampled_run_with_top_k_shows_the_distribution_it_drew_from(panel, tiny_lm, vocab):
    """Sampling at T = 1.5 with top-k 3 draws from the 3 largest logits renormalised (decoding.sample); the bars,
    the entropy and the sampled token's p are that distribution's, recomputed here with torch.topk."""
    import torch
    settings = DecodingSettings(method="sample", temperature=1.5, top_k=3, seed=1)
    tr = translate(tiny_lm, "the cat sat on the mat", settings).trace
    for step in range(tr.n_steps):
        panel.render(tr, ViewState.for_trace(tr, decoding=settings, stack="output", step=step))
        logits = torch.tensor(tr["logits"][step], dtype=torch.float64) / 1.5
        top = torch.topk(logits, 3)
        drawn = torch.softmax(top.values, -1).numpy()
        np.testing.assert_array_equal(panel.top_ids, top.indices.numpy())
        np.testing.assert_allclose(panel.top_probs, drawn, rtol=1e-9)
        assert len(panel.bar_ids) == 3                          # no bars for the tokens sampling never draws
        assert panel.entropy == pytest.approx(-(drawn * np.log2(drawn)).sum(), rel=1e-9)
        assert vocab[panel.chosen_id] == tr.out_tokens[step] and panel.chosen_prob > 0
        assert "top&nbsp;k&nbsp;=&nbsp;3" in panel.header.text() and "uniform over 3 tokens" in panel.header.text()
    panel.render(tr, ViewState.for_trace(tr, decoding=DecodingSettings(temperature=1.5), stack="output", step=0))
    assert len(panel.bar_ids) >= 10 and "top&nbsp;k" not in panel.header.text()


def test_plain_sampling_shows_the_distribution_it_drew_from_without_pad(panel, tiny_lm, vocab):
    """decoding.sample never draws <pad> (its logit is −∞ there); the panel had shown p(<pad>) ≈ 1e-4 at T = 5,
    and a sampled token's rank one lower than in the distribution drawn from (QA as a lecturer)."""
    import torch
    from model.tokenizer import PAD
    settings = DecodingSettings(method="sample", temperature=5.0, seed=1)
    tr = translate(tiny_lm, "the cat sat on the mat", settings).trace
    assert tr.never_drawn == (PAD,)
    for step in range(tr.n_steps):
        panel.render(tr, ViewState.for_trace(tr, decoding=settings, stack="output", step=step))
        logits = torch.tensor(tr["logits"][step], dtype=torch.float64) / 5.0
        logits[PAD] = float("-inf")                           # as decoding.sample draws
        drawn = torch.softmax(logits, -1).numpy()
        np.testing.assert_allclose(panel.probs, drawn, rtol=1e-9, atol=0)
        assert panel.probs[PAD] == 0
        assert panel.chosen_rank == int(np.sum(drawn > drawn[panel.chosen_id])) + 1
        assert f"uniform over {len(vocab) - 1} tokens" in panel.header.text()
    np.testing.assert_allclose(tr["probs"][:, PAD], 0)           # the trace's own probs array too


def test_small_probabilities_keep_two_significant_digits():
    from visualizer.panels.output import probability
    assert [probability(p) for p in (0.91949, 0.0148, 0.0012, 0.00019, 3.4e-9, 0.0)] == \
        ["0.919", "0.015", "0.0012", "0.00019", "3.4 × 10⁻⁹", "0.000"]       # (not "3.4e-09": QA as a teacher)
    # written out down to a millionth (en-de's bars read "6.8e-05" beside "0.00019"); two digits below 0.01 (a
    # bar read "0.001" above "0.00098"); one that rounds up keeps the larger form ("0.010", not "0.0100")
    assert [probability(p) for p in (6.8e-05, 1.23e-05, 9.99e-07, 0.000995, 0.0098, 0.00996)] == \
        ["0.000068", "0.000012", "0.0000010", "0.0010", "0.0098", "0.010"]
    # a model whose weights went NaN: the output panel raised "cannot convert float NaN to integer" (QA)
    assert [probability(p) for p in (float("nan"), float("inf"))] == ["nan", "inf"]


def _in_a_dock(qtbot, vocab):
    """(scroll area, panel): the panel in a resizable scroll area, as a dock holds it."""
    from PySide6 import QtWidgets
    scroll = QtWidgets.QScrollArea()
    scroll.setWidgetResizable(True)
    panel = OutputPanel()
    panel.set_vocab(vocab)
    scroll.setWidget(panel)
    qtbot.addWidget(scroll)
    return scroll, panel


def test_a_short_dock_keeps_the_header_to_its_first_sentence(qtbot, trace, vocab):
    """On a 720p projector the three-line header pushed the probability axis out of sight: a room shorter than
    the plot's minimum and four lines keeps the entropy and the token; the rest goes to the tooltip."""
    scroll, panel = _in_a_dock(qtbot, vocab)
    scroll.resize(500, 900)
    scroll.show()
    panel.render(trace, state_for(trace, stack="output", step=1))
    assert not panel.short_header and "uniform over" in panel.header.text()
    assert panel.header.toolTip().startswith("H = −Σ p·log₂ p over all")        # what the number means
    scroll.resize(500, panel.box.minimumHeight() + 40)
    qtbot.waitUntil(lambda: panel.short_header)
    assert "uniform over" not in panel.header.text() and "Entropy H = " in panel.header.text()
    assert "rank" in panel.header.text() and "uniform over" in panel.header.toolTip()
    scroll.resize(500, 900)
    qtbot.waitUntil(lambda: not panel.short_header)
    assert "uniform over" in panel.header.text()


def test_the_title_joins_pieces_as_the_translation_reads():
    from visualizer.panels.output import join_pieces
    assert join_pieces(["<s>", "Le", "chat", "s", "'", "##assit"]) == "<s> Le chat s'assit"
    assert join_pieces(["<s>", "##a", "J", "'", "ai", "froid"]) == "<s> a J'ai froid"
    assert join_pieces(["<s>", "'", "x"]) == "<s> 'x"


def test_prompt_steps_say_given_and_an_encoder_says_most_probable(qtbot, tmp_path):
    """A decoder-only model's rows inside the prompt predict tokens nobody chose: the prompt gave them. A masked-LM
    encoder's row is its own position's most probable token, not a greedy choice."""
    import hf_tiny
    from model.families import load, translate as hf_translate
    panel = OutputPanel()
    qtbot.addWidget(panel)
    for family, sentence in (("gpt2", "the cat sat on the mat"), ("bert", "the cat [MASK] on the mat")):
        lm = load(hf_tiny.build(family, tmp_path / family))
        tr = hf_translate(lm, sentence, DecodingSettings(max_new=3)).trace
        panel.set_vocab(lm.tgt_tok.pieces(range(tr["logits"].shape[-1])))
        for step in range(tr.n_steps):
            panel.render(tr, state_for(tr, step=step))
            assert panel.chosen_id == int(tr["out_ids"][step])
            words = panel.header.text()
            if family == "bert":
                assert "most probable" in words and panel.chosen_rank == 1
            elif step < tr.meta["prompt_tokens"] - 1:
                assert "given (prompt)" in words and "greedy" not in words
            else:
                assert "chosen (greedy)" in words and panel.chosen_rank == 1


def test_the_plot_text_grows_with_a_larger_application_font_never_below_its_own(panel, trace):
    """Presentation mode at 1080p sets 19.6-point text: the bars' tokens and numbers stayed at 12 points. They
    follow it 2 points below, never below 12 (a 720p projector's 14 points keeps 12: its rows have no more room)."""
    from PySide6 import QtGui

    from visualizer.plotting.text import TICK_PT
    panel.render(trace, state_for(trace))
    axis = panel.plot.getAxis("left")
    assert axis.base_font.pointSizeF() == TICK_PT
    big = QtGui.QFont(panel.font())
    big.setPointSizeF(19.6)
    panel.setFont(big)                                   # as the application font reaches the panel
    assert axis.base_font.pointSizeF() == 17.6 and panel.plot.getAxis("bottom").style["tickFont"].pointSizeF() == 17.6
    assert all(item.textItem.font().pointSizeF() == 17.6 for item in panel.value_items)
    assert "font-size: 18.6pt" in panel.plot.getAxis("bottom").labelString()
    small = QtGui.QFont(big)
    small.setPointSizeF(14)
    panel.setFont(small)                                 # a 720p projector: the plots keep their own size
    assert axis.base_font.pointSizeF() == TICK_PT


def test_the_probability_axis_labels_never_run_together(panel, trace, qtbot):
    """At a class's font in a narrow dock the axis read "0.20.40.60.8" (QA at 1.5× scale): its labels are spaced
    so that each has a label's width of gap, at a round step."""
    from PySide6 import QtGui
    panel.render(trace, state_for(trace, 1.0, stack="output", step=0))
    axis = panel.plot.getAxis("bottom")

    def gaps_fit() -> bool:
        width = panel.plot.vb.width()
        lo, hi = panel.plot.vb.viewRange()[0]
        spacing, majors = axis.tickValues(lo, hi, width)[0]
        majors = [v for v in majors if lo <= v <= hi]
        metrics = QtGui.QFontMetricsF(axis.style["tickFont"])
        widths = [metrics.horizontalAdvance(t) for t in axis.tickStrings(majors, 1, spacing)]
        apart = (majors[1] - majors[0]) / (hi - lo) * width if len(majors) >= 2 else 0
        # labels centred on their ticks: neighbours' half widths and a gap of a fifth of them
        return len(majors) >= 2 and all(apart >= 1.2 * (a + b) / 2 for a, b in zip(widths, widths[1:]))
    assert gaps_fit()
    panel.setFont(QtGui.QFont(panel.font().family(), 22))            # a projector's text, in a narrow dock
    panel.resize(260, 600)
    qtbot.waitUntil(lambda: panel.plot.vb.width() < 200)
    qtbot.wait(50)
    assert gaps_fit()


def test_a_prefix_cut_for_the_title_begins_at_a_word():
    """QA: the chart's title read after “…rsque les enfants” in a narrow dock ("rsque" read as a word)."""
    from visualizer.panels.output import word_start
    text = "<s> Lorsque les enfants"
    assert word_start(text, "…rsque les enfants") == "…les enfants"
    assert word_start(text, "… les enfants") == "… les enfants"            # cut at a space already
    assert word_start(text, "…nfants") == "…nfants"                        # no whole word would be left
    assert word_start(text, text) == text


def test_a_short_plot_at_a_class_size_shows_fewer_bars_with_readable_tokens(panel, tiny_lm, vocab, qtbot):
    """Presentation mode at 1080p beside a Head metrics table: the ten rows' tokens were drawn in 8-point type. A
    short plot shows the top bars whose tokens fit at 0.9 of the axis' size (the token taken always has its bar),
    says how many in its axis title, and all ten again when it has the room."""
    from PySide6 import QtGui

    from visualizer.panels.output import BAR_LABEL_SCALE
    from visualizer.plotting.text import LABEL_SCALES, tick_font
    assert BAR_LABEL_SCALE in LABEL_SCALES            # a size the axis draws: the rows fit its tokens at it
    tr = translate(tiny_lm, "the cat sat on the mat", target="la maison est grande").trace
    big = QtGui.QFont(panel.font())
    big.setPointSizeF(19.6)
    panel.setFont(big)                                  # as presentation mode's application font reaches it
    panel.resize(600, 280)
    axis = panel.plot.getAxis("left")
    line = 1.05 * QtGui.QFontMetricsF(tick_font(BAR_LABEL_SCALE * 17.6)).height()
    seen_below = False
    for step in range(tr.n_steps):
        panel.render(tr, state_for(tr, step=step))
        qtbot.waitUntil(lambda: panel.plot.vb.height() < 200)
        n = panel.shown
        assert 3 <= n < 10 and axis.base_font.pointSizeF() == 17.6
        np.testing.assert_array_equal(panel.bar_ids[:n], panel.top_ids[:n])        # the most probable first
        np.testing.assert_allclose(panel.bars.opts["width"], tr.probs(step)[panel.bar_ids])
        rows = len(panel.bar_ids) + (0.7 if len(panel.bar_ids) > n else 0.2)
        assert panel.plot.vb.height() / rows >= line                               # each token at 15.8 points
        lo, hi = panel.plot.vb.viewRange()[1]
        font, drawn = axis.fitted(panel.plot.vb.height(), lo, hi)
        assert font.pointSizeF() >= BAR_LABEL_SCALE * 17.6 - 0.01 and len(drawn) == len(panel.bar_ids)
        assert len(axis.labels) == len(panel.bar_ids)
        title = panel.plot.getAxis("left").labelText                           # "top 6" where the whole one
        assert title in (f"next token (top {n})", f"top {n}")                   # would be cut along the axis
        assert (title == f"top {n}") == (QtGui.QFontMetricsF(tick_font(18.6)).horizontalAdvance(
            f"next token (top {n})") > panel.plot.vb.height() + 20)
        assert panel.bar_ids[panel.chosen_index] == panel.chosen_id                # the token taken has its bar
        if panel.chosen_rank > n:
            seen_below = True
            assert panel.chosen_index == n and len(panel.bar_ids) == n + 1 and panel.separator.isVisible()
    assert seen_below, "the random model should rank some reference token below the bars shown"
    panel.resize(700, 900)                               # room again: all ten, and the plain title
    qtbot.waitUntil(lambda: panel.shown == 10)
    assert len(axis.labels) >= 10 and panel.plot.getAxis("left").labelText == "next token"


def test_a_dock_shorter_than_the_chart_shows_its_axis_with_fewer_bars_and_a_two_line_header(vocab, trace, qtbot):
    """QA at 720p and 1080p in class: a Head metrics table gone to left the output dock 224 to 241 pixels; the chart
    kept its 280-pixel least height and ten bars, and scrolled: its probability axis and the token taken out of
    sight. And the four-line header's room stayed above the two lines it then showed. Now the chart shrinks to
    its axis, with the bars that fit, and the header takes the height of its two lines."""
    from PySide6 import QtGui

    from visualizer.panels.output import MIN_HEIGHT
    scroll, panel = _in_a_dock(qtbot, vocab)
    big = QtGui.QFont(panel.font())
    big.setPointSizeF(19.6)
    scroll.setFont(big)
    scroll.resize(560, 900)
    scroll.show()
    panel.render(trace, state_for(trace, stack="output", step=1))
    qtbot.waitUntil(lambda: not panel.short_header and panel.shown == len(panel.top_ids))
    qtbot.waitUntil(lambda: panel.header.height() > 3 * panel.header.label.fontMetrics().height())   # 4 lines
    tall = panel.header.height()
    scroll.resize(560, 300)
    qtbot.waitUntil(lambda: panel.short_header)
    qtbot.waitUntil(lambda: panel.header.height() < tall)                  # the two lines' height, not four's
    room = scroll.viewport().height()
    assert panel.box.minimumHeight() == MIN_HEIGHT and panel.minimumSizeHint().height() <= room    # no scrolling
    qtbot.waitUntil(lambda: panel.height() <= room)
    assert 3 <= panel.shown < len(panel.top_ids) and not scroll.verticalScrollBar().isVisible()


def test_a_vocabulary_smaller_than_the_bars_shows_no_bar_for_pad(panel):
    """The seed example's ten tokens showed a bar "<pad> 0.000" once <pad> was left out of the distribution."""
    from model import load
    lm = load("seed-example")
    tr = translate(lm, "The cat sat on the mat").trace
    panel.set_vocab(lm.tgt_tok.pieces(range(lm.tgt_tok.vocab_size)))
    panel.render(tr, ViewState.for_trace(tr, stack="output", step=0))
    assert "<pad>" not in panel.top_labels and len(panel.top_ids) == lm.tgt_tok.vocab_size - 1
