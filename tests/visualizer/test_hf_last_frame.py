"""The last frame of a Hugging Face model (tiny and random, saved with save_pretrained as a user's folder is): keyed
on every file of its folder, saved at the window's close, shown by the next window on the same run before its model
(and torch, and transformers) is open, with the output vocabulary it was saved with; another run or changed files
give no frame; a damaged file is set aside."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, output_pieces, translate  # noqa: E402
from visualizer.last_frame import FILE_NAME, frame_key, load_frame, save_frame, saved_frame  # noqa: E402
from visualizer.state import ViewState  # noqa: E402

SENTENCE = "the cat sat on the mat"
_BUILT: dict = {}


def _copy(family, tmp_path_factory, tmp_path):
    """A fresh copy of the family's tiny folder (built once), free to be changed."""
    if family not in _BUILT:
        _BUILT[family] = hf_tiny.build(family, tmp_path_factory.mktemp(family) / "model")
    return shutil.copytree(_BUILT[family], tmp_path / "model")


def key(folder, sentence=SENTENCE, **decoding):
    return frame_key(str(folder), sentence, "", DecodingSettings(**decoding), True)


def wait_for_full_run(qtbot, w):
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy
                    and not w.trace.meta.get("partial"), timeout=60000)


@pytest.mark.parametrize("family", ["gpt2", "marian-separate"])     # one vocabulary; a target side of its own
def test_a_reopened_model_shows_its_last_frame_before_it_loads(qtbot, settings, family, tmp_path_factory, tmp_path):
    from visualizer.window import MainWindow
    folder = _copy(family, tmp_path_factory, tmp_path)
    first = MainWindow(model=str(folder), sentence=SENTENCE, settings=settings)
    qtbot.addWidget(first)
    wait_for_full_run(qtbot, first)
    expected, vocab, max_len = first.trace, output_pieces(first.lm), first.lm.cfg.max_len
    assert len(vocab) == expected["logits"].shape[1]
    first.close()
    assert settings.frame_path().is_file()

    again = MainWindow(model=str(folder), sentence=SENTENCE, settings=settings)
    qtbot.addWidget(again)
    assert again.lm is None and again.trace is not None                  # shown before the model is open
    sc = again.trace.schema
    assert sc == expected.schema and again.trace.out_tokens == expected.out_tokens
    for kind in sc.kind_names:
        for layer in range(sc.stack(sc.kind(kind).stack).n_layers):
            np.testing.assert_array_equal(again.trace.attention(kind, layer), expected.attention(kind, layer))
    np.testing.assert_array_equal(again.trace["logits"], expected["logits"])
    assert again.panels["output"].vocab == vocab and again.translation.max_len == max_len
    assert again.inputs.translation.text().replace("\u200b", "").startswith(f"<b>{expected.meta['translation'] or '(empty)'}")
    assert "loading" in again.status_time.text()
    shown = again.trace
    qtbot.waitUntil(lambda: again.lm is not None and again.trace is not shown and not again.runs.runner.busy,
                    timeout=60000)
    for kind in sc.kind_names:                                           # the live run: the same numbers
        np.testing.assert_allclose(again.trace.attention(kind, 1), expected.attention(kind, 1), atol=1e-6)
    assert again.panels["output"].vocab == vocab


def test_another_run_or_changed_files_give_no_frame(tmp_path_factory, tmp_path, monkeypatch):
    from model.trace import Trace
    folder = _copy("gpt2", tmp_path_factory, tmp_path)
    lm = load(folder)
    path = tmp_path / FILE_NAME
    assert save_frame(path, key(folder), translate(lm, SENTENCE), False, lm)
    state = ViewState.at_start(str(folder), SENTENCE)
    assert saved_frame(path, state).trace.meta["sentence"] == SENTENCE
    with monkeypatch.context() as m:            # another run's frame: read no further than its header
        m.setattr(Trace, "load_npz", lambda p: pytest.fail("the arrays of another run's frame were read"))
        assert saved_frame(path, ViewState.at_start(str(folder), "a red car")) is None
        assert load_frame(path, key(folder, method="beam")) is None
    for name, change in (("model.safetensors", "mtime"), ("tokenizer.json", "size"),
                         ("target_tokenizer/tokenizer.json", "new")):
        before = key(folder)
        target = folder / name
        if change == "mtime":                                            # retrained in place
            st = target.stat()
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        elif change == "size":
            target.write_bytes(target.read_bytes() + b" ")
        else:                                                            # a file in a folder under it
            target.parent.mkdir()
            shutil.copy(folder / "tokenizer.json", target)
        assert key(folder) != before and saved_frame(path, state) is None, name
    before = key(folder)
    (folder / ".git").mkdir()                                            # hidden names are no part of the model
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / ".gitattributes").write_text("*.safetensors filter=lfs\n")
    assert key(folder) == before


def test_a_model_id_in_the_hub_cache_is_keyed_on_its_blobs(tmp_path_factory, tmp_path, monkeypatch):
    """The cache's snapshot folder holds links to blobs: the key follows them, so a blob fetched again changes it."""
    built = _copy("gpt2", tmp_path_factory, tmp_path)
    cache = tmp_path / "hub"
    repo = cache / "models--someone--tiny-gpt2"
    snapshot = repo / "snapshots" / ("a" * 40)
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    for i, f in enumerate(sorted(built.iterdir())):
        blob = repo / "blobs" / f"blob{i}"
        shutil.copy2(f, blob)
        (snapshot / f.name).symlink_to(os.path.relpath(blob, snapshot))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    k = frame_key("someone/tiny-gpt2", SENTENCE, "", DecodingSettings(), True)
    files = dict((name, size) for name, size, _ in json.loads(k)["files"])
    assert json.loads(k)["folder"] == str(snapshot.resolve())
    assert files == {f.name: f.stat().st_size for f in built.iterdir()}     # the blobs' sizes, not the links'
    weights = os.path.realpath(snapshot / "model.safetensors")
    st = os.stat(weights)
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert frame_key("someone/tiny-gpt2", SENTENCE, "", DecodingSettings(), True) != k
    assert frame_key("someone/not-cached", SENTENCE, "", DecodingSettings(), True) is None


def test_a_first_look_is_never_saved_and_a_run_too_large_is_not_written(tmp_path_factory, tmp_path, monkeypatch):
    from visualizer import last_frame
    folder = _copy("gpt2", tmp_path_factory, tmp_path)
    lm = load(folder)
    result = translate(lm, SENTENCE)
    result.trace.meta["partial"] = True
    with pytest.raises(ValueError):
        save_frame(tmp_path / FILE_NAME, key(folder), result, False, lm)
    del result.trace.meta["partial"]
    size = sum(a.nbytes for a in result.trace.arrays.values())
    monkeypatch.setattr(last_frame, "MAX_SAVED_BYTES", size - 1)
    assert not save_frame(tmp_path / FILE_NAME, key(folder), result, False, lm)
    assert not (tmp_path / FILE_NAME).exists() and list(tmp_path.glob("*.part")) == []
    monkeypatch.setattr(last_frame, "MAX_SAVED_BYTES", size)
    assert save_frame(tmp_path / FILE_NAME, key(folder), result, False, lm)
    assert load_frame(tmp_path / FILE_NAME, key(folder)).out_ids == result.out_ids


def test_heads_switched_off_are_not_saved_at_close(qtbot, settings, tmp_path_factory, tmp_path):
    from visualizer.window import MainWindow
    folder = _copy("gpt2", tmp_path_factory, tmp_path)
    w = MainWindow(model=str(folder), sentence=SENTENCE, settings=settings)
    qtbot.addWidget(w)
    wait_for_full_run(qtbot, w)
    w.state.toggle_ablation("self", 1, 2)
    qtbot.waitUntil(lambda: bool(w.trace.meta.get("ablations")) and not w.runs.runner.busy, timeout=60000)
    w.close()
    assert not settings.frame_path().exists()


def test_a_damaged_frame_is_set_aside_and_the_window_waits_for_its_model(qtbot, settings, tmp_path_factory,
                                                                          tmp_path, capsys):
    from visualizer.window import MainWindow
    folder = _copy("gpt2", tmp_path_factory, tmp_path)
    lm = load(folder)
    result = translate(lm, SENTENCE)
    path = settings.frame_path()
    result.trace.arrays["logits"] = result.trace.arrays["logits"][:, :-1]     # one token fewer than the model's
    save_frame(path, key(folder), result, False, lm)
    damaged = path.read_bytes()
    capsys.readouterr()
    w = MainWindow(model=str(folder), sentence=SENTENCE, settings=settings)
    qtbot.addWidget(w)
    assert w.trace is None and not path.exists()
    assert path.with_name(FILE_NAME + ".damaged").read_bytes() == damaged
    err = capsys.readouterr().err
    expected = (len(result.trace.out_tokens), len(output_pieces(lm)))
    assert f"is damaged (logits of shape {(expected[0], expected[1] - 1)}, expected {expected})" in err
    wait_for_full_run(qtbot, w)
    assert w.trace["logits"].shape == expected


def test_no_helper_process_translates_a_first_start_of_a_hugging_face_model(tmp_path_factory, tmp_path):
    """The helper (first_run) would hold a second copy of the weights: the window's own loader shows its first look."""
    from visualizer import first_run
    folder = _copy("gpt2", tmp_path_factory, tmp_path)
    state = ViewState.at_start(str(folder), SENTENCE)
    assert key(folder) is not None and first_run.start(state) is None
