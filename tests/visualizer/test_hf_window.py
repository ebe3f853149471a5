"""Hugging Face models of each family in the window, the panels, the CSV export and the screenshot mode: what the
attention panel and the exported CSV files show, for every layer and head, is transformers' own
output_attentions; every panel renders every stage of the model's schema; the app starts on each model folder."""
from __future__ import annotations

import html
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from test_shapes import (panels, test_every_panel_shows_the_trace_at_every_stage,  # noqa: E402,F401 (reused on HF)
                         test_stepping_visits_exactly_the_schema_stages, test_the_architecture_map_has_one_column_a_stack)

FAMILIES = ("gpt2", "bert", "roberta", "marian", "bart", "t5", "llama", "marian-spm")   # marian-spm: OPUS-MT's files
SENTENCE = "the cat sat on the mat"
_BUILT: dict = {}


def _folder(family, tmp_path_factory):
    if family not in _BUILT:
        _BUILT[family] = hf_tiny.build(family, tmp_path_factory.mktemp(family) / "model")
    return _BUILT[family]


@pytest.fixture(params=FAMILIES)
def hf_folder(request, tmp_path_factory):
    return request.param, _folder(request.param, tmp_path_factory)


@pytest.fixture
def shaped_trace(hf_folder):
    """The panels' tests of model shapes (test_shapes.py), on real traces of HF models."""
    from model.config import DecodingSettings
    from model.families import load, translate
    return translate(load(hf_folder[1]), SENTENCE, DecodingSettings(max_new=5)).trace


def test_the_window_shows_transformers_own_attention_for_every_layer_and_head(qtbot, hf_folder, settings):
    from visualizer.window import MainWindow
    family, folder = hf_folder
    w = MainWindow(model=str(folder), sentence=SENTENCE, settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy, timeout=60000)
    try:
        assert w.lm.family.startswith("hf.") and w.trace.meta["sentence"] == SENTENCE
        layout = w.trace.schema.layout                    # the input rows say what this kind of model reads and writes
        # an encoder-decoder's by its family (the folder's name, "model", says no language): OPUS-MT translates
        # from a language the name does not give; BART and T5 write summaries, answers as well as translations
        seq2seq = ("Source:", "Translation:") if family.startswith("marian") else ("Source:", "Output:")
        assert (w.inputs.sentence_label.text().replace("&", ""), w.inputs.translation_label.text()) == {
            "encoder-decoder": seq2seq, "decoder-only": ("Prompt:", "Continuation:"),
            "encoder-only": ("Text:", "Filled in:")}[layout]
        assert w.inputs.target.isEnabled() == (layout != "encoder-only")
        writes = layout != "encoder-only"           # greedy / beam / top-k / seed choose what a decoder writes
        assert w.inputs.method.isEnabled() == writes and w.inputs.temperature.isEnabled()
        assert not w.inputs.beam.isEnabled() and not w.inputs.top_k.isEnabled()      # greedy: neither applies
        t = w.trace
        # a decoder-only model's text: its prompt's first token (Llama's <s>), which no row predicts, then its rows'
        # tokens (the status bar counted the rows, and the chips left out "The", QA)
        n, given = len(t.out_tokens) + 1, t.meta.get("prompt_tokens", 0)
        assert w.status_tokens.text() == {
            "encoder-decoder": f"{len(t.src_tokens)} source / {len(t.out_tokens)} output tokens",
            "decoder-only": f"{n} tokens ({given} prompt, {n - given} continuation)",
            "encoder-only": f"{len(t.src_tokens)} tokens"}[layout]
        if layout == "encoder-decoder":       # squeezed, it reads "8 in, 9 out" ("8 / 9 tokens" read as 8 of 9: QA)
            assert w.status_tokens._shorter == (f"{len(t.src_tokens)} in, {len(t.out_tokens)} out",)
        assert ("[greedy]" in w.inputs.translation.label.text()) == (layout != "encoder-only")
        if layout == "decoder-only":                       # the prompt's chips grey: the model did not write them
            w.resize(1500, 1000)
            w.refit_caption()
            prompt = t.meta["prompt_tokens"]
            assert t.out_tokens[: prompt - 1] == t.tgt_tokens[1:prompt]
            qtbot.waitUntil(lambda: w.inputs.translation.label.text().count("#e6e6e6") == given)
            chip = re.search(r"<span style='background:#e6e6e6[^>]*>&nbsp;(.*?)&nbsp;</span>",
                             w.inputs.translation.label.text()).group(1)
            assert html.unescape(chip.replace("\u2060", "")) == t.tgt_tokens[0]
        ref, _ = hf_tiny.reference(family, folder, w.translation)
        for kind, layers in ref.items():
            for layer, heads in enumerate(layers):
                for head in range(heads.shape[0]):
                    w.state.update(kind=kind, layer=layer, head=head)
                    att = w.attention
                    assert (att.shown_kind, att.shown_layer, att.shown_head) == (kind, layer, head)
                    mask = w.trace.mask(kind, layer)
                    np.testing.assert_allclose(att.focus.shown, np.where(mask, heads[head], np.nan), atol=1e-6)
        w.state.update(target="le chat")                  # the training step is the seed family's: one line
        w.training.render(w.trace, w.state)
        assert w.training.stepper is None and not w.training.step_button.isEnabled()
        assert not w.training.lr.isEnabled() and not w.training.reset_button.isEnabled()   # nothing looks clickable
        assert w.training.status.text().startswith("The training step works on this app's own models")
    finally:
        w.runs.runner.wait(10000)


def test_the_csv_export_is_transformers_own_attention(hf_folder, tmp_path, capsys):
    from visualizer import export_command
    from visualizer.export import read_heatmap_csv
    family, folder = hf_folder
    assert export_command.main([SENTENCE, "--model", str(folder), "--format", "csv", "--out", str(tmp_path)]) == 0
    from model.families import load, translate
    lm = load(folder)
    result = translate(lm, SENTENCE)
    ref, _ = hf_tiny.reference(family, folder, result)
    for kind, layers in ref.items():
        k = result.trace.schema.kind(kind)
        for layer, heads in enumerate(layers):
            for head in range(heads.shape[0]):
                rows, cols, matrix = read_heatmap_csv(tmp_path / f"{k.file}_L{layer + 1}_H{head + 1}.csv")
                assert (rows, cols) == result.trace.axis_tokens(kind)
                shown = np.where(result.trace.mask(kind, layer), heads[head], np.nan)    # masked cells: empty
                np.testing.assert_allclose(matrix, shown, atol=1e-6)


@pytest.mark.slow
def test_the_screenshot_mode_works_on_each_family(hf_folder, tmp_path):
    family, folder = hf_folder
    shot = tmp_path / "x.png"
    proc = subprocess.run([sys.executable, "-m", "visualizer", "--model", str(folder), "--screenshot", str(shot)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000


def test_a_screenshot_ends_without_a_crash_when_python_finalises(tmp_path):
    """A window still shown when --screenshot quits was destroyed by PySide's exit handler while Python finalised:
    DistilBERT at 1600 × 1000 with a [MASK] died of SIGSEGV after saving its picture, 4 runs in 4 (QA). The
    window is deleted before the app returns (cli.release)."""
    folder = hf_tiny.build("distilbert", tmp_path / "distilbert")
    shot = tmp_path / "x.png"
    proc = subprocess.run([sys.executable, "-m", "visualizer", "--model", str(folder), "--size", "1600x1000",
                           "--sentence", "the cat [MASK] on the mat .", "--screenshot", str(shot)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == f"saved {shot}" and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_large_model_shows_its_input_attention_while_it_generates(qtbot, tmp_path_factory, settings):
    """A model big enough to preview (forced here on a tiny one) is shown twice per run: first the traced input,
    marked as generating, then the full run, which replaces it; the first look is never a saved frame."""
    from model.families import load
    from visualizer.window import MainWindow
    lm = load(_folder("gpt2", tmp_path_factory))
    lm.previews = True
    w = MainWindow(model=str(lm.path), sentence=SENTENCE, settings=settings, lm=lm)
    qtbot.addWidget(w)
    shown = []
    w.runs.ready.connect(lambda run: shown.append((run, w.inputs.translation.text(), w.status_time.text())))
    w.show()
    qtbot.waitUntil(lambda: w.trace is not None and not w.runs.runner.busy and len(shown) >= 2, timeout=60000)
    (first, label, status), (full, _, status2) = shown[-2:]
    assert first.partial and first.key is None and first.translation.trace.meta["partial"]
    assert "Generating" in label and "generating" in status and "generating" not in status2
    assert not full.partial and w.trace is full.translation.trace and w.runs.previous is full
    n = len(first.translation.trace.tgt_tokens)
    np.testing.assert_allclose(first.translation.trace.attention("self", 0),
                               full.translation.trace.attention("self", 0)[:, :n, :n], atol=1e-5)
    w.runs.runner.wait(10000)


@pytest.mark.parametrize("family, sentence", [("gpt2", SENTENCE), ("bert", "the cat [MASK] on the mat")])
def test_a_run_opens_at_the_first_written_token_or_the_mask_and_keeps_a_step_the_user_chose(
        qtbot, tmp_path_factory, settings, family, sentence):
    """GPT-2 opened at step 0, inside its prompt, and BERT at [CLS] (QA pass): the step the output panel shows is
    what the model wrote first, the mask it filled; once the user moves, a new sentence keeps that step."""
    from visualizer.window import MainWindow
    w = MainWindow(model=str(_folder(family, tmp_path_factory)), sentence=sentence, settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy
                    and w.trace.meta.get("sentence") == sentence and not w.trace.meta.get("partial"), timeout=60000)
    try:
        t = w.trace
        first = (t.meta["prompt_tokens"] - 1 if family == "gpt2"
                 else t.tokens(t.schema.output_stack.tokens).index("[MASK]"))
        assert first > 0 and w.state.step == first and w.panels["output"].step == first
        longer = sentence.replace("the mat", "the big mat")
        w.inputs.sentence.setText(longer)
        qtbot.waitUntil(lambda: w.trace.meta.get("sentence") == longer and not w.trace.meta.get("partial")
                        and not w.runs.runner.busy, timeout=60000)
        if family == "gpt2":
            assert w.state.step == w.trace.meta["prompt_tokens"] - 1 == first + 1     # followed the longer prompt
        w.state.update(step=0)                                                    # the user's own choice
        w.inputs.sentence.setText(sentence)
        qtbot.waitUntil(lambda: w.trace.meta.get("sentence") == sentence and not w.trace.meta.get("partial")
                        and not w.runs.runner.busy, timeout=60000)
        assert w.state.step == 0
    finally:
        w.runs.runner.wait(10000)


def test_a_bert_without_its_masked_word_head_says_it_fills_nothing_in(qtbot, tmp_path_factory, settings):
    """A BertModel folder (no masked-word head) read "Filled in: (empty) [lowercase]" (QA as a researcher)."""
    import shutil

    import transformers

    from visualizer.window import MainWindow
    bert = _folder("bert", tmp_path_factory)
    headless = tmp_path_factory.mktemp("headless") / "bert"
    transformers.BertModel.from_pretrained(str(bert)).save_pretrained(str(headless))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(bert / name, headless / name)
    w = MainWindow(model=str(headless), sentence="The cat [MASK] on the mat", settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy, timeout=60000)
    try:
        text = w.inputs.translation.text()
        assert "no output layer" in text and "(empty)" not in text and "lowercase" not in text
        assert not w.inputs.temperature.isEnabled()              # nothing for it to shape
    finally:
        w.runs.runner.wait(10000)


def test_a_hugging_face_sessions_heads_over_a_bundled_family_window_and_back(qtbot, window, tmp_path,
                                                                              tmp_path_factory, tiny_model_dir):
    """A GPT-2 session ('self:2:3') opened over the window of this app's own model, and an own model's session
    ('cross:1:2') back over GPT-2's: the heads were set while the other model's shape was on screen, and naming
    them raised KeyError 'self' (the command line did not start; the window was left broken; QA)."""
    import json

    from model.ablation import ablated_heads
    from visualizer.examples import load_examples
    from visualizer.session import FORMAT
    gpt2 = _folder("gpt2", tmp_path_factory)
    for model, heads, spec in ((gpt2, {("self", 1, 2)}, "self:2:3"), (tiny_model_dir, {("cross", 0, 1)}, "cross:1:2")):
        path = tmp_path / f"{spec.replace(':', '_')}.json"
        path.write_text(json.dumps({"format": FORMAT, "model": str(model), "sentence": "the dog runs",
                                    "ablations": [spec]}), encoding="utf-8")
        assert window.open_session(str(path))
        qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the dog runs" and not window.runs.runner.busy
                        and str(window.trace.meta.get("model", "")) != "", timeout=20000)
        qtbot.waitUntil(lambda h=heads: ablated_heads(window.trace) == h, timeout=20000)
        assert window.state.ablations == heads and "1 head off" in window.ablation.note.text()
        # the Examples menu is the session's model's: texts to continue for GPT-2, translations for the seed model
        first = window.menus.examples_menu.actions()[0].text().split("\t")[0]
        assert first == load_examples(str(model), window.lm.schema)[0].sentence
        assert (first == "Once upon a time, there was a") == (model == gpt2)
        window.inputs.sentence.setText("the cat runs")          # typing goes on running the model
        qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the cat runs" and not window.runs.runner.busy,
                        timeout=20000)
        window.inputs.sentence.setText("the dog runs")


def test_the_embedding_formulas_say_the_scale_and_positions_the_model_uses(hf_folder, shaped_trace, qtbot):
    """QA: GPT-2's Embeddings panel and Math tab said e = √d_model · E[token] and p = PE(i); GPT-2 scales nothing
    and learns its positions. Every row of e is a row of transformers' own embedding table times the scale the
    schema names, and the panels write that scale and that p."""
    from visualizer.panels.embeddings import EmbeddingsPanel
    from visualizer.panels.inspector import InspectorPanel
    from visualizer.state import ViewState
    family, folder = hf_folder
    schema = shaped_trace.schema
    side = schema.stacks[0].tokens
    table = hf_tiny.reference_model(family, folder).get_input_embeddings().weight.detach().numpy()
    scale = np.sqrt(schema.d_model) if schema.scale_embedding else 1.0
    e = np.asarray(shaped_trace[f"{side}.embedding"], dtype=np.float64)
    nearest = np.abs(e[:, None, :] - scale * table[None, :, :]).max(axis=2).min(axis=1)
    assert nearest.max() < 1e-4 * max(1.0, float(np.abs(e).max())), (family, nearest.max())
    if family in ("gpt2", "bert", "t5", "llama", "bart"):
        assert not schema.scale_embedding
    e_term, p_term = schema.embedding_terms("2")
    assert e_term == ("√d_model · E[token]" if schema.scale_embedding else "E[token]")
    row = 2 + schema.position_offset                      # RoBERTa's and BART's place 2 is row 4 of their table
    assert p_term == {"learned": f"P[{row}]", "sinusoidal": "PE(2)"}.get(schema.positions, "0")
    if schema.positions not in ("sinusoidal", "learned"):
        return                                    # (rotary, relative: x = E[token], tested with their panels)
    panel = EmbeddingsPanel()
    qtbot.addWidget(panel)
    first = schema.stacks[0]
    panel.render(shaped_trace, ViewState.for_trace(shaped_trace, stack=first.key, layer=0,
                                                   sublayer=first.sublayers[0].key))
    header = panel.header.text()
    assert ("√d" in header) == schema.scale_embedding
    offset = f" + {schema.position_offset}" if schema.position_offset else ""
    assert (f"P[position{offset}] (learned)" in header) == (schema.positions == "learned")
    assert f"x = {schema.sum_term()}</i>" in header and panel.maps["x"].title.endswith(
        f"x = {schema.sum_term()}")
    assert ("PE[position]" in header or "PE(position)" in header) == (schema.positions == "sinusoidal")
    assert f"e = {e_term} =" in InspectorPanel()._embed_html(shaped_trace, side, 2)
    assert f"p = {p_term} =" in InspectorPanel()._embed_html(shaped_trace, side, 2)
    assert f"x = {schema.sum_term()} =" in InspectorPanel()._embed_html(shaped_trace, side, 2)


@pytest.mark.parametrize("family, expected", [
    ("bert", "Nothing to fill in: no text is typed, so the model reads only its own tokens ([CLS] [SEP])."),
    ("gpt2", "The continuation is made up from nothing: no prompt is typed, so the model reads only its start token.")])
def test_a_blank_inputs_note_says_what_the_model_does_with_it(family, expected, tmp_path_factory):
    """QA: a masked-word model with no text was told its "translation is made up from nothing" (it writes none)."""
    from model.config import DecodingSettings
    from model.families import load, translate
    from model.notes import blank_note
    trace = translate(load(_folder(family, tmp_path_factory)), "", DecodingSettings(max_new=2)).trace
    assert blank_note(trace, "") == expected
    assert blank_note(trace, "\u200b").split(": ", 1)[1].startswith(
        f"the {'text' if family == 'bert' else 'prompt'} holds only invisible or control characters, so ")


def test_the_text_fields_hint_and_the_guide_name_the_models_own_mask(qtbot, tmp_path_factory):
    """QA: RoBERTa's mask is <mask>; the Text field's hint and the guide said "[MASK]", which it reads as text."""
    from model.families import family_for
    from visualizer.controls import InputBar
    from visualizer.help import guide_html
    folder = _folder("roberta", tmp_path_factory)
    schema = family_for(folder).schema_of_folder(folder)
    bar = InputBar()
    qtbot.addWidget(bar)
    bar.show_layout(schema.layout, schema.has_output, schema.family, "roberta", schema.special.get("mask"))
    assert bar.sentence.placeholderText() == "Type a sentence; <mask> marks a word to guess…"
    guide = guide_html(schema)
    assert "at a <b>&lt;mask&gt;</b> it fills in a word" in guide and "[MASK]" not in guide


def test_a_target_waits_for_a_model_of_its_kind(qtbot, window, tmp_path_factory):
    """QA as a student: en-fr's French target stayed in the field when GPT-2 was opened, and was forced through it
    as its continuation ("� � � �", decoding greyed). Each kind of model keeps its own target: set aside when a
    model of another kind opens, back when one of its kind does."""
    window.inputs.target.setText("le chat")
    qtbot.waitUntil(lambda: window.trace.meta.get("mode") == "teacher-forced" and not window.runs.runner.busy,
                    timeout=20000)
    seed = window.state.model_name
    assert window.open_model(str(_folder("gpt2", tmp_path_factory)))
    qtbot.waitUntil(lambda: window.trace.schema.layout == "decoder-only" and not window.runs.runner.busy,
                    timeout=20000)
    assert window.state.target == "" and window.inputs.target.text() == ""
    assert window.trace.meta.get("mode") != "teacher-forced"            # GPT-2 writes its own continuation
    window.inputs.target.setText("on the mat")                          # GPT-2's own target …
    qtbot.waitUntil(lambda: window.trace.meta.get("mode") == "teacher-forced", timeout=20000)
    assert window.open_model(seed)
    qtbot.waitUntil(lambda: window.trace.schema.layout == "encoder-decoder" and not window.runs.runner.busy,
                    timeout=20000)
    assert window.state.target == "le chat" and window.inputs.target.text() == "le chat"     # … and en-fr's back
    assert window.open_model(str(_folder("gpt2", tmp_path_factory)))
    assert window.state.target == "on the mat"
