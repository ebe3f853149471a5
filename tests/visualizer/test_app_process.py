"""The app as a user starts it: a real process that shows its window, saves a screenshot and exits with 0."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from PySide6 import QtGui


def run_app(args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "visualizer", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or dict(os.environ, QT_QPA_PLATFORM="offscreen"))


def test_screenshot_is_a_png_of_the_window(tiny_model_dir, tmp_path):
    shot = tmp_path / "shot.png"
    proc = run_app(["--model", str(tiny_model_dir), "--sentence", "the red car is fast", "--screenshot", str(shot)])
    assert proc.returncode == 0, proc.stderr[-2000:]
    img = QtGui.QImage(str(shot))
    assert not img.isNull() and img.width() >= 1000 and img.height() >= 700


@pytest.mark.slow
def test_app_exits_cleanly_twenty_times_in_a_row(tiny_model_dir, tmp_path):
    for i in range(20):
        shot = tmp_path / f"shot{i}.png"
        proc = run_app(["--model", str(tiny_model_dir), "--screenshot", str(shot)])
        assert proc.returncode == 0, f"run {i}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
        assert shot.stat().st_size > 10_000


def test_broken_model_on_the_command_line_is_one_line(tmp_path):
    proc = run_app(["--model", str(tmp_path / "nope"), "--screenshot", str(tmp_path / "x.png")])
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "nope" in proc.stderr
    assert not (tmp_path / "x.png").exists()


def test_translate_command_prints_the_translation(tiny_model_dir):
    proc = run_app(["translate", "the cat sat on the mat", "--model", str(tiny_model_dir), "--beam", "3"])
    assert proc.returncode == 0, proc.stderr
    from model import DecodingSettings, load, translate
    expected = translate(load(tiny_model_dir), "the cat sat on the mat", DecodingSettings(method="beam", beam=3)).text
    assert proc.stdout.strip() == expected


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs Debian's xvfb (apt-get install xvfb)")
def test_real_window_under_xvfb(tiny_model_dir, tmp_path):
    """The real xcb platform on a virtual X display, as docs/screenshot.sh does for the README picture."""
    shot = tmp_path / "xvfb.png"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    proc = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable, "-m", "visualizer",
                           "--model", str(tiny_model_dir), "--screenshot", str(shot)],
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not QtGui.QImage(str(shot)).isNull()
