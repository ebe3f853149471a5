"""Compare runs: A is the pinned trace, B the current one; the difference is B − A when the shapes match."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from model import translate
from model.ablation import expand
from model.config import DecodingSettings
from visualizer.panels.compare import ComparePanel
from visualizer.state import ViewState


def compared(panel, a, b, **view) -> ViewState:
    """The panel with run a pinned and run b on screen, at a view; the view state."""
    state = ViewState.for_trace(a, **view)
    panel.state = state
    panel.render(a, state)
    panel.pin()
    panel.render(b, state)
    return state


@pytest.fixture
def panel(qtbot):
    p = ComparePanel(ViewState())
    qtbot.addWidget(p)
    p.show()
    return p


def test_difference_is_b_minus_a(panel, tiny_lm):
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    b = translate(tiny_lm, "the cat sat on the mat", target="le chat",
                  ablations=expand([("enc_self", 1, None)], tiny_lm.schema)).trace
    state = ViewState.for_trace(a, kind="cross", layer=1, head=1)
    panel.state = state
    panel.render(a, state)
    assert panel.a.isHidden() and panel.difference is None
    panel.pin()
    panel.render(b, state)
    wa, wb = a.attention("cross", 1, 1), b.attention("cross", 1, 1)
    np.testing.assert_array_equal(panel.a.shown, wa)
    np.testing.assert_array_equal(panel.b.shown, wb)
    np.testing.assert_allclose(panel.difference, wb.astype(float) - wa.astype(float))
    np.testing.assert_allclose(panel.diff.shown, (wb.astype(float) - wa.astype(float)).astype(np.float32))
    lo, hi = panel.diff.heatmap.levels
    assert lo == -hi and hi == pytest.approx(np.abs(wb - wa).max())           # centred on 0
    assert "off" not in panel.a.title and "heads\u00a0off" in panel.b.title       # (one phrase, never broken)
    assert panel.outputs.text().count("step 0") == 2
    # at Linear + softmax, the last layer's, as the attention panel shows it (the Rollout tab had kept layer 1, QA)
    from model.schema import OUTPUT, Stage
    state.update(layer=0)
    state.go_to(Stage(OUTPUT))
    panel.render(b, state)
    last = a.n_layers("dec") - 1
    np.testing.assert_allclose(panel.difference, b.attention("cross", last, 1).astype(float)
                               - a.attention("cross", last, 1).astype(float))
    panel.unpin()
    assert panel.b.isHidden()


def test_a_head_switched_off_in_one_run_is_explained_where_its_own_weights_do_not_change(panel, tiny_lm):
    """Switching a head off zeroes its output, not its weights: compared with itself it showed "Largest change
    0.000" and nothing else, which read as "no effect" (QA pass)."""
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    b = translate(tiny_lm, "the cat sat on the mat", target="le chat",
                  ablations=frozenset({("enc_self", 0, 1)})).trace
    state = compared(panel, a, b, kind="enc_self", layer=0, head=1)
    assert np.abs(panel.difference).max() == 0.0
    assert "No change: the weights are equal." in panel.note.text()
    assert "sets its output to zero, not its weights" in panel.note.text()
    state.update(kind="cross", layer=1, head=1)                  # a head that is on in both: no such words
    panel.render(b, state)
    largest = np.abs(panel.difference).max()
    assert largest > 0 and "not its weights" not in panel.note.text()
    assert f"Largest change {largest:.3g}." in panel.note.text()     # 7.1e-06 read "0.000" (QA)


def test_a_tiny_change_is_not_rounded_to_none(panel, tiny_lm):
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    b = dataclasses.replace(a, arrays=dict(a.arrays))
    key = "enc.0.self.weights"
    weights = b.arrays[key] = np.array(a.arrays[key])
    weights[0, 0, 0] += 7.1e-6
    compared(panel, a, b, kind="enc_self", layer=0, head=0)
    assert "Largest change 7.1e-06." in panel.note.text()


def test_shapes_that_differ_give_no_difference(panel, tiny_lm):
    a = translate(tiny_lm, "the cat").trace
    b = translate(tiny_lm, "the cat sat on the mat").trace
    compared(panel, a, b, kind="enc_self", layer=0, head=0)
    assert panel.difference is None and panel.diff.isHidden()
    assert "differ in shape" in panel.note.text()
    np.testing.assert_array_equal(panel.b.shown, b.attention("enc_self", 0, 0))


def test_runs_that_read_other_tokens_of_the_same_number_give_no_difference(panel, tiny_lm):
    """QA: two translations of 12 tokens each were subtracted row by row ("Je" minus "La"), labelled with B's
    words only. Same shape, other tokens: no difference, and the note says where they differ and what to do."""
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    b = translate(tiny_lm, "the cat sat on the mat", target="la chat").trace
    assert a.attention("cross", 0, 0).shape == b.attention("cross", 0, 0).shape
    assert a.axis_tokens("cross")[0] != b.axis_tokens("cross")[0]
    state = compared(panel, a, b, kind="cross", layer=0, head=0)
    assert panel.difference is None and panel.diff.isHidden()
    rows_a, rows_b = a.axis_tokens("cross")[0], b.axis_tokens("cross")[0]
    i = next(k for k, (x, y) in enumerate(zip(rows_a, rows_b)) if x != y)
    from visualizer.panels.compare import ordinal
    assert f"{ordinal(i + 1)} row: “{rows_a[i]}” in A, “{rows_b[i]}” in B" in panel.note.text()   # (QA: "row 1"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]      # read as the first)
    assert "same target" in panel.note.text()
    state.update(kind="enc_self")                                # the source is the same: a difference
    panel.render(b, state)
    assert panel.difference is not None and not panel.diff.isHidden()


def test_runs_of_two_texts_of_as_many_tokens_are_not_told_to_use_a_target(panel, tiny_lm):
    """A target cannot make two source texts' tokens equal: the note says to look at each run (QA: "Give both runs
    the same target" under an encoder's head of "girl" against "boy")."""
    a = translate(tiny_lm, "the cat sat on the mat").trace
    b = translate(tiny_lm, "the dog sat on the mat").trace
    assert len(a.src_tokens) == len(b.src_tokens) and a.src_tokens != b.src_tokens
    compared(panel, a, b, kind="enc_self", layer=0, head=0)
    assert panel.difference is None and "different tokens" in panel.note.text()
    assert "same target" not in panel.note.text() and "Show A or B" in panel.note.text()


def test_runs_of_two_models_are_named_by_their_models(panel, tiny_lm, tiny_model_factory, tmp_path):
    from model import load
    other = load(tiny_model_factory(tmp_path / "other", seed=4))
    a = translate(tiny_lm, "the cat sat", target="le chat").trace
    b = translate(other, "the cat sat", target="le chat").trace
    state = compared(panel, a, b, kind="cross", layer=0, head=0)
    assert panel.a.title.startswith("A: tiny, “the cat sat”") and panel.b.title.startswith("B: other, “the cat sat”")
    panel.render(a, state)                                  # the same model: no names, the titles stay short
    assert panel.b.title.startswith("B: “the cat sat”")


def test_the_pinned_runs_top_tokens_keep_their_models_pieces(panel, tiny_lm, tiny_model_factory, tmp_path):
    """After another model opened, A's top tokens were read in the new model's vocabulary ("Les 0.931" became
    "dr 0.931", QA)."""
    from model import load
    from model.families import output_pieces
    other = load(tiny_model_factory(tmp_path / "other", seed=4, lowercase=True))
    a = translate(tiny_lm, "the cat sat", target="le chat").trace
    state = ViewState.for_trace(a, kind="cross", layer=0, head=0)
    panel.state = state
    panel.set_vocab(output_pieces(tiny_lm))
    panel.render(a, state)
    panel.pin()
    first = panel.outputs.text()
    panel.set_vocab(["x"] * len(output_pieces(other)))     # the window gives the new model's pieces
    panel.render(translate(other, "the cat sat", target="le chat").trace, state)
    line_a = panel.outputs.text().split("<br>")[0]
    assert line_a == first.split("<br>")[0] and " x " not in line_a + " "


def test_a_narrow_panel_shows_one_matrix_chosen_by_its_buttons_and_a_wide_one_all_three(panel, tiny_lm, qtbot):
    """In the window's side dock the three matrices stacked put B and B − A below the fold: there one shows at a
    time (B − A first), chosen by buttons; wide enough, the three stand side by side and the buttons go."""
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    b = translate(tiny_lm, "the cat sat on the mat", target="le chat",
                  ablations=expand([("enc_self", 1, None)], tiny_lm.schema)).trace
    state = ViewState.for_trace(a, kind="cross", layer=1, head=1)
    panel.state = state
    panel.resize(400, 600)
    panel.render(a, state)
    assert not panel.choice_buttons["A"].isVisible()                  # nothing pinned: nothing to choose
    panel.pin()
    panel.render(b, state)
    visible = lambda: [n for n, box in panel.boxes.items() if box.isVisible()]          # noqa: E731
    assert visible() == ["B − A"] and panel.choice_buttons["A"].isVisible()
    panel.choice_buttons["A"].click()
    assert visible() == ["A"]
    np.testing.assert_array_equal(panel.a.shown, a.attention("cross", 1, 1))
    panel.resize(1000, 500)
    qtbot.waitUntil(lambda: panel.side_by_side)
    assert visible() == ["A", "B", "B − A"] and not panel.choice_buttons["A"].isVisible()
    xs = [panel.boxes[n].geometry().x() for n in ("A", "B", "B − A")]
    assert xs == sorted(xs) and len(set(xs)) == 3                     # in a row, A first
    panel.resize(400, 600)
    qtbot.waitUntil(lambda: not panel.side_by_side)
    assert visible() == ["A"]
    c = translate(tiny_lm, "the cat").trace                         # another shape: no difference to choose
    panel.choice_buttons["B − A"].click()
    panel.render(c, ViewState.for_trace(c, kind="cross", layer=1, head=1))
    assert visible() == ["B"] and not panel.choice_buttons["B − A"].isEnabled()


def test_the_difference_is_exported_as_a_figure_that_names_both_runs(panel, tiny_lm, tmp_path):
    """The B − A picture was the 428 × 200 screen grab, half its rows unlabelled and nothing to say what A and B
    were; its CSV's corner read "row \\ column". It is a 900 × 760 figure titled with both runs (which heads were
    off), every token labelled, and its numbers under "query \\ key"."""
    from visualizer.plot_menu import widget_export, write_plot
    from visualizer.export import read_heatmap_csv

    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    b = translate(tiny_lm, "the cat sat on the mat", target="le chat", ablations=frozenset({("cross", 0, 1)})).trace
    compared(panel, a, b, kind="cross", layer=1, head=0)
    export = widget_export(panel.diff)
    assert export.name() == "B_A_Cross-attention_layer_2_head_1"
    image = export.image(1.0)
    assert (image.width(), image.height()) == (900, 760)
    write_plot(export, tmp_path / "diff.csv", "csv")
    rows, cols, matrix = read_heatmap_csv(tmp_path / "diff.csv")
    assert (tmp_path / "diff.csv").read_text().startswith("query \\ key,")
    np.testing.assert_allclose(matrix, panel.difference, rtol=1e-6, atol=1e-9)
    assert (rows, cols) == b.axis_tokens("cross")
    # each run as a figure's title ends it: its model and decoding (a beam's and a greedy run's read the same: QA),
    # and the heads off in the panels' words, not --ablate's "cross:1:2" (QA)
    b_line = "B: “the cat sat on the mat” (tiny, given target) [1 head off: Cross (decoder → encoder) L1 H2]"
    assert panel.diff.figure_title().endswith(b_line)
    assert "A: “the cat sat on the mat” (tiny, given target); B:" in panel.diff.figure_title()


def test_cells_a_causal_head_never_uses_are_no_difference_of_zero(panel, tiny_lm, tmp_path):
    """B − A of decoder self-attention read 0.0 in the future cells, in 0's colour on screen and as 0.0 in its CSV
    (QA as a student): they are hatched, NaN in the difference and empty in the CSV, as in A and B."""
    from visualizer.export import read_heatmap_csv
    from visualizer.plot_menu import widget_export, write_plot
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat est assis").trace
    b = translate(tiny_lm, "the cat sat on the mat", target="le chat est assis",
                  ablations=frozenset({("dec_self", 0, 1)})).trace
    compared(panel, a, b, kind="dec_self", layer=1, head=0)
    mask = b.mask("dec_self", 1)
    assert not mask.all()                                              # a causal head: the future unused
    assert np.isnan(panel.difference[~mask]).all()
    np.testing.assert_allclose(panel.difference[mask], (b.attention("dec_self", 1, 0).astype(float)
                                                        - a.attention("dec_self", 1, 0).astype(float))[mask])
    for box in (panel.diff, panel.b):                                  # hatched there
        np.testing.assert_array_equal(box.heatmap._mask, mask)
        assert box.heatmap.hatch is not None and box.heatmap.hatch.isVisible()
    write_plot(widget_export(panel.diff), tmp_path / "diff.csv", "csv")
    _, _, matrix = read_heatmap_csv(tmp_path / "diff.csv")
    assert np.isnan(matrix[~mask]).all() and np.isfinite(matrix[mask]).all()


def test_decoder_only_runs_of_prompts_of_other_lengths_compare_the_same_new_token(panel, tmp_path):
    """At "step 15" A (a 10-token prompt) predicted its 6th new token and B (16 tokens) its 1st, and both lines read
    "step 15" (QA): the same token of their continuations, each line saying which."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model import DecodingSettings
    from model.families import load, translate as translate_any
    lm = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    a = translate_any(lm, "the cat sat", DecodingSettings(max_new=6)).trace
    b = translate_any(lm, "the cat sat on the red mat", DecodingSettings(max_new=6)).trace
    pa, pb = a.prompt_rows(), b.prompt_rows()
    assert pb - pa == 4
    state = compared(panel, a, b, kind=a.schema.kind_names[0], layer=0, head=0, step=0)
    for step, (sa, sb), words in ((pb + 1, (pa + 1, pb + 1), ("its new token 2", "its new token 2")),
                                  (1, (1, 1), ("in its prompt", "in its prompt"))):
        state.update(step=step)
        panel.render(b, state)
        lines = panel.outputs.text().split("<br>")
        assert lines[0].startswith(f"<b>A</b>, step {sa} ({words[0]}): ")
        assert lines[1].startswith(f"<b>B</b>, step {sb} ({words[1]}): ")
        best_a = panel._piece(a, int(np.argmax(a.probs(sa))))
        assert lines[0].split(": ", 1)[1].startswith(best_a)


@pytest.mark.parametrize("pinned", ["gpt2", "bert"])
def test_a_kind_of_the_same_name_in_another_stack_is_no_kind_to_compare(panel, tmp_path, pinned):
    """GPT-2's "self" is its decoder's, BERT's its encoder's: a run of one pinned and one of the other on screen
    raised KeyError ("this model has no stack 'enc'") at every view change, and the window showed the old model's
    text under the new one's name (QA). The panel says there is nothing to compare."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model.families import load, translate as translate_any
    runs = {f: translate_any(load(hf_tiny.build(f, tmp_path / f)), "the cat sat on the mat").trace
            for f in ("gpt2", "bert")}
    a, b = runs[pinned], runs["bert" if pinned == "gpt2" else "gpt2"]
    assert a.schema.kind_names == b.schema.kind_names == ("self",)
    compared(panel, a, b, kind="self", layer=1, head=0)
    assert panel.note.text() == "The pinned run's model has no such attention kind: nothing to compare."
    assert panel.difference is None


def test_each_runs_top_tokens_are_at_the_temperature_it_was_shown_at(panel, tiny_lm):
    """QA as a researcher: a run pinned at T = 2 listed its tokens at T = 1 once T went back to 1 (0.222, not the
    0.095 the Output panel had shown), and neither line said which temperature."""
    from model.config import DecodingSettings
    from model.text import probability
    a = translate(tiny_lm, "the cat sat on the mat", target="le chat").trace
    state = ViewState.for_trace(a, kind="cross", layer=1, head=1, step=1)
    state.decoding = DecodingSettings(temperature=2.0)
    panel.state = state
    panel.render(a, state)
    panel.pin()
    state.decoding = DecodingSettings(temperature=1.0)
    panel.render(a, state)
    lines = panel.outputs.text().split("<br>")

    def listed(line):
        return [float(w.split()[-1]) for w in line.split(": ", 1)[1].split(", ")]

    for line, temperature in zip(lines, (2.0, 1.0)):
        assert f"T = {temperature:.2f}" in line
        top = np.sort(a.probs(1, temperature))[::-1][:len(listed(line))]
        assert listed(line) == [float(probability(p)) for p in top]
    assert listed(lines[0]) != listed(lines[1])
    state.decoding = DecodingSettings(temperature=2.0)          # both at T = 2: each line says so
    panel.render(a, state)
    assert panel.outputs.text().count("T = 2.00") == 2
    panel.unpin()
    state.decoding = DecodingSettings()
    panel.render(a, state)
    panel.pin()
    assert "T = " not in panel.outputs.text()                    # plain softmax in both: nothing said


def test_a_long_sentence_takes_a_line_of_the_title_and_a_figure_of_a_or_b_names_its_head(panel, tiny_lm):
    """A 240-character sentence took 12 lines of B's title in a dock, and left its heatmap a strip; its figure said
    neither head nor model (QA, a teacher's handout). On screen the titles quote the sentence's start; a figure of A
    or B names the kind, layer, head and model, and quotes up to a figure title's 100 characters, as every other
    heatmap figure does."""
    from visualizer.export import TITLE_CHARS
    from visualizer.panels.compare import SCREEN_CHARS
    from visualizer.text_safety import FSI, PDI
    long = " ".join(["the cat sat on the mat"] * 11)
    a = translate(tiny_lm, "the cat sat on the mat").trace
    b = translate(tiny_lm, long).trace
    compared(panel, a, b, kind="enc_self", layer=1, head=1)
    quoted = panel.b.title.split("“", 1)[1].rsplit("”", 1)[0].strip(FSI + PDI)
    assert quoted.endswith("…") and len(quoted) <= SCREEN_CHARS and long.startswith(quoted[:-1])
    figure = panel.b.figure_title()
    assert figure.startswith("B: Encoder self-attention, layer 2, head 2 — “")
    assert figure.endswith(f"({b.meta['model']})")
    quoted = figure.split("“", 1)[1].rsplit("”", 1)[0].strip(FSI + PDI)
    assert quoted.endswith("…") and SCREEN_CHARS < len(quoted) <= TITLE_CHARS
    assert panel.a.figure_title().startswith("A: Encoder self-attention, layer 2, head 2 — “")
    assert panel.diff.figure_title().endswith(f"({a.meta['model']})")


def test_titles_of_sentences_that_differ_late_show_where_they_differ(panel, tiny_lm):
    """Two sentences that differ after the titles' 60 characters read the same, A's and B's (QA): each title then
    quotes its sentence from a word before the first difference."""
    from visualizer.panels.compare import SCREEN_CHARS
    start = "the cat sat on the mat and the dog sat on the mat and the cat sat on the "
    a = translate(tiny_lm, start + "mat").trace
    b = translate(tiny_lm, start + "dog").trace
    compared(panel, a, b, kind="enc_self", layer=0, head=0)
    quoted = [box.title.split("“", 1)[1].rsplit("”", 1)[0].strip("\u2068\u2069") for box in (panel.a, panel.b)]
    assert quoted[0] != quoted[1] and all(q.startswith("…") and len(q) <= SCREEN_CHARS for q in quoted)
    assert quoted[0].endswith("the mat") and quoted[1].endswith("the dog")


def test_a_figure_of_a_or_b_says_how_its_run_was_decoded(panel, tiny_lm):
    """A pinned beam run and a greedy one had figures titled alike (QA): each names its decoding, as every other
    figure does, and positions switched off."""
    a = translate(tiny_lm, "the cat sat on the mat", DecodingSettings(method="beam", beam=3)).trace
    try:
        b = translate(tiny_lm, "the cat sat on the mat", positional=False).trace
    finally:            # the switch lasts in the model, which later tests share (translate's documented way)
        translate(tiny_lm, "the cat", positional=True)
    compared(panel, a, b, kind="enc_self", layer=1, head=1)
    assert panel.a.figure_title().endswith(f"({a.meta['model']}, beam 3)")
    assert panel.b.figure_title().endswith(f"({b.meta['model']}, no positional encoding)")
