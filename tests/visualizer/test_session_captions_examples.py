"""Session files round-trip and reject bad files; every stage has a caption; example sentences load."""
from __future__ import annotations


import pytest

from model.assets import lasting_name
from model.decoding import DecodingSettings
from model.families.shapes import encoder_decoder
from visualizer.examples import load_examples
from visualizer.session import SessionError, read_session, save_session
from visualizer.state import ViewState

SEED_3_3 = encoder_decoder("seed", 3, 3, 32, 4, 64)


def test_session_round_trip(tmp_path):
    s = ViewState(model_name="en-de", sentence="Two dogs run.", target="Zwei Hunde rennen.",
                  decoding=DecodingSettings(method="sample", temperature=0.7, top_k=5, seed=3), positional=False)
    s.set_shape(SEED_3_3, 6)
    s.update(kind="cross", layer=2, head=3, step=4)
    save_session(tmp_path / "s.json", s)
    t = ViewState()
    t.set_shape(SEED_3_3, 6)
    t.update(**read_session(tmp_path / "s.json"))
    for k in ("model_name", "sentence", "target", "decoding", "positional", "stack", "layer", "sublayer", "kind",
              "head", "step"):
        assert getattr(t, k) == getattr(s, k), k


def test_a_target_with_nothing_to_read_is_no_target(tmp_path):
    """A session's "target": "\u0000" showed an empty Target field and ran as an empty given target (QA)."""
    import json
    for target in ("\u0000", "\u200b", "  ", "\t"):
        path = tmp_path / "s.json"
        path.write_text(json.dumps({"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x",
                                    "target": target}), encoding="utf-8")
        assert read_session(path)["target"] == ""


def test_a_session_file_that_is_not_utf8_says_where_and_what_it_reads_as(tmp_path):
    """A session saved in Latin-1 gave the codec's own words ("'utf-8' codec can't decode byte 0xe9 in position
    60…": QA)."""
    p = tmp_path / "leçon.json"
    p.write_bytes('{"format": "attention-visualizer-session/1", "model": "en-fr",\n "sentence": "Le café"}'
                  .encode("latin-1"))
    with pytest.raises(SessionError) as err:
        read_session(p)
    assert str(err.value) == (f"{p}: not a session file (not UTF-8 text: invalid continuation byte at byte 84, line 2; "
                              "it reads as Windows-1252 (Latin-1) text, as older Windows programs save it: save it as "
                              "UTF-8)")


@pytest.mark.parametrize("content, words", [
    ("{not json", "damaged or was changed by hand: it stops making sense at line 1, column 2"),
    ('{"format": "attention-visualizer-session/1",\n "model": "en-fr" "sentence": "x"}',
     "at line 2, column 19 (Expecting ',' delimiter)"),
    ('{"format": "other"}', "not a session file of Attention Visualizer (save one with File ▸ Save session)"),
    # an Export all's run.json, which the dialog's *.json lists (QA: "format … expected" was jargon)
    ('{"format": "attention-visualizer-export/1", "model": "en-fr"}', "this is the record an Export all writes "
     "beside its pictures, not a session: open a file saved with File ▸ Save session"),
    ('{"format": "attention-visualizer-session/2", "model": "en-fr", "sentence": "x"}',
     "a session file of another version of Attention Visualizer (format 'attention-visualizer-session/2'"),
    ('{"format": "attention-visualizer-session/1", "sentence": "x"}', "invalid session"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", '
     '"decoding": {"method": "telepathy"}}', "invalid session"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", "view": {"layer": -1}}',
     "view.layer: -1 is below 0"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", "view": {"kind": "bogus"}}',
     "unknown attention kind"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", '
     '"view": {"stack": "enc", "sublayer": "cross"}}', "no sublayer 'cross'"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", "decoding": {"seed": "x"}}',
     "decoding.seed: 'x' is not a whole number"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", '
     '"decoding": {"seed": 3000000000}}', "decoding.seed: 3000000000 is above 2147483647"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", "view": {"stack": []}}',
     "view.stack: [] is not text"),
    ('{"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "x", '
     '"decoding": {"temperature": "hot"}}', "invalid session"),
])
def test_invalid_session_files_give_one_line(tmp_path, content, words):
    p = tmp_path / "bad.json"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(SessionError) as err:
        read_session(p)
    assert words in str(err.value) and "\n" not in str(err.value) and str(p) in str(err.value)


def test_every_stage_has_a_caption_and_an_equation():
    schema = SEED_3_3
    stages = schema.stages()
    assert len(stages) == 1 + 3 * 2 + 1 + 3 * 3 + 1
    for st in stages:
        title, text, equation = schema.caption(st)
        assert title and len(text) > 20 and ("=" in equation)
    assert "√d_k" in schema.caption(stages[1])[2]


def test_examples_load():
    ex = load_examples()
    assert any(e.sentence == "The red car is fast." for e in ex)
    assert all(e.shows() and e.shows("en-fr") for e in ex)
    car = ex[0]
    assert "une voiture rouge" in car.shows("en-fr") == car.shows("runs/en-fr/") == car.shows("opus-mt-en-fr")
    assert "French" not in car.shows("t5-small") == car.shows()
    where = next(e for e in ex if e.sentence == "Where is the station?")         # said once for every model
    assert where.shows("en-fr") == where.shows("t5-small") == where.shows()
    # a model that writes German has its own list (en-de learnt from image captions), told in German terms
    german = load_examples("en-de")
    assert german == load_examples("opus-mt-en-de") and not {e.sentence for e in german} & {e.sentence for e in ex}
    assert all(e.shows("en-de") and "French" not in e.shows("en-de") for e in german)
    assert load_examples("en-fr") == load_examples("gpt2") == ex
    seed = load_examples("seed-example")                 # the worked example knows its own sentence only
    assert [e.sentence for e in seed] == ["The cat sat on the mat"]


def test_a_sessions_view_the_run_lacks_is_moved_and_said(qtbot, window, tmp_path):
    """A hand-edited session (layer 40, head 99, step 500) opened at the last layer, head and step without a word."""
    import json

    from visualizer.session import FORMAT
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"format": FORMAT, "model": window.state.model_name, "sentence": "the cat sat",
                                "view": {"kind": "cross", "layer": 39, "head": 98, "step": 500}}), encoding="utf-8")
    assert window.open_session(str(path))
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the cat sat" and not window.runs.runner.busy,
                    timeout=20000)
    qtbot.waitUntil(lambda: "The session's" in window.statusBar().whole_message())
    s, t = window.state, window.trace
    assert (s.layer, s.head, s.step) == (t.n_layers("dec") - 1, t.n_heads - 1, t.n_steps - 1)
    assert window.statusBar().whole_message() == (
        f"The session's layer 40, head 99, step 500: not in this run; shown layer {s.layer + 1}, head {s.head + 1}, "
        f"step {s.step}")


def test_a_sessions_heads_are_switched_off_in_its_own_model(qtbot, window, tmp_path, tiny_model_factory):
    """Heads of the session's model that the model on screen lacks stay off once the session's model runs (they were
    checked against the model on screen and dropped without a word), and the first run is not said to be "the same
    translation as before" (nothing was switched off in the window)."""
    import json

    from model.ablation import ablated_heads
    from visualizer.session import FORMAT
    bigger = tiny_model_factory(tmp_path / "bigger", d_model=16, h=4, layers=3, seed=1)
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": FORMAT, "model": str(bigger), "sentence": "the cat sat",
                                "ablations": ["enc_self:3:4", "cross:1:2"]}), encoding="utf-8")
    assert window.state.schema.n_heads == 2          # the model on screen: 2 layers of 2 heads
    window.state.toggle_ablation("cross", 0, 0)      # a head off there: no "every head is on again" for it
    qtbot.waitUntil(lambda: not window.runs.runner.busy and ("cross", 0, 0) in ablated_heads(window.trace),
                    timeout=20000)
    assert window.open_session(str(path))
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the cat sat" and not window.runs.runner.busy,
                    timeout=20000)
    assert window.state.ablations == {("enc_self", 2, 3), ("cross", 0, 1)}
    assert ablated_heads(window.trace) == {("enc_self", 2, 3), ("cross", 0, 1)}
    assert "2 heads off" in window.ablation.note.text()
    assert not window.statusBar().whole_message().startswith(("Same translation", "Every head is on again"))


def test_a_session_finds_its_model_folder_from_any_folder(tmp_path, monkeypatch, tiny_model_dir):
    """A model folder given by a relative path is saved as an absolute one; a session whose folder is not where it
    says (an older relative path, a lesson's folder moved to another computer) finds it beside the session file."""
    import json
    import shutil

    from visualizer.session import FORMAT
    lesson = tmp_path / "lesson"
    shutil.copytree(tiny_model_dir, lesson / "my model")
    monkeypatch.chdir(lesson)
    s = ViewState(model_name=lasting_name("my model"))
    s.set_shape(SEED_3_3, 6)
    s.update(layer=1)
    assert s.model_name == str((lesson / "my model").resolve())
    save_session(lesson / "saved.json", s)
    # … saved on Windows too: by its whole path, or relative with a backslash (one name on Linux, QA)
    shutil.copytree(tiny_model_dir, lesson / "models" / "other model")
    shutil.copytree(tiny_model_dir, lesson / "third model")
    for model, found in (("models\\other model", "models/other model"), ("D:\\class\\third model", "third model")):
        (lesson / "s.json").write_text(json.dumps({"format": FORMAT, "model": model, "sentence": "the cat"}),
                                       encoding="utf-8")
        assert read_session(lesson / "s.json")["model_name"] == str((lesson / found).resolve())
    for model in ("my model", "/a/computer/that/is/gone/my model", "C:\\Users\\alice\\my model"):
        (lesson / "s.json").write_text(json.dumps({"format": FORMAT, "model": model, "sentence": "the cat"}),
                                       encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        assert read_session(lesson / "s.json")["model_name"] == str((lesson / "my model").resolve())
    assert read_session(lesson / "saved.json")["model_name"] == str((lesson / "my model").resolve())
    (lesson / "s.json").write_text(json.dumps({"format": FORMAT, "model": "en-fr", "sentence": "x"}), encoding="utf-8")
    assert read_session(lesson / "s.json")["model_name"] == "en-fr"     # a bundled name stays a name
    # … beside a folder of that name that is no model, an export's: it had been saved as that folder's path, and the
    # session could not be opened again (QA)
    (lesson / "en-fr").mkdir()
    (lesson / "en-fr" / "cross_L1_H1.png").write_bytes(b"")
    monkeypatch.chdir(lesson)
    assert lasting_name("en-fr") == "en-fr" and lasting_name("./en-fr") == str((lesson / "en-fr").resolve())


def test_a_model_opened_by_a_relative_path_is_kept_absolute(qtbot, window, tmp_path, monkeypatch, tiny_model_dir):
    """The window keeps a model folder opened by a relative path as an absolute one, so that a session saved now opens
    from any folder (it kept "tiny" and another folder's session could not open it: QA)."""
    monkeypatch.chdir(tiny_model_dir.parent)
    assert window.open_model(tiny_model_dir.name)
    assert window.state.model_name == str(tiny_model_dir.resolve())


def test_the_bundled_translators_examples_come_out_without_a_note():
    """An example a class clicks should not come with a warning (en-de wrote nonsense for the general list, QA):
    each bundled translator translates each of its examples with no note (hesitation, rare words, a loop …)."""
    from model import load, translate
    from model.notes import result_notes
    for name in ("en-fr", "en-de"):
        lm = load(name)
        for ex in load_examples(name):
            trace = translate(lm, ex.sentence).trace
            assert result_notes(trace, lm.cfg.max_len) == [], (name, ex.sentence)


def test_the_window_closed_is_the_session_a_plain_start_reopens(qtbot, window, settings, tmp_path, tiny_model_dir):
    """The app's window saves its session when it closes (QA: a teacher's sentence, view and heads off were gone at
    the next start); a damaged file or a model folder gone since starts afresh with a note, never a traceback."""
    import shutil

    from PySide6 import QtCore

    from visualizer.cli import last_session
    from visualizer.settings import Settings
    assert last_session(settings) is None                       # nothing closed yet
    # a first start's settings folder, which Qt makes only when it writes the settings (the session was lost)
    settings = window.settings = Settings(QtCore.QSettings(str(tmp_path / "new" / "settings.ini"),
                                                           QtCore.QSettings.Format.IniFormat))
    window.keeps_session = True
    window.state.toggle_ablation("cross", 0, 1)
    window.inputs.sentence.setText("the dog sat")
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the dog sat" and not window.runs.runner.busy)
    window.close()
    changes = last_session(settings)
    assert changes["model_name"] == window.state.model_name and changes["sentence"] == "the dog sat"
    assert changes["ablations"] == window.state.ablations and changes["stack"] == window.state.stack
    import json
    saved = json.loads(settings.session_path().read_text(encoding="utf-8"))
    settings.session_path().write_text("{ broken", encoding="utf-8")
    assert last_session(settings) is None and "could not be reopened" in settings.notices[-1]
    gone = tmp_path / "gone"
    shutil.copytree(tiny_model_dir, gone)
    settings.session_path().write_text(json.dumps(dict(saved, model=str(gone))), encoding="utf-8")
    assert last_session(settings)["model_name"] == str(gone)
    shutil.rmtree(gone)
    assert last_session(settings) is None and str(gone) in settings.notices[-1]
    # set aside whole, so that the fresh window's close does not write over it (a researcher's sentence and view
    # were gone after a model folder was renamed, QA), and said where
    from visualizer.cli import UNOPENED
    aside = settings.session_path().with_name(UNOPENED)
    assert not settings.session_path().exists() and json.loads(aside.read_text(encoding="utf-8"))["model"] == str(gone)
    assert settings.notices[-1].endswith(f"it starts afresh; it is kept as {aside} (File ▸ Open session, once its "
                                         "model is back)")


def test_a_window_closed_before_its_sessions_run_came_keeps_the_sessions_view(qtbot, window, tmp_path):
    """The view of a reopened window waits for its run; closed in the first seconds, the window had saved encoder
    layer 1, head 1, step 0 over it (QA)."""
    from PySide6 import QtCore

    from visualizer.cli import last_session
    from visualizer.settings import Settings
    settings = window.settings = Settings(QtCore.QSettings(str(tmp_path / "settings.ini"),
                                                           QtCore.QSettings.Format.IniFormat))
    window.keeps_session = True
    qtbot.waitUntil(lambda: not window.runs.runner.busy)
    view = {"stack": "dec", "layer": 1, "sublayer": "cross", "kind": "cross", "head": 1, "step": 2}
    window.apply_session(dict(view, sentence="the dog sat on the mat"))
    assert window._pending_view == view                # its run not shown yet
    window.close()
    changes = last_session(settings)
    assert {k: changes[k] for k in view} == view and changes["sentence"] == "the dog sat on the mat"


def test_a_session_whose_model_folder_is_gone_says_so_and_where_to_put_it(qtbot, window, tmp_path):
    """A lesson's session moved without its model folder read "Cannot open this model: …/gone_model: no such
    model", with no word of the session, nor that the folder is looked for beside it (QA). The window keeps its
    model and sentence."""
    import json

    from visualizer.session import FORMAT
    path = tmp_path / "lesson.json"
    gone = tmp_path / "elsewhere" / "gone_model"
    path.write_text(json.dumps({"format": FORMAT, "model": str(gone), "sentence": "the dog runs"}), encoding="utf-8")
    before, sentence = window.state.model_name, window.state.sentence
    assert not window.open_session(str(path))
    assert window.last_error.startswith(f"{path} names the model {gone}, which cannot be opened (")
    assert (f"Put the model's folder beside the session file ({tmp_path / 'gone_model'}) and open the session "
            f"again. The app goes on with {window.model_name}.") in window.last_error
    assert (window.state.model_name, window.state.sentence) == (before, sentence)
    # saved on Windows: the folder's own name, not the whole path as one name (QA)
    path.write_text(json.dumps({"format": FORMAT, "model": "C:\\Users\\alice\\gone model", "sentence": "x"}),
                    encoding="utf-8")
    assert not window.open_session(str(path))
    assert f"Put the model's folder beside the session file ({tmp_path / 'gone model'}) and" in window.last_error
