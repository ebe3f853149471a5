"""Issue 19, one test per example: each command ends with one clear line on stderr, never a traceback or a hang,
and loses nothing. (Training's examples are in tests/model/test_train_stops.py.)"""
from __future__ import annotations

import json
import shutil
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from command_checks import check_command_output, kept, snapshot

from model import translate
from model.command_line import state_dir

SESSION = {"format": "attention-visualizer-session/1", "model": "en-fr", "sentence": "the cat", "target": "",
           "positional": True, "decoding": {"method": "greedy"}, "view": {}}


def run_process(args: list, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in a process of its own (arguments may be bytes), its settings and logs in fresh folders."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "visualizer", *args], capture_output=True, timeout=timeout, env=env)


@pytest.mark.parametrize("command", ["translate", "export"])
def test_an_argument_that_is_not_utf8_is_replaced_with_a_notice(command, tiny_model_dir, tiny_lm, tmp_path):
    extra = ["--out", str(tmp_path / "out"), "--format", "csv"] if command == "export" else []
    proc = run_process([command, b"caf\xe9 the cat", "--model", str(tiny_model_dir), *extra])
    err, out = proc.stderr.decode(), proc.stdout.decode()
    check_command_output(proc.returncode, err)
    assert proc.returncode == 0
    lines = err.splitlines()                  # notes only: the bytes replaced, then what the result calls for
    assert "argument 2 is not valid UTF-8 text" in lines[0] and all(line.startswith("note: ") for line in lines)
    expected = translate(tiny_lm, "caf\ufffd the cat").text
    assert (out.strip() if command == "translate" else out.splitlines()[0]) == \
        (expected if command == "translate" else f"translation: {expected}")


def test_a_terminal_that_cannot_show_a_letter_gets_a_question_mark_not_an_error(tiny_model_dir, tiny_lm):
    """With an ASCII terminal (PYTHONIOENCODING=ascii) `translate "…café…"` failed after the work was done:
    "unexpected UnicodeEncodeError", exit 1, no translation (QA)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONIOENCODING="ascii")
    proc = subprocess.run([sys.executable, "-m", "visualizer", "translate", "the café cat", "--model",
                           str(tiny_model_dir)], capture_output=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-1000:]
    expected = translate(tiny_lm, "the café cat").text
    assert proc.stdout.decode("ascii").strip() == expected.encode("ascii", "replace").decode("ascii")


def test_an_unwritable_run_record_is_one_line_and_stops_the_export_before_its_figures(run_command, tiny_model_dir,
                                                                                   tmp_path):
    """A folder (or a full disk) where run.json goes read "error: unexpected ExportError: …" (QA). run.json is
    written first (figures without it said nothing of their run), so nothing else is written."""
    (tmp_path / "run.json").mkdir()
    code, out, err = run_command(["export", "the cat", "--model", str(tiny_model_dir), "--out", str(tmp_path),
                                  "--format", "csv"])
    assert code == 1 and err.splitlines()[-1] == (
        f"error: {tmp_path / 'run.json'}: could not be written (not a regular file (a folder, a device, a pipe or a "
        f"socket))")
    assert not list(tmp_path.glob("*.csv")) and "unexpected" not in err


@pytest.mark.parametrize("stop_after", ["first", "last"])
def test_an_export_stopped_keeps_whole_figures_and_run_json(run_command, monkeypatch, tiny_model_dir, tmp_path,
                                                            stop_after):
    """Ctrl+C between two figures keeps the figures written, and run.json, written first (it was left out: the
    folder held figures and nothing to say which run they show; QA as a researcher)."""
    import signal

    from visualizer import export
    real = export.export_heatmaps

    def export_then_stop(specs, *args, progress, **kwargs):
        def progress_stopped(n, total):
            if n == (1 if stop_after == "first" else total):
                os.kill(os.getpid(), signal.SIGINT)           # held by the command until a safe point
            return progress(n, total)
        return real(specs, *args, progress=progress_stopped, **kwargs)
    monkeypatch.setattr(export, "export_heatmaps", export_then_stop)
    out_dir = tmp_path / "figures"
    code, out, err = run_command(["export", "the cat", "--model", str(tiny_model_dir), "--out", str(out_dir),
                                  "--format", "csv"], check=False)
    figures = sorted(out_dir.glob("*.csv"))
    assert code == 130 and "Traceback" not in err, err
    record = json.loads((out_dir / "run.json").read_text(encoding="utf-8"))
    assert record["sentence"] == "the cat"
    # what it translated is said before the figures, so a stopped export says it too (it came after them, QA)
    assert out.startswith(f"translation: {record['output']}")
    if stop_after == "first":
        assert len(figures) == 1 and "note: 1 of " in err and f"was written to {out_dir} with run.json" in err
    else:
        assert len(figures) > 1
        assert f"note: {len(figures)} of {len(figures)} figures were written to {out_dir} with run.json" in err


def test_empty_sentence_gets_nothing_to_translate(run_command, tiny_model_dir):
    for text in ("", "   ", "\u200b\u200b", "\u2060 \ufeff", "\x01\x02"):   # zero-width characters were translated
        code, out, err = run_command(["translate", text, "--model", str(tiny_model_dir)])
        # invisible or control characters alone are said as such: "the text is empty" denied what was pasted (QA)
        why = "is empty" if not text.strip() else "holds only invisible or control characters"
        assert (code, out) == (2, "") and err == f"error: nothing to translate: the text {why}\n"


def test_a_blank_target_is_refused_not_taken_for_none(run_command, tiny_model_dir, tmp_path):
    for command in (["export", "the cat", "--out", str(tmp_path / "f")], ["metrics", "the cat"]):
        code, out, err = run_command([*command, "--target", " \u200b ", "--model", str(tiny_model_dir)])
        assert code == 2 and "argument --target: it is empty: give a translation to force, or leave --target out" in err
    assert not (tmp_path / "f").exists()


def test_an_empty_model_or_out_is_refused_not_taken_for_the_default_or_the_current_folder(
        run_command, tiny_model_dir, tmp_path, monkeypatch):
    """QA: `--model ""` (a script's unset $M) opened en-fr without a word, and `export --out ""` wrote its figures
    into the current folder, saying "exported 11 files to "."""
    monkeypatch.chdir(tmp_path)
    for command in (["export", "the cat", "--out", str(tmp_path / "f")], ["metrics", "the cat"],
                    ["translate", "the cat"]):
        code, out, err = run_command([*command, "--model", " "])
        assert code == 2 and "argument --model: it is empty: give a bundled model (" in err
    for command in (["export", "the cat"], ["metrics", "the cat"]):
        code, out, err = run_command([*command, "--out", "", "--model", str(tiny_model_dir)])
        assert (code, out, err) == (2, "", "error: --out is empty: give a path\n")
    assert list(tmp_path.iterdir()) == []


def test_beam_zero_is_a_usage_error_not_greedy(run_command, tiny_model_dir):
    code, out, err = run_command(["translate", "the cat", "--beam", "0", "--model", str(tiny_model_dir)])
    assert code == 2 and out == ""
    assert err == ("error: argument --beam: invalid beam width 0: a whole number from 1 (greedy) to 64 "
                   "(see attention-visualizer translate --help)\n")


def test_usage_errors_are_one_line(run_command):
    code, out, err = run_command(["translate"])
    assert code == 2 and err.startswith("error: the following arguments are required: text (see ")


def test_evaluate_empty_tsv(run_command, tiny_model_dir, tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    code, out, err = run_command(["evaluate", "--tsv", str(empty), "--model", str(tiny_model_dir)])
    assert code == 2 and err == f"error: {empty}: no sentence pairs to score\n"


def test_evaluate_prints_its_scores_before_a_hyps_file_that_cannot_be_written(run_command, tiny_model_dir, tmp_path,
                                                                               monkeypatch):
    """A disk full at --hyps lost the scores of 25 s of translating: only the write's error was printed (QA)."""
    import model.evaluate as evaluate_module
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("the cat\tle chat\nthe dog\tle chien\n", encoding="utf-8")

    def full_disk(path, text):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(evaluate_module, "atomic_write_text", full_disk)
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir), "--hyps",
                                  str(tmp_path / "h.txt")])
    assert code == 1 and out.splitlines()[-1].startswith("BLEU ")
    assert err.splitlines()[-1] == f"error: --hyps {tmp_path / 'h.txt'}: could not be written (No space left on device)"


@pytest.mark.parametrize("command", ["check-translations", "evaluate"])
def test_a_device_given_as_a_list_is_refused_not_read_for_ever(run_command, tiny_model_dir, command):
    """check-translations /dev/zero grew until the kernel killed it; evaluate --tsv /dev/zero ran on (QA)."""
    args = ["/dev/zero"] if command == "check-translations" else ["--tsv", "/dev/zero"]
    code, out, err = run_command([command, *args, "--model", str(tiny_model_dir)])
    assert code == 2 and err == "error: /dev/zero: not a regular file (a folder, a device, a pipe or a socket)\n"


def test_a_text_that_starts_with_a_dash_is_told_where_it_goes(run_command, tiny_model_dir):
    """translate "-hello" read "argument -h/--help: ignored explicit argument 'ello'" and nothing more (QA)."""
    code, _, err = run_command(["translate", "-hello", "--model", str(tiny_model_dir)])
    assert code == 2 and "a text that starts with '-' goes after --" in err
    code, out, _ = run_command(["translate", "--model", str(tiny_model_dir), "--", "-hello"])
    assert code == 0 and out.strip()


def test_a_blank_model_name_says_what_to_give(run_command):
    """--model " " read "error: : no such model" (QA)."""
    code, _, err = run_command(["translate", "the cat", "--model", " "])
    assert code == 2 and err.startswith("error: argument --model: it is empty: give a bundled model (") \
        and err.count("\n") == 1


def test_evaluate_counts_malformed_lines_and_strict_refuses_them(run_command, tiny_model_dir, tmp_path):
    tsv = tmp_path / "t.tsv"
    tsv.write_text("the cat\tle chat\nno tab here\nthe dog\tle chien\n\tempty source\n", encoding="utf-8")
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir)])
    assert code == 0
    assert f"warning: skipped {tsv}:2: no TAB between source and target" in err
    assert "warning: skipped 2 malformed line(s) in all" in err
    assert out.splitlines()[0].endswith("skipped 2") and out.startswith("sentences 2 ")
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir), "--strict"])
    assert code == 2 and err == f"error: {tsv}:2: no TAB between source and target\n"
    tsv.write_text("the cat\tle chat\nthe dog\tle chien\tun chien\n", encoding="utf-8")   # a third field was dropped
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir), "--strict"])
    assert code == 2 and err == f"error: {tsv}:2: 3 TAB-separated fields, 2 expected (source and target)\n"


def test_a_utf16_tsv_is_named_for_what_it_is(run_command, tiny_model_dir, tmp_path):
    tsv = tmp_path / "u16.tsv"
    tsv.write_bytes("the cat\tle chat\n".encode("utf-16"))                 # with its BOM, as spreadsheets save
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir)])
    assert code == 2 and err == f"error: {tsv}: not UTF-8 text (it is UTF-16, as a spreadsheet's \"Unicode text\" " \
        "is: save it as UTF-8)\n"
    tsv.write_bytes(b"the cat\tle ch\xe2t\n")          # Latin-1: where it breaks, and what it reads as (QA)
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir)])
    assert code == 2 and err == (f"error: {tsv}: not UTF-8 text (invalid continuation byte at byte 14, line 1; it "
                                 "reads as Windows-1252 (Latin-1) text, as older Windows programs save it: save it "
                                 "as UTF-8)\n")
    # far into a file, counted in the whole file: it had been the byte in the chunk the reader decoded
    tsv.write_bytes(b"the cat\tle chat\n" * 3000 + b"the t\xeate\tla t\xeate\n")
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir)])
    assert code == 2 and f"at byte {16 * 3000 + 6}, line 3001;" in err


def test_evaluate_limit_zero_is_refused_and_one_scores_one_sentence(run_command, tiny_model_dir, tmp_path):
    """--limit 0 scored every sentence."""
    tsv = tmp_path / "t.tsv"
    tsv.write_text("the cat\tle chat\nthe dog\tle chien\n", encoding="utf-8")
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir), "--limit", "0"])
    assert code == 2 and err.startswith("error: --limit 0: score at least the first sentence") and out == ""
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir), "--limit", "1"])
    assert code == 0 and out.startswith("sentences 1 ")


def test_evaluate_hyps_into_a_missing_folder_fails_before_the_work(run_command, tiny_model_dir, tmp_path):
    tsv = tmp_path / "t.tsv"
    tsv.write_text("the cat\tle chat\n", encoding="utf-8")
    hyps = tmp_path / "no-such-folder" / "hyps.txt"
    code, out, err = run_command(["evaluate", "--tsv", str(tsv), "--model", str(tiny_model_dir), "--hyps", str(hyps)])
    assert code == 2 and "translated" not in err           # no sentence was translated first
    assert err == f"error: --hyps {hyps}: the folder {hyps.parent} does not exist\n"


def test_export_into_a_file_is_refused_before_the_work(run_command, tiny_model_dir, tmp_path):
    a_file = tmp_path / "figs"
    a_file.write_text("mine", encoding="utf-8")
    code, out, err = run_command(["export", "the cat", "--out", str(a_file), "--model", str(tiny_model_dir)])
    assert code == 2 and err == f"error: --out {a_file}: is a file, not a folder\n"
    assert a_file.read_text(encoding="utf-8") == "mine"
    code, out, err = run_command(["metrics", "the cat", "--out", str(a_file / "m.csv"), "--model",
                                  str(tiny_model_dir)])            # it said "the folder … does not exist"
    assert code == 2 and err == f"error: --out {a_file / 'm.csv'}: {a_file} is a file, not a folder\n"


def test_a_model_folder_with_pickled_weights_only_says_so(run_command, tiny_model_dir, tmp_path):
    import shutil
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    code, out, err = run_command(["translate", "the cat", "--model", str(folder)])
    assert code == 2 and "only pytorch_model.bin (a pickle, which can run code when loaded)" in err


@pytest.mark.parametrize("field, value, words", [
    ("view", {"stack": ["enc"]}, "view.stack: ['enc'] is not text"),
    ("decoding", {"method": "sample", "seed": 3000000000}, "decoding.seed: 3000000000 is above 2147483647"),
])
def test_session_with_bad_field_is_named_at_the_door(run_command, tmp_path, field, value, words):
    path = tmp_path / "s.json"
    text = json.dumps(dict(SESSION, **{field: value}))
    path.write_text(text, encoding="utf-8")
    code, out, err = run_command(["--session", str(path), "--screenshot", str(tmp_path / "shot.png")])
    assert code == 2 and words in err and str(path) in err
    assert path.read_text(encoding="utf-8") == text and not (tmp_path / "shot.png").exists()


def test_a_windows_session_that_cannot_be_read_is_said_in_the_window(run_command, qtbot, monkeypatch, tmp_path):
    """`--session` given to the window by a launcher (no terminal to read): a damaged file exited 2 with a line on
    stderr only; the window opens afresh and says why, and the file is left as it was."""
    from PySide6 import QtWidgets

    from visualizer.window import MainWindow
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "s.json"
    path.write_text('{"format": "attention-visualizer-session/1", "sentence": ', encoding="utf-8")
    seen = {}

    def event_loop():                          # the user reads the window, then closes it
        window = next(w for w in QtWidgets.QApplication.topLevelWidgets()
                      if isinstance(w, MainWindow) and w.isVisible())
        qtbot.waitUntil(lambda: getattr(window, "last_error", None) is not None, timeout=10000)
        seen.update(error=window.last_error, message=window.statusBar().currentMessage(),
                    sentence=window.state.sentence)
        window.close()                         # (the app deletes it as it returns: cli.release)
        return 0
    monkeypatch.setattr(QtWidgets.QApplication, "exec", staticmethod(event_loop))
    # the style, palette and font of the whole test run are not this test's to change (a new style, set here, left
    # later tests' windows hung in a paint)
    monkeypatch.setattr("visualizer.theme.apply_theme", lambda *args, **kwargs: None)
    import gc
    collecting = gc.isenabled()
    try:
        code, out, err = run_command(["--session", str(path)], check=False)
    finally:                                   # the app's start hands collection to its event loop (pyqtgraph's
        if collecting:                         # GarbageCollector turns gc off): the next tests' windows hung
            gc.enable()
    assert code == 0 and err.startswith("error: ") and str(path) in err and "Traceback" not in err
    assert str(path) in seen["error"] and seen["message"].startswith("Cannot open the session: ")
    assert seen["sentence"] != ""  and path.read_text(encoding="utf-8").endswith('"sentence": ')


def test_sessions_written_by_hand_or_by_other_tools(tmp_path):
    """A lone surrogate (JSON's \\ud800) in the sentence made the run fail inside the tokenizer; a number of 5,000
    digits was an "unexpected ValueError"; a BOM, as Notepad saves one, was refused."""
    from visualizer.session import SessionError, read_session
    path = tmp_path / "s.json"
    path.write_text(json.dumps(dict(SESSION, sentence="the \ud800 cat", target="le \udfff")), encoding="utf-8")
    got = read_session(path)
    assert got["sentence"] == "the \ufffd cat" and got["target"] == "le \ufffd"
    got["sentence"].encode("utf-8")                                  # whole characters: the tokenizers take it
    path.write_text(json.dumps(dict(SESSION, decoding={"method": "sample", "seed": 0}))
                    .replace('"seed": 0', '"seed": ' + "9" * 5000), encoding="utf-8")
    with pytest.raises(SessionError, match="damaged or was changed by hand"):
        read_session(path)
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SESSION).encode("utf-8"))
    assert read_session(path)["sentence"] == "the cat"
    for empty in (b"", b"\xef\xbb\xbf", b" \n\n"):       # said as empty, not "line 1, column 1 (Expecting value)"
        path.write_bytes(empty)
        with pytest.raises(SessionError) as e:
            read_session(path)
        assert str(e.value) == f"{path}: the file is empty: nothing was saved in it (save one with File ▸ Save session)"


def test_a_session_with_a_model_sentence_or_target_beside_it_is_refused(run_command, tmp_path):
    """The session's model and sentence were shown without a word of the --model or --sentence given with it, and
    --model's model was loaded for nothing (QA)."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SESSION), encoding="utf-8")
    code, out, err = run_command(["--session", str(path), "--model", "en-de", "--sentence", "Hi",
                                  "--screenshot", str(tmp_path / "shot.png")])
    assert code == 2 and err.strip().splitlines()[-1] == (
        "error: --session opens the session's model, sentence and target: give --model and --sentence without it, "
        "or open the session and change them in the window")
    assert not (tmp_path / "shot.png").exists()


def test_screenshot_of_a_session_whose_model_is_missing_or_broken_exits_2_as_for_model(run_command, tmp_path,
                                                                                     tiny_model_dir):
    """A model folder that cannot be opened is a usage error (2) given by --model; given by a session it was 1 (QA)."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps(dict(SESSION, model=str(tmp_path / "gone"))), encoding="utf-8")
    code, out, err = run_command(["--session", str(path), "--screenshot", str(tmp_path / "shot.png")])
    assert code == 2 and "the session's model" in err and "is neither a bundled model" in err
    (tmp_path / "broken").mkdir()
    path.write_text(json.dumps(dict(SESSION, model=str(tmp_path / "broken"))), encoding="utf-8")
    code, out, err = run_command(["--session", str(path), "--screenshot", str(tmp_path / "shot.png")])
    assert code == 2 and "the session's model cannot be opened" in err
    assert not (tmp_path / "shot.png").exists()
    # this app's own folder with its weights cut short: 1, "Cannot open this model … goes on with the default
    # model", and it did not go on (QA)
    cut = tmp_path / "cut"
    shutil.copytree(tiny_model_dir, cut)
    weights = (cut / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    path.write_text(json.dumps(dict(SESSION, model=str(cut))), encoding="utf-8")
    code, out, err = run_command(["--session", str(path), "--screenshot", str(tmp_path / "shot.png")])
    assert code == 2 and err.strip().splitlines()[-1] == (
        f"error: {path}: the session's model cannot be opened ({cut / 'model.safetensors'}: truncated or damaged "
        f"safetensors file ({len(weights) // 2:,} bytes, its header describes {len(weights):,}))")


def test_a_screenshot_named_other_than_png_is_refused(run_command, tmp_path):
    """PNG bytes were written into "x.jpg" and the command said "saved x.jpg" (QA)."""
    code, out, err = run_command(["--sentence", "hi", "--screenshot", str(tmp_path / "x.jpg")], check=False)
    assert code == 2 and err.strip().splitlines()[-1] == (
        f"error: --screenshot {tmp_path / 'x.jpg'}: the screenshot is a PNG; give a name ending in .png")
    assert not (tmp_path / "x.jpg").exists()


def test_headless_run_never_opens_a_dialog(qapp, monkeypatch, capsys):
    """What would wait for a person (a message box, a dialog's exec) ends a headless run with one line, exit 1."""
    from PySide6 import QtWidgets

    from visualizer.headless import Headless
    for name in ("warning", "critical", "information", "question"):       # restored after the test
        monkeypatch.setattr(QtWidgets.QMessageBox, name, getattr(QtWidgets.QMessageBox, name))
    monkeypatch.setattr(QtWidgets.QDialog, "exec", QtWidgets.QDialog.exec)

    class Window:
        pass
    guard, window = Headless(qapp), Window()
    guard.install(window)
    window._error("Cannot open this model", "x: file is missing\n\nThe app goes on.")
    QtWidgets.QMessageBox.critical(None, "Title", "second")
    QtWidgets.QDialog().exec()
    err = capsys.readouterr().err
    assert guard.code == 1 and err == "error: Cannot open this model: x: file is missing The app goes on.\n"


def test_damaged_saved_frame_is_set_aside_and_the_app_starts_as_new(tiny_model_dir, tmp_path, capsys):
    from visualizer.last_frame import frame_key, save_frame, saved_frame
    from visualizer.state import ViewState
    state = ViewState.at_start(str(tiny_model_dir), "the cat sat", None)
    key = frame_key(state.model_name, *state.run_fields())
    frames = tmp_path / "last-frame.npz"
    lm = __import__("model").load(tiny_model_dir)
    lm_result = translate(lm, "the cat sat")
    save_frame(frames, key, lm_result, cut_chars=False, lm=lm)
    assert saved_frame(frames, state) is not None
    # a frame that reads but whose arrays do not fit the model (what used to stop the start)
    trace = lm_result.trace
    trace.arrays["enc.0.self.weights"] = np.zeros((1, 2, 2), dtype=np.float32)
    save_frame(frames, key, lm_result, cut_chars=False, lm=lm)
    damaged = frames.read_bytes()
    capsys.readouterr()
    assert saved_frame(frames, state) is None
    err = capsys.readouterr().err
    assert "is damaged (enc_self attention of layer 0 has shape (1, 2, 2)" in err and "set aside as" in err
    assert not frames.exists() and (tmp_path / "last-frame.npz.damaged").read_bytes() == damaged
    # a truncated file too; the next start finds no file and is quiet
    frames.write_bytes(damaged[: len(damaged) // 2])
    assert saved_frame(frames, state) is None and "not a readable frame file" in capsys.readouterr().err
    assert saved_frame(frames, state) is None and capsys.readouterr().err == ""
    # random bytes, which numpy takes for a pickle: its first sentence, not its advice about allow_pickle=
    frames.write_bytes(bytes(range(256)) * 4)
    assert saved_frame(frames, state) is None
    err = capsys.readouterr().err
    assert "(ValueError: This file contains pickled (object) data)" in err
    assert "allow_pickle" not in err and "pickle.load" not in err


def test_svg_export_of_control_characters_is_valid_xml(run_command, tiny_model_dir, tmp_path):
    out = tmp_path / "svg"
    code, _, err = run_command(["export", "the\x01 cat\x1b sat\x7f", "--out", str(out), "--format", "svg",
                                "--model", str(tiny_model_dir)])
    assert code == 0, err
    files = sorted(out.glob("*.svg"))
    assert files
    for f in files:
        ET.fromstring(f.read_bytes())      # raises on invalid XML


def test_xml_safe_drops_raw_and_referenced_control_characters():
    from visualizer.text_safety import xml_safe
    assert xml_safe(b"<t>a\x01b&#x1b;c&#27;d&#10;e&#x9;</t>") == b"<t>abcd&#10;e&#x9;</t>"


def test_bidi_override_in_a_model_name_cannot_reverse_the_window_title(qtbot, tiny_model_dir, tmp_path, settings):
    import shutil

    from visualizer.window import MainWindow
    folder = tmp_path / "evil\u202emodel"
    shutil.copytree(tiny_model_dir, folder)
    w = MainWindow(model=str(folder), sentence="the cat", settings=settings)
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.lm is not None, timeout=20000)
    title = w.windowTitle()
    assert title.startswith("Attention Visualizer — \u2068") and title.endswith("\u2069")
    assert "\u202e" in title[title.index("\u2068"): title.index("\u2069")]     # inside the isolate only
    w.runs.runner.wait(10000)
    from visualizer.text_safety import isolate
    assert isolate("models/marian-tiny") == "models/marian-tiny"         # no isolate where nothing can reorder
    assert isolate("نموذج") == "\u2068نموذج\u2069"


def test_an_unexpected_error_is_one_line_naming_the_log(run_command, tiny_model_dir, monkeypatch, tmp_path):
    import model

    def broken(*a, **k):
        raise RuntimeError("a bug\nover two lines")
    monkeypatch.setattr(model, "translate", broken, raising=False)
    code, out, err = run_command(["translate", "the cat", "--model", str(tiny_model_dir)])
    log = state_dir() / "errors.log"
    assert str(log).startswith(str(tmp_path / "state"))
    assert code == 1 and err == f"error: unexpected RuntimeError: a bug over two lines; the full report is in {log}\n"
    report = log.read_text(encoding="utf-8")
    assert "Traceback" in report and "RuntimeError: a bug" in report and "visualizer.translate_command ['the cat'" in report


def test_settings_with_bad_values_fall_back_with_a_notice(tmp_path):
    from PySide6 import QtCore

    from visualizer.settings import Settings
    path = tmp_path / "settings.ini"
    path.write_text("[General]\nfont_size=1e9\ntheme=neon\ncolour_scale=maybe\ncolormap=magma\n", encoding="utf-8")
    s = Settings(QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    assert (s.get("font_size"), s.get("theme"), s.get("colour_scale"), s.get("colormap")) == \
        (11.0, "light", "layer", "magma")
    assert [n.split(":")[0] for n in s.notices] == ["setting font_size", "setting theme", "setting colour_scale"]
    assert "'neon' is not one of" in s.notices[1]


def test_model_folder_before_snapshot_is_kept(run_command, tiny_model_dir):
    """Commands read model folders; they never write into them."""
    before = snapshot(tiny_model_dir)
    run_command(["translate", "the cat", "--model", str(tiny_model_dir)])
    assert kept(before, snapshot(tiny_model_dir)) and Path(tiny_model_dir).is_dir()


def test_translate_prints_the_stopped_early_note_the_window_shows(run_command, tiny_model_dir, tiny_lm):
    from model import translate
    from model.notes import stopped_early
    for text in (" ".join(["the cat sat on the mat"] * 5), "the cat sat"):
        code, out, err = run_command(["translate", text, "--model", str(tiny_model_dir)])
        note = stopped_early(translate(tiny_lm, text).trace)
        assert code == 0 and out.strip() == translate(tiny_lm, text).text.strip()
        assert (f"note: {note}\n" in err) if note else "stopped early" not in err


def test_a_session_whose_model_has_no_weights_is_named_for_that(run_command, tmp_path, tiny_model_dir):
    """Its heads (here ones the folder's schema lacks) are not the problem to report: the missing weights are."""
    import shutil
    folder = tmp_path / "noweights"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "model.safetensors").unlink()
    path = tmp_path / "s.json"
    path.write_text(json.dumps(dict(SESSION, model=str(folder), ablations=["cross:9:1"])), encoding="utf-8")
    code, out, err = run_command(["--session", str(path), "--screenshot", str(tmp_path / "shot.png")])
    assert code == 2 and "model.safetensors" in err and "ablations" not in err
    assert not (tmp_path / "shot.png").exists()


def test_a_mistyped_subcommand_is_named_with_the_one_meant(run_command):
    """"translat" read as the window's text: "unrecognized arguments: translat I have a car." (QA)."""
    code, _, err = run_command(["translat", "I have a car."], check=False)
    assert code == 2 and err.splitlines()[-1].startswith(
        "error: 'translat' is no subcommand (did you mean translate?): the subcommands are train, evaluate, translate")
    code, _, err = run_command(["hello"], check=False)
    assert code == 2 and "'hello' is no subcommand: the subcommands are" in err
