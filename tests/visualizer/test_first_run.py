"""A first start with no saved frame: a helper process translates the sentence while the window opens."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from model import load, translate
from visualizer import first_run
from visualizer.last_frame import FILE_NAME, write_start_frame
from visualizer.state import MAX_CHARS, ViewState


def assert_same_run(frame_trace, trace):
    assert frame_trace.src_tokens == trace.src_tokens and frame_trace.out_tokens == trace.out_tokens
    assert set(frame_trace.arrays) == set(trace.arrays)
    for k, v in trace.arrays.items():
        np.testing.assert_allclose(frame_trace.arrays[k], v, rtol=1e-5, atol=1e-6, err_msg=k)


def test_the_helper_writes_the_frame_of_the_run_asked_for(tiny_model_dir):
    state = ViewState.at_start(str(tiny_model_dir), "a red car is fast")
    state.update(positional=False)
    helper = first_run.start(state)
    frame = helper.wait()
    lm = load(tiny_model_dir)                       # its own: the switch stays off in the model after the run
    expected = translate(lm, "a red car is fast", state.decoding, positional=False)
    assert frame is not None and frame.text == expected.text and frame.out_ids == expected.out_ids
    assert_same_run(frame.trace, expected.trace)
    assert frame.trace.meta["positional"] is False and not frame.cut_chars
    assert not Path(helper.folder.name).exists()                  # its temporary folder is gone


def test_a_sentence_past_the_character_limit_is_cut_and_says_so(tiny_model_dir):
    state = ViewState.at_start(str(tiny_model_dir), "the dog runs " * (MAX_CHARS // 10))
    frame = first_run.start(state).wait()
    assert frame is not None and frame.cut_chars
    assert frame.trace.meta["sentence"] == state.sentence[:MAX_CHARS]


def test_a_saved_frame_is_shown_instead_and_the_helper_stopped(tmp_path, tiny_model_factory):
    folder = tiny_model_factory(tmp_path / "m")
    write_start_frame(folder)                                     # the default sentence's run of this model
    state = ViewState.at_start(str(folder))
    helper = first_run.start(state)
    first = first_run.first_frame(state, tmp_path / FILE_NAME, helper)
    assert first.folder == folder and first.trace.meta["sentence"] == state.sentence
    assert helper.proc.poll() is not None and not Path(helper.folder.name).exists()
    other = ViewState.at_start(str(folder), "we eat bread")       # no frame for this one: the helper it is
    helper = first_run.start(other)
    assert first_run.first_frame(other, tmp_path / FILE_NAME, helper) is helper
    assert helper.wait().trace.meta["sentence"] == "we eat bread"
    assert first_run.first_frame(other, tmp_path / FILE_NAME) is None


def test_a_broken_model_or_a_slow_helper_gives_no_frame_and_leaves_nothing(tmp_path, tiny_model_factory):
    folder = tiny_model_factory(tmp_path / "m")
    (folder / "model.safetensors").write_bytes(b"not weights")
    helper = first_run.start(ViewState.at_start(str(folder), "we eat bread"))
    assert helper.wait() is None and helper.proc.returncode == 1
    assert not Path(helper.folder.name).exists()
    shutil.rmtree(folder)
    folder = tiny_model_factory(tmp_path / "m")
    helper = first_run.start(ViewState.at_start(str(folder), "we eat bread"))
    assert helper.wait(timeout=0.05) is None                      # still importing torch: stopped
    assert helper.proc.returncode not in (None, 0) and not Path(helper.folder.name).exists()
    assert first_run.start(ViewState.at_start("seed-example", "x")) is None     # not a folder: nothing to key


def test_the_window_shows_the_helpers_frame_then_the_live_run(qtbot, tiny_model_dir, settings):
    from visualizer.window import MainWindow

    helper = first_run.start(ViewState.at_start(str(tiny_model_dir), "she reads a book"))
    w = MainWindow(model=str(tiny_model_dir), sentence="she reads a book", settings=settings, first=helper)
    qtbot.addWidget(w)
    assert w.trace is None and w.startup.loader.runs == 0                # the model loads after the helper's frame
    with qtbot.waitSignal(w.trace_shown, timeout=30000):
        pass
    assert w.lm is None and w.startup.frame is not None
    assert w.status_time.text() == "First look (translated while the app opened); the model is loading…"
    from visualizer.cli import screenshot_ready
    assert not screenshot_ready(w)                     # --screenshot waits for the live run (QA: its status bar)
    shown = w.trace
    np.testing.assert_array_equal(w.attention.focused_array, shown.attention("enc_self", 0, 0))
    assert w.attention.focused_labels == (shown.src_tokens, shown.src_tokens)
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not shown and not w.runs.runner.busy, timeout=30000)
    assert_same_run(shown, w.trace)
    assert screenshot_ready(w)
    w.close()
    assert (Path(settings.q.fileName()).parent / FILE_NAME).is_file()   # the live run, kept for the next start


def test_a_sentence_typed_before_the_helper_is_done_is_not_covered_by_its_frame(qtbot, tiny_model_dir, settings):
    from visualizer.window import MainWindow

    helper = first_run.start(ViewState.at_start(str(tiny_model_dir), "she reads a book"))
    w = MainWindow(model=str(tiny_model_dir), sentence="she reads a book", settings=settings, first=helper)
    qtbot.addWidget(w)
    w.state.update(sentence="the house is big")                  # typed while the helper runs
    qtbot.waitUntil(lambda: w.trace is not None, timeout=30000)
    assert w.lm is not None and w.trace.meta["sentence"] == "the house is big"      # the live run, not the frame
    w.runs.runner.wait(10000)


def test_the_command_line_starts_a_helper_only_while_torch_is_not_imported(tmp_path):
    code = ("import sys; from visualizer import first_run; print(first_run.wanted()); import torch; "
            "print(first_run.wanted())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


def test_a_reopened_windows_view_is_on_its_saved_frame_before_the_model_loads(qtbot, tmp_path, tiny_model_factory,
                                                                                settings):
    """A plain start reopens the last session on its saved frame: the frame shows the session's layer and head at
    once, not layer 1 until the model has loaded (QA: the first seconds showed another view than the one closed)."""
    from visualizer.window import MainWindow

    folder = tiny_model_factory(tmp_path / "m")
    write_start_frame(folder)
    state = ViewState.at_start(str(folder))
    first = first_run.first_frame(state, tmp_path / FILE_NAME)
    w = MainWindow(model=str(folder), sentence=state.sentence, settings=settings, first=first)
    qtbot.addWidget(w)
    assert w.trace is first.trace and w.state.layer == 0
    w.apply_session({"stack": "enc", "layer": 1, "sublayer": "self", "kind": "enc_self", "head": 1})
    assert w.lm is None and w.trace is first.trace                      # still the saved frame, the model loading
    assert (w.state.layer, w.state.head) == (1, 1)
    np.testing.assert_array_equal(w.attention.focused_array, first.trace.attention("enc_self", 1, 1))
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not first.trace and not w.runs.runner.busy, timeout=30000)
    assert (w.state.layer, w.state.head) == (1, 1)                      # the live run keeps the view
    np.testing.assert_array_equal(w.attention.focused_array, w.trace.attention("enc_self", 1, 1))
