"""Issue 19, property-based: whatever the arguments, session file, settings, saved frame or model folder, a command
ends with exit code 0, 1 or 2, one `error:` line on stderr for 1 and 2, no traceback, and every file the user had
is still there, unchanged (a damaged saved frame is renamed, its bytes kept). Commands run in this process
(main(argv)); hypothesis's deadline is the guard against a hang, not a speed test."""
from __future__ import annotations

import json
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
from command_checks import check_command_output, kept, snapshot
from hypothesis import HealthCheck, given, settings, strategies as st
from safetensors.torch import load_file, save_file

from visualizer.session import FORMAT, SessionError, read_session

PROPERTY = settings(max_examples=15, deadline=timedelta(seconds=60), derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=True)
                    | st.text(max_size=12), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@pytest.fixture(scope="module")
def user_files(tmp_path_factory, tiny_model_dir):
    """A user's folder: a test file, a model folder, a session, a text file; commands must change none of them."""
    root = tmp_path_factory.mktemp("user")
    (root / "test.tsv").write_text("the cat\tle chat\nthe dog\tle chien\nno tab\n", encoding="utf-8")
    (root / "notes.txt").write_text("mine\n", encoding="utf-8")
    shutil.copytree(tiny_model_dir, root / "model")
    (root / "session.json").write_text(json.dumps({"format": FORMAT, "model": str(root / "model"),
                                                   "sentence": "the cat"}), encoding="utf-8")
    return root


def argument_lists(user: Path, fresh: Path):
    options = st.sampled_from(["--model", "--beam", "--out", "--format", "--target", "--scale", "--tsv", "--src",
                               "--ref", "--limit", "--hyps", "--strict", "--lowercase", "--d-model", "--heads",
                               "--layers", "--max-tokens", "--max-len", "--resume", "--vocab-size", "--help", "-x"])
    values = st.sampled_from(["", "0", "-1", "1", "2", "3", "nan", "1e9", "x", "the cat", "\x01\u202e", "caf\ufffd",
                              str(user / "test.tsv"), str(user / "notes.txt"), str(user / "model"),
                              str(user / "missing"), str(fresh / "out"), str(fresh / "no" / "such" / "file.txt"),
                              "png", "svg", "csv"])
    return st.lists(options | values | st.text(max_size=6), max_size=6)


@PROPERTY
@given(data=st.data())
@pytest.mark.parametrize("command", ["translate", "export", "evaluate", "check-translations", "train"])
def test_any_arguments_end_cleanly(command, data, run_command, user_files, tmp_path_factory):
    fresh = tmp_path_factory.mktemp("fresh")
    argv = data.draw(argument_lists(user_files, fresh))
    before = snapshot(user_files)
    prefix = {"translate": ["the cat"], "export": ["the cat", "--format", "csv"],
              "check-translations": [str(user_files / "test.tsv")], "evaluate": [], "train": []}[command]
    model = ["--model", str(user_files / "model")] if command != "train" else []
    suffix = ["--steps", "2", "--threads", "1", "--max-tokens", "64", "--minutes", "0"] if command == "train" else []
    try:
        code, out, err = run_command([command, *prefix, *model, *argv, *suffix], check=False)
    except SystemExit as e:          # --help
        assert e.code == 0 and "--help" in argv
        return
    check_command_output(code, err)
    assert kept(before, snapshot(user_files))


@settings(max_examples=200, deadline=timedelta(seconds=10), derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["model", "sentence", "target", "positional", "decoding", "view", "format", None]),
       value=JSON, decoding=st.dictionaries(st.sampled_from(["method", "beam", "temperature", "top_k", "seed",
                                                             "max_new", "other"]), JSON, max_size=3),
       view=st.dictionaries(st.sampled_from(["stack", "layer", "sublayer", "kind", "head", "step"]),
                            JSON | st.sampled_from(["enc", "dec", "self", "cross", "ffn", "cross", "enc_self"]),
                            max_size=4))
def test_any_session_file_is_read_or_refused_in_one_line(tmp_path, field, value, decoding, view):
    data = {"format": FORMAT, "model": "en-fr", "sentence": "the cat", "decoding": decoding, "view": view}
    if field is not None:
        data[field] = value
    path = tmp_path / "s.json"
    text = json.dumps(data)
    path.write_text(text, encoding="utf-8")
    try:
        changes = read_session(path)
    except SessionError as e:
        assert "\n" not in str(e) and str(path) in str(e)
    else:                            # every field the window will use has its type and range
        d = changes["decoding"]
        assert isinstance(changes["sentence"], str) and isinstance(changes["positional"], bool)
        assert 0 <= d.seed < 2**31 and 1 <= d.beam <= 64 and 0 < d.temperature <= 100
        for k in ("layer", "head", "step"):
            assert k not in changes or (type(changes[k]) is int and 0 <= changes[k] < 2**31)
    assert path.read_text(encoding="utf-8") == text


@settings(max_examples=100, deadline=timedelta(seconds=10), derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.dictionaries(st.sampled_from(["theme", "font_size", "colormap", "model", "colour_scale"]),
                              st.text(max_size=10) | st.integers(-2**63, 2**63 - 1) | st.floats() | st.booleans(),
                              max_size=5),
       raw=st.none() | st.binary(max_size=60))
def test_any_settings_give_valid_values(tmp_path, values, raw):
    from PySide6 import QtCore

    from visualizer.settings import DEFAULTS, Settings
    from visualizer.plotting.colormaps import COLOUR_SCALES
    from visualizer.theme import COLORMAPS, THEMES
    path, aside = tmp_path / "settings.ini", tmp_path / "settings.ini.damaged"
    for old in (path, aside):                  # (tmp_path is the same for every example)
        old.unlink(missing_ok=True)
    q = QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat)
    for k, v in values.items():
        q.setValue(k, v)
    q.sync()
    if raw is not None:
        path.write_bytes(raw)
    s = Settings(QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    got = {k: s.get(k) for k in DEFAULTS}
    assert got["theme"] in THEMES and got["colormap"] in COLORMAPS and isinstance(got["model"], str)
    assert isinstance(got["font_size"], float) and 6 <= got["font_size"] <= 48
    assert got["colour_scale"] in COLOUR_SCALES
    assert all("\n" not in n for n in s.notices)
    # a file Qt cannot read is set aside whole, not written over at close without a word (QA: random bytes, NULs)
    copy = tmp_path / "copy.ini"
    copy.write_bytes(raw or b"")
    probe = QtCore.QSettings(str(copy), QtCore.QSettings.Format.IniFormat)
    probe.allKeys()
    if raw is not None and probe.status() != QtCore.QSettings.Status.NoError:
        assert aside.read_bytes() == raw and "could not be read; it was set aside" in s.notices[0]
    else:
        assert not aside.exists()


@pytest.mark.parametrize("raw", [b"\0" * 40, b"not a settings file\n", b"\x89PNG\r\n\x1a\n"])
def test_a_settings_file_of_nuls_or_other_bytes_is_set_aside(tmp_path, raw):
    """Qt's status said NoError until the file's first read: a file of NULs or random bytes read as no settings,
    with no word, and was written over at close (QA)."""
    from PySide6 import QtCore

    from visualizer.settings import Settings
    path = tmp_path / "settings.ini"
    path.write_bytes(raw)
    s = Settings(QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    assert (tmp_path / "settings.ini.damaged").read_bytes() == raw and not path.exists()
    assert s.notices == [f"the settings file {path} could not be read; it was set aside as settings.ini.damaged and "
                         "the app starts with its default settings"]


@pytest.fixture(scope="module")
def frame_bytes(tiny_model_dir, tmp_path_factory):
    """A valid saved frame of the tiny model's run of "the cat sat", and the state it belongs to."""
    from model import load, translate
    from visualizer.last_frame import frame_key, save_frame
    from visualizer.state import ViewState
    state = ViewState.at_start(str(tiny_model_dir), "the cat sat", None)
    path = tmp_path_factory.mktemp("frame") / "last-frame.npz"
    lm = load(tiny_model_dir)
    save_frame(path, frame_key(state.model_name, *state.run_fields()), translate(lm, "the cat sat"), cut_chars=False,
               lm=lm)
    return path.read_bytes(), state


@settings(max_examples=60, deadline=timedelta(seconds=20), derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.none() | st.floats(0, 1), flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
       header=st.none() | st.tuples(st.sampled_from(["src_tokens", "tgt_tokens", "out_tokens", "meta"]), JSON),
       array=st.none() | st.sampled_from(["shape", "dtype", "nan", "missing"]))
def test_any_saved_frame_is_shown_or_set_aside(frame_bytes, tmp_path, capsys, cut, flips, header, array):
    from model.trace import Trace
    from visualizer.last_frame import Frame, saved_frame
    data, state = frame_bytes
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "last-frame.npz"      # one folder per example
    path.write_bytes(data)
    if header is not None or array is not None:
        t = Trace.load_npz(path)
        name = "dec.0.cross.weights"
        if header is not None:
            setattr(t, header[0], header[1]) if header[0] != "meta" else t.meta.update(x=header[1])
        if array == "shape":
            t.arrays[name] = t.arrays[name][:, :1]
        elif array == "dtype":
            t.arrays[name] = t.arrays[name].astype(np.complex64)
        elif array == "nan":
            t.arrays[name] = np.full_like(t.arrays[name], np.nan)
        elif array == "missing":
            del t.arrays[name]
        try:
            t.save_npz(path)
        except (TypeError, ValueError):
            return
    raw = bytearray(path.read_bytes())
    for where, byte in flips:
        raw[int(where * (len(raw) - 1))] = byte
    if cut is not None:
        raw = raw[: int(cut * len(raw))]
    path.write_bytes(bytes(raw))
    capsys.readouterr()
    frame = saved_frame(path, state)
    err = capsys.readouterr().err
    assert frame is None or isinstance(frame, Frame)
    aside = Path(str(path) + ".damaged")
    if aside.exists():               # set aside with a notice: the bytes are kept, the next start is quiet
        assert aside.read_bytes() == bytes(raw) and not path.exists() and err.count("\n") == 1
        assert saved_frame(path, state) is None
    else:
        assert path.read_bytes() == bytes(raw) and err == ""


@PROPERTY
@given(change=st.sampled_from(["missing", "extra", "truncated", "float16", "int", "nan", "config"]),
       name=st.sampled_from(["model.safetensors", "config.json", "tokenizer_src.json", "tokenizer_tgt.json"]),
       fraction=st.floats(0, 1), value=JSON)
def test_any_model_folder_ends_cleanly(run_command, tiny_model_dir, tmp_path_factory, change, name, fraction, value):
    folder = tmp_path_factory.mktemp("models") / "m"
    shutil.copytree(tiny_model_dir, folder)
    weights = folder / "model.safetensors"
    if change == "missing":
        (folder / name).unlink()
    elif change == "extra":
        (folder / "extra.bin").write_bytes(b"\0" * 10)
    elif change == "truncated":
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: int(fraction * len(data))])
    elif change in ("float16", "int", "nan"):
        state = load_file(str(weights))
        key = sorted(state)[int(fraction * (len(state) - 1))]
        state[key] = {"float16": state[key].half(), "int": state[key].to(torch.int32),
                      "nan": torch.full_like(state[key], float("nan"))}[change]
        save_file(state, str(weights))
    else:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        cfg[sorted(cfg)[int(fraction * (len(cfg) - 1))]] = value
        (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    before = snapshot(folder)
    code, out, err = run_command(["translate", "the cat", "--model", str(folder)])
    if change in ("missing", "nan") or (change == "truncated" and fraction < 0.5):
        assert code == 2 and str(folder) in err
    assert snapshot(folder) == before
