"""Animations: one frame per generation step, layer or head, drawn by the export figure, written atomically."""
from __future__ import annotations

import os

import imageio.v3 as iio
import numpy as np
import pytest

from model import translate
from visualizer.animation import animation_specs

TEXT = "the cat sat on the mat"


@pytest.mark.parametrize("over, args, count", [
    ("heads", ["--kind", "enc_self", "--layer", "2"], lambda t: t.n_heads),
    ("layers", ["--kind", "cross", "--head", "2"], lambda t: t.n_layers("dec")),
    ("steps", ["--kind", "dec_self", "--head", "mean"], lambda t: len(t.tgt_tokens)),
])
def test_one_frame_per_step_layer_or_head(run_command, tiny_model_dir, tiny_lm, tmp_path, over, args, count):
    out = tmp_path / "a.gif"
    code, stdout, _ = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--over", over, *args,
                                   "--out", str(out)])
    trace = translate(tiny_lm, TEXT).trace
    frames = iio.imread(out, index=None)
    assert code == 0 and stdout.strip() == f"wrote {count(trace)} frames to {out}"
    assert frames.shape[0] == count(trace) and frames.shape[2] >= 400
    assert all(not np.array_equal(frames[i], frames[i + 1]) for i in range(len(frames) - 1))
    assert [p.name for p in tmp_path.iterdir()] == ["a.gif"]           # no temporary file left


def test_steps_reveal_one_row_at_a_time(tiny_lm):
    trace = translate(tiny_lm, TEXT).trace
    specs = animation_specs(trace, "cross", "steps", layer=1, head=0)
    full = trace.mask("cross", 1)
    for t, spec in enumerate(specs):
        assert spec.mask[: t + 1].tolist() == full[: t + 1].tolist() and not spec.mask[t + 1:].any()
        np.testing.assert_array_equal(spec.matrix, trace.attention("cross", 1, 0))
        assert spec.rows == trace.tgt_tokens[: t + 1] + [""] * (len(trace.tgt_tokens) - t - 1)
        assert spec.cols == trace.src_tokens                             # the source: all given at every step
    for t, spec in enumerate(animation_specs(trace, "dec_self", "steps", layer=1, head=0)):
        unborn = [""] * (len(trace.tgt_tokens) - t - 1)                  # keys not generated yet: unnamed too
        assert spec.rows == spec.cols == trace.tgt_tokens[: t + 1] + unborn


def test_a_decoder_only_models_steps_start_where_its_prompt_ends(tmp_path):
    """Its prompt was given, not generated: the first frame shows every prompt row and predicts the continuation's
    first token (a GPT-2's 29 frames hatched its prompt rows as "not generated yet", QA)."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model.families import load as load_any, translate as translate_any
    lm = load_any(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    trace = translate_any(lm, TEXT).trace
    kind, given, n = trace.schema.kind_names[0], trace.prompt_rows(), len(trace.out_tokens)
    assert 0 < given < n - 1
    specs = animation_specs(trace, kind, "steps", layer=0, head=0)
    assert len(specs) == n - given
    full = trace.mask(kind, 0)
    for t, spec in zip(range(given, n), specs):
        assert spec.mask[: t + 1].tolist() == full[: t + 1].tolist() and not spec.mask[t + 1:].any()
        assert spec.title.endswith(f"step\u00a0{t}: predicting token\u00a0{t + 1}")


def test_frames_colour_as_the_still_export_of_their_head_does(tiny_lm):
    """A teacher's GIF of cross-attention layer 2 head 1 over steps ran 0 … 0.682 (the head's own largest weight)
    beside its PNG's 0 … 0.998 (the layer's): every frame takes the levels a still export has, the highest of them
    when several layers' frames share an animation; --colour-scale and --colormap as `export` takes them."""
    from visualizer.animation import shared_levels
    from visualizer.export import heatmap_specs
    trace = translate(tiny_lm, TEXT).trace
    weights = np.stack([trace.attention("cross", 1, h) for h in range(trace.n_heads)])
    h = int(weights.max(axis=(1, 2)).argmin())
    assert weights[h].max() < weights.max()                         # a head below its layer's largest weight
    still = {(s.kind, s.layer, s.head): s.levels for s in heatmap_specs(trace)}
    assert shared_levels(animation_specs(trace, "cross", "steps", layer=1, head=h)) == still["cross", 1, h] \
        == (0.0, float(weights.max()))
    assert shared_levels(animation_specs(trace, "cross", "steps", 1, h, colour_scale="head")) == \
        (0.0, float(weights[h].max()))
    assert shared_levels(animation_specs(trace, "cross", "steps", 1, h, colour_scale="one")) == (0.0, 1.0)
    layers = animation_specs(trace, "cross", "layers", head=0)
    assert shared_levels(layers) == (0.0, max(still["cross", i, 0][1] for i in range(trace.n_layers("dec"))))


def test_animate_takes_the_colour_map_and_scale_of_export(run_command, tiny_model_dir, tmp_path):
    frames = {}
    for name, args in (("default", []), ("magma", ["--colormap", "magma"]), ("one", ["--colour-scale", "one"])):
        out = tmp_path / f"{name}.gif"
        code, _, _ = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--over", "heads", "--kind",
                                  "cross", "--out", str(out), *args])
        assert code == 0
        frames[name] = iio.imread(out, index=None)
    assert not np.array_equal(frames["default"], frames["magma"])
    assert not np.array_equal(frames["default"], frames["one"])


def test_a_kind_named_as_in_exported_file_names_animates_the_same_frames(tiny_lm):
    """export writes encoder_self_L1_H1.png; animate --kind encoder_self said "unknown attention kind"."""
    trace = translate(tiny_lm, TEXT).trace
    for short in trace.schema.kind_names:
        file = trace.schema.kind(short).file
        assert file != short or short == "cross"
        by_file, by_name = (animation_specs(trace, k, "heads", layer=0) for k in (file, short))
        assert [s.stem for s in by_file] == [s.stem for s in by_name] and len(by_name) == trace.n_heads
        assert all(s.kind == short for s in by_file)
    with pytest.raises(ValueError, match="in exported file names encoder_self"):
        animation_specs(trace, "encoder", "heads")


@pytest.mark.parametrize("args, words", [
    (["--kind", "enc_self", "--over", "steps"], "no generation steps"),
    (["--kind", "self", "--over", "heads"], "unknown attention kind"),
    (["--kind", "cross", "--over", "layers", "--head", "9"], "no head 9"),
    (["--kind", "cross", "--over", "heads", "--out-format"], "unrecognized"),
    # a layer or head given where the frames go over all of them was ignored without a word
    (["--kind", "cross", "--over", "layers", "--layer", "2"], "--over layers shows every layer: --layer does not"),
    (["--kind", "cross", "--over", "heads", "--head", "2"], "--over heads shows every head: --head does not"),
    (["--kind", "cross", "--over", "heads", "--head", "mean"], "--over heads shows every head: --head does not"),
    (["--kind", "cross", "--over", "steps", "--layer", "99"], "cross: no layer 99 (it has 2)"),
    (["--kind", "bogus", "--over", "steps"], "unknown attention kind"),
])
def test_bad_animations_are_one_line(run_command, tiny_model_dir, tmp_path, args, words, monkeypatch):
    """...and refused before the model runs (--layer 99 printed the run's notes, then the error: QA)."""
    from visualizer import animate_command
    monkeypatch.setattr(animate_command, "run_translation", lambda *a, **k: pytest.fail("the model ran"))
    code, _, err = run_command(["animate", TEXT, "--model", str(tiny_model_dir), *args, "--out",
                                str(tmp_path / "a.gif")])
    assert code == 2 and words in err
    assert list(tmp_path.iterdir()) == []


def test_wrong_file_kinds(run_command, tiny_model_dir, tmp_path):
    code, _, err = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--kind", "cross", "--over",
                                "heads", "--out", str(tmp_path / "a.png")])
    assert code == 2 and ".gif or .mp4" in err
    code, _, err = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--kind", "cross", "--over",
                                "heads", "--out", str(tmp_path / "missing" / "a.gif")])
    assert code == 2 and "does not exist" in err


def test_export_animation_from_the_window(window, tmp_path):
    window.state.update(kind="cross", layer=1, head=0)
    texts = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    assert texts[-3:] == ["Export animation…", "", "Quit"]
    calls = []
    n = window.animation.export(tmp_path / "heads.gif", "heads", progress=lambda d, t: calls.append(d))
    frames = iio.imread(tmp_path / "heads.gif", index=None)
    assert n == frames.shape[0] == window.trace.n_heads and calls == list(range(1, n + 1))
    assert window.animation.export(tmp_path / "cancelled.gif", "layers", progress=lambda d, t: False) == 0
    assert not (tmp_path / "cancelled.gif").exists()


def test_the_animation_dialog_offers_steps_only_for_a_decoders_rows(window, monkeypatch):
    """Encoder self-attention was offered "steps" first, and refused it ("enc_self has no generation steps") only
    after the file had been named."""
    from PySide6 import QtWidgets
    offered = []
    monkeypatch.setattr(QtWidgets.QInputDialog, "getItem",
                        lambda parent, title, label, items, *rest: (offered.append(list(items)), ("", False))[1])
    for kind in ("enc_self", "cross"):
        window.state.update(kind=kind, layer=0, head=0)
        window.animation.dialog()
    assert offered == [["layers", "heads"], ["steps", "layers", "heads"]]
    with pytest.raises(ValueError, match="^Encoder self-attention has no generation steps"):
        animation_specs(window.trace, "enc_self", "steps")


def test_mp4_through_ffmpeg(run_command, tiny_model_dir, tiny_lm, tmp_path):
    out = tmp_path / "a.mp4"
    code, _, err = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--over", "layers",
                                "--kind", "enc_self", "--out", str(out)])
    assert code == 0 and "WARNING" not in err
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == tiny_lm.cfg.N_enc and frames.shape[1] % 16 == 0 and frames.shape[2] >= 400


def test_mp4_without_ffmpeg_says_what_to_install(run_command, tiny_model_dir, tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)          # as if it were not installed
    code, _, err = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--over", "layers",
                                "--kind", "enc_self", "--out", str(tmp_path / "a.mp4")])
    assert code == 2 and 'pip install -e ".[video]"' in err


def test_a_file_that_cannot_grow_is_one_line_and_no_traceback(tiny_model_dir, tmp_path):
    """A full disk, as a file-size limit makes it (writes past 20 kB fail with EFBIG): one error line, nothing
    left behind; imageio's writer, failing inside, used to print a second traceback from its clean-up."""
    import os
    import resource
    import signal
    import subprocess
    import sys

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "QT_QPA_PLATFORM": "offscreen"}
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "visualizer", "animate", TEXT, "--model", str(tiny_model_dir),
                           "--kind", "cross", "--over", "layers", "--out", str(out / "a.gif")],
                          capture_output=True, text=True, timeout=300, preexec_fn=limit, env=env)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error:") and "File too large" in proc.stderr
    assert list(out.iterdir()) == []


def test_the_progress_dialog_is_gone_before_the_error_shows(window, monkeypatch):
    """A window-modal progress dialog left open covered the error box (its OK could not be clicked)."""
    from PySide6 import QtWidgets

    from visualizer.export import ExportError
    from visualizer.export_actions import with_progress
    seen = []
    monkeypatch.setattr(window, "error", lambda title, message: seen.append(
        (title, message, [d.isVisible() for d in window.findChildren(QtWidgets.QProgressDialog)])))

    def fail(progress):
        progress(1, 3)
        for dialog in window.findChildren(QtWidgets.QProgressDialog):
            dialog.show()                    # as after its 4 s of long work
        raise ExportError("/full/a.gif: could not be written (No space left on device)")
    assert with_progress(window, "Drawing frames…", fail, "Cannot export the animation", ExportError) is None
    assert seen == [("Cannot export the animation", "/full/a.gif: could not be written (No space left on device)",
                     [False])]
    assert with_progress(window, "Drawing frames…", lambda progress: 7, "x", ExportError) == 7


def test_a_folder_not_even_root_can_write_is_refused_before_any_frame(run_command, tiny_model_dir, monkeypatch):
    if not os.path.isdir("/proc/self"):   # os.access says /proc is writable to root; only creating a file tells
        pytest.skip("needs Linux's /proc")
    monkeypatch.setattr("visualizer.animation.render_frames",
                        lambda *a, **k: pytest.fail("frames were rendered"))
    code, _, err = run_command(["animate", TEXT, "--model", str(tiny_model_dir), "--kind", "cross", "--over", "heads",
                                "--out", "/proc/a.gif"])
    assert code == 2 and "not writable" in err, err


def test_the_matrix_stays_in_place_from_frame_to_frame(tiny_lm):
    """QA as a teacher: the matrix moved 20 to 36 pixels sideways in the GIF as longer tokens came ("heureuse"),
    and the title broke at "step" in some frames only."""
    from visualizer.animation import render_frames
    trace = translate(tiny_lm, "the cat sat on the mat with a very extraordinary elephant").trace
    specs = animation_specs(trace, "dec_self", "steps", layer=1, head=0)
    assert all(s.title.split("\n")[0] == specs[0].title.split("\n")[0] for s in specs)   # the step on its own line
    assert all("step\u00a0" in s.title and "token\u00a0" in s.title for s in specs)
    frames = render_frames(specs, 600, 500)

    def matrix_box(frame):
        """The first and last columns and rows of the matrix: the widest run of non-white, non-grey pixels."""
        coloured = (frame.max(axis=2).astype(int) - frame.min(axis=2)) > 40      # the colour map's cells
        cols, rows = np.flatnonzero(coloured[:, :430].sum(axis=0) > 3), np.flatnonzero(coloured.sum(axis=1) > 3)
        return cols.min(), rows.max()
    boxes = {matrix_box(f) for f in frames[1:]}          # (the first frame's one row may hold no colour at the left)
    assert len(boxes) == 1, boxes


def test_an_animations_file_name_says_what_it_shows(tiny_lm):
    """"attention-steps.gif" named neither the kind, the layer nor the head (QA as a teacher)."""
    from visualizer.animation_actions import animation_name
    trace = translate(tiny_lm, TEXT).trace
    assert animation_name(animation_specs(trace, "cross", "steps", layer=1, head=0), "steps") == "cross_L2_H1_steps.gif"
    assert animation_name(animation_specs(trace, "cross", "steps", 1, None), "steps") == "cross_L2_mean_steps.gif"
    layers = animation_specs(trace, "enc_self", "layers", head=1)
    assert animation_name(layers, "layers") == "encoder_self_H2_layers.gif"
    assert animation_name(animation_specs(trace, "dec_self", "heads", layer=0), "heads") == "decoder_self_L1_heads.gif"
