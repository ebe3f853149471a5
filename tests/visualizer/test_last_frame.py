"""The last translated frame: shown at the next start before torch and the model load, only for the same run."""
from __future__ import annotations

import os

import numpy as np
import pytest

from model import DecodingSettings, load, translate
from visualizer.last_frame import (FILE_NAME, START_FRAME, frame_key, load_frame, save_frame, start_key,
                                   write_start_frame)


def key(folder, sentence="the cat sat", **decoding):
    return frame_key(str(folder), sentence, "", DecodingSettings(**decoding), True)


def test_a_saved_frame_reads_back_with_every_array(tmp_path, tiny_model_dir, tiny_lm):
    result = translate(tiny_lm, "the cat sat")
    path = tmp_path / FILE_NAME
    save_frame(path, key(tiny_model_dir), result, cut_chars=False, lm=tiny_lm)
    frame = load_frame(path, key(tiny_model_dir))
    assert frame.text == result.text and frame.out_ids == result.out_ids and frame.max_len == tiny_lm.cfg.max_len
    assert frame.vocab == tiny_lm.tgt_tok.pieces(range(tiny_lm.tgt_tok.vocab_size))
    assert frame.trace.src_tokens == result.trace.src_tokens and frame.trace.out_tokens == result.trace.out_tokens
    assert set(frame.trace.arrays) == set(result.trace.arrays)
    for k, v in result.trace.arrays.items():
        np.testing.assert_array_equal(frame.trace.arrays[k], v)
    assert "_frame" not in frame.trace.meta and frame.trace.meta["sentence"] == "the cat sat"
    assert [p.name for p in tmp_path.iterdir()] == [FILE_NAME]          # no temporary file left


def test_another_run_or_changed_model_files_get_no_frame(tmp_path, tiny_model_factory, tiny_lm):
    folder = tiny_model_factory(tmp_path / "m")
    lm = load(folder)
    path = tmp_path / FILE_NAME
    save_frame(path, key(folder), translate(lm, "the cat sat"), cut_chars=False, lm=lm)
    assert load_frame(path, key(folder)) is not None
    assert load_frame(path, key(folder, "the cat sat.")) is None
    assert load_frame(path, key(folder, method="beam")) is None
    assert load_frame(path, frame_key(str(folder), "the cat sat", "", DecodingSettings(), False)) is None
    weights = folder / "model.safetensors"
    st = weights.stat()
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))   # retrained in place
    assert load_frame(path, key(folder)) is None
    assert frame_key("seed-example", "x", "", DecodingSettings(), True) is None


@pytest.mark.parametrize("damage", [b"", b"not a zip", None])
def test_a_damaged_frame_file_is_ignored(tmp_path, tiny_model_dir, tiny_lm, damage):
    path = tmp_path / FILE_NAME
    save_frame(path, key(tiny_model_dir), translate(tiny_lm, "the cat sat"), cut_chars=False, lm=tiny_lm)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage is None else damage)
    assert load_frame(path, key(tiny_model_dir)) is None


def test_a_frame_saved_with_other_captions_is_the_same_models_run_and_another_shape_is_not(tmp_path, tiny_model_dir,
                                                                                            tiny_lm):
    """A new version words a caption otherwise (PE(pos, 2i) became PE(pos, 2k)): the frame saved before is the same
    model's run, shown with today's words; it was set aside as damaged, and the shipped start frame went stale. A
    frame whose model has another shape stays no frame of it."""
    import dataclasses

    from model.trace import Trace
    from visualizer.last_frame import DamagedFrame, read_frame
    result = translate(tiny_lm, "the cat sat")
    t = result.trace
    worded = dataclasses.replace(t.schema, output_caption="An older version's words.")
    other = dataclasses.replace(t.schema, d_ff=t.schema.d_ff * 2)
    for schema, shown in ((worded, True), (other, False)):
        path = tmp_path / f"{shown}.npz"
        old = dataclasses.replace(result, trace=Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays, t.meta,
                                                      schema))
        save_frame(path, key(tiny_model_dir), old, cut_chars=False, lm=tiny_lm)
        if shown:
            frame = read_frame(path, key(tiny_model_dir))
            assert frame.trace.schema == t.schema and frame.trace.out_tokens == t.out_tokens
        else:
            with pytest.raises(DamagedFrame, match="model shape"):
                read_frame(path, key(tiny_model_dir))


def test_a_folder_that_cannot_hold_the_file_raises_and_leaves_nothing(tmp_path, tiny_model_dir, tiny_lm):
    blocker = tmp_path / "config"
    blocker.write_text("a file where the settings folder should be")
    with pytest.raises(OSError):
        save_frame(blocker / FILE_NAME, key(tiny_model_dir), translate(tiny_lm, "the cat sat"), False, tiny_lm)
    assert [p.name for p in tmp_path.iterdir()] == ["config"] and blocker.read_text().startswith("a file")


def test_a_full_disk_leaves_no_partial_file(tmp_path, tiny_model_dir, tiny_lm, monkeypatch):
    from model.trace import Trace

    def full(self, f, compressed=True):
        f.write(b"PK partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Trace, "save_npz", full)
    with pytest.raises(OSError):
        save_frame(tmp_path / FILE_NAME, key(tiny_model_dir), translate(tiny_lm, "the cat sat"), False, tiny_lm)
    assert list(tmp_path.iterdir()) == []


def test_the_next_window_shows_the_last_frame_before_its_model_loads(qtbot, tiny_model_dir, settings):
    """Close a window; a new one with the same model, sentence and settings shows that run at once, from the
    file, then the live run replaces it with the same numbers."""
    from visualizer.window import MainWindow

    first = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings)
    qtbot.addWidget(first)
    qtbot.waitUntil(lambda: first.lm is not None and first.trace is not None and not first.runs.runner.busy,
                    timeout=20000)
    first.state.update(kind="cross", layer=1, head=1)
    expected = first.trace
    first.close()
    again = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings)
    qtbot.addWidget(again)
    assert again.lm is None and again.trace is not None                  # shown before the model is open
    np.testing.assert_array_equal(again.trace.attention("cross", 1, 1), expected.attention("cross", 1, 1))
    assert again.inputs.translation.text().startswith(f"<b>{expected.meta['translation']}") or \
        expected.meta["translation"] == ""
    assert "loading" in again.status_time.text()
    cached = again.trace
    qtbot.waitUntil(lambda: again.lm is not None and again.trace is not cached, timeout=20000)
    np.testing.assert_array_equal(again.trace.attention("cross", 1, 1), expected.attention("cross", 1, 1))
    again.runs.runner.wait(10000)
    other = MainWindow(model=str(tiny_model_dir), sentence="a dog ran", settings=settings)
    qtbot.addWidget(other)
    assert other.trace is None                                           # another sentence: no frame
    qtbot.waitUntil(lambda: other.lm is not None and other.trace is not None, timeout=20000)
    other.runs.runner.wait(10000)


def test_a_start_frame_is_keyed_by_the_contents_of_the_model_files(tmp_path, tiny_model_factory):
    """A fresh clone has new paths and times; a start frame follows the bytes of the files instead."""
    import shutil
    from visualizer.state import ViewState

    folder = tiny_model_factory(tmp_path / "m")
    path = write_start_frame(folder)
    assert path == folder / START_FRAME
    s = ViewState()
    copy = tmp_path / "clone"
    shutil.copytree(folder, copy)                          # other path, other times, same bytes
    frame = load_frame(copy / START_FRAME, start_key(copy, s.sentence, s.target, s.decoding, s.positional), copy)
    assert frame is not None and frame.folder == copy and frame.trace.meta["sentence"] == s.sentence
    assert load_frame(copy / START_FRAME, start_key(copy, "I have a car.", "", s.decoding, True), copy) is None
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1                                          # one bit of one weight
    weights.write_bytes(bytes(data))
    assert load_frame(copy / START_FRAME, start_key(copy, s.sentence, s.target, s.decoding, s.positional), copy) is None


def test_the_shipped_start_frame_is_the_default_models_run_of_the_default_sentence(qtbot, settings):
    """The first start of the app paints the bundled frame before torch loads; the live run then shows the
    same numbers. (When the default model is retrained, `python -m visualizer.last_frame` writes it anew.)"""
    from visualizer.state import ViewState, default_model
    from visualizer.window import MainWindow

    s = ViewState()
    w = MainWindow(settings=settings)                      # a first start: no saved settings, no last frame
    qtbot.addWidget(w)
    assert w.state.model_name == default_model() and w.state.sentence == s.sentence
    assert w.lm is None and w.trace is not None, "the start frame is stale: run python -m visualizer.last_frame"
    shown = w.trace
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not shown and not w.runs.runner.busy, timeout=30000)
    assert w.trace.out_tokens == shown.out_tokens and w.trace.src_tokens == shown.src_tokens
    assert set(w.trace.arrays) == set(shown.arrays)
    for k, v in w.trace.arrays.items():
        np.testing.assert_allclose(shown.arrays[k], v, rtol=1e-4, atol=1e-5, err_msg=k)
    # what the run records beside its arrays too: a frame written before the runs recorded <pad> as never drawn
    # had the output panel read "uniform over 10000 tokens", then 9999 once the live run came (QA)
    record = {k: v for k, v in w.trace.meta.items() if not k.startswith("_")}
    assert {k: v for k, v in shown.meta.items() if not k.startswith("_")} == record


def test_a_window_starting_on_a_sessions_run_shows_no_frame_of_another_run(qtbot, tiny_model_dir, settings):
    """The first look of a reopened session showed the plain run's frame (no head crossed out) beside "40 heads
    off", or a frame computed with positions beside the unticked box (QA): the window starts on the session's whole
    run, and a frame saved for that run with other heads off, or with positions, is not it."""
    from visualizer.window import MainWindow

    first = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings)
    qtbot.addWidget(first)
    qtbot.waitUntil(lambda: first.lm is not None and first.trace is not None and not first.runs.runner.busy,
                    timeout=20000)
    first.close()                                          # the plain run's frame, saved
    off = frozenset({("cross", 0, 1)})
    for run in ({"ablations": off}, {"positional": False}):
        again = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings, run=run)
        qtbot.addWidget(again)
        assert again.lm is None and again.trace is None and {k: getattr(again.state, k) for k in run} == run
        qtbot.waitUntil(lambda: again.lm is not None and again.trace is not None, timeout=20000)
        assert again.trace.meta.get("ablations", []) == (["cross:1:2"] if "ablations" in run else [])
        again.runs.runner.wait(10000)
        again.close()      # the frame saved: this run's without positions; none with heads off (see Startup.close)
        reopened = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings,
                              run=run)
        qtbot.addWidget(reopened)
        assert reopened.lm is None and (reopened.trace is None if "ablations" in run else
                                        reopened.trace.meta["positional"] is False)
        qtbot.waitUntil(lambda: reopened.lm is not None, timeout=20000)
        reopened.runs.runner.wait(10000)
