"""A first start with nothing to show yet: a helper process translates the sentence while the window is built.

When the window opens on a run that has no saved frame (see last_frame), its first translation waits for torch
(an import of about 1.2 s) and the model. Building the window takes about as long, and both are Python work:
in two threads they take turns at the GIL (measured: 3.4-3.8 s to the first translated frame, no better than
one after the other). A helper process runs on the other core instead. It imports torch, runs the model on the
window's run and writes that frame to a file, which the window shows as it shows the last session's frame,
until its own model (loading meanwhile) takes over. It pays only while torch is not imported yet.

    python -m visualizer.first_run < request.json

reads {"model", "sentence", "target", "decoding", "positional", "cut_chars", "key", "out"} and writes the
frame to "out" (through a temporary file and a rename). Exit code 0 if it did. Any failure only means no early
frame: the window's own run reports errors. Nothing here imports Qt.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from model.assets import ModelLoadError
from model.config import DecodingSettings
from model.families import existing_folder, family_for
from model.families.seed_schema import NAME as SEED

from .last_frame import Frame, frame_key, load_frame, save_frame, saved_frame

ROOT = Path(__file__).resolve().parents[1]      # this checkout, importable by the helper, installed or not
TIMEOUT_S = 20.0                                 # a helper still running then (a machine swapping) is stopped


@dataclass
class Helper:
    """A helper process running the window's first run; wait() gives its frame."""
    proc: subprocess.Popen
    key: str
    out: Path
    folder: tempfile.TemporaryDirectory

    def wait(self, timeout: float = TIMEOUT_S) -> Frame | None:
        """Block until the helper ends: its frame, or None if it failed, was stopped or took too long (then it is
        stopped: the window's model loads after it)."""
        try:
            ok = self.proc.wait(timeout) == 0
            return load_frame(self.out, self.key) if ok else None
        except subprocess.TimeoutExpired:
            self.stop()
            return None
        finally:
            self.folder.cleanup()

    def stop(self) -> None:
        """End the helper if it still runs (its frame is no longer wanted)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.folder.cleanup()


def first_frame(state, frame_path: Path, helper: Helper | None = None) -> Frame | Helper | None:
    """What a window opening on state (a ViewState) shows before its model runs: the frame saved for this run
    (see last_frame), else the helper translating it (stopped if there is a saved frame), else None."""
    frame = saved_frame(frame_path, state)
    if frame is not None and helper is not None:
        helper.stop()
    return frame if frame is not None else helper


def wanted() -> bool:
    """A helper is quicker than the window's own first run only while torch is not imported."""
    return "torch" not in sys.modules


def start(state) -> Helper | None:
    """Start a helper on the run of state; None if the model is not a seed model's folder on disk (nothing to key a
    frame by; a Hugging Face model's weights would be in memory twice, its check of free memory passed by both).
    Start it first, before Qt and numpy are imported (first_frame stops it if a saved frame makes it useless):
    its import of torch is the longest part of a first start."""
    fields = state.run_fields()
    key = frame_key(state.model_name, *fields)
    if key is None or not _seed(state.model_name):
        return None
    text, target, decoding, positional = fields
    folder = tempfile.TemporaryDirectory(prefix="attention-visualizer-")
    out = Path(folder.name) / "first-frame.npz"
    request = {"model": state.model_name, "sentence": text, "target": target, "decoding": asdict(decoding),
               "positional": bool(positional), "cut_chars": state.cut_chars, "key": key, "out": str(out)}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    quiet = not os.environ.get("ATTENTION_VISUALIZER_DEBUG")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "visualizer.first_run"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if quiet else None, env=env)
        with proc.stdin:
            proc.stdin.write(json.dumps(request).encode())
    except OSError:          # no process to start (or it died at once): the window's own run follows
        folder.cleanup()
        return None
    return Helper(proc, key, out, folder)


def _seed(model_name: str) -> bool:
    try:
        folder = existing_folder(model_name)
        return folder is not None and family_for(folder).NAME == SEED
    except ModelLoadError:
        return False


def run(request: dict) -> Path:
    import torch

    from model import load, translate
    torch.set_num_threads(1)        # the window's process works on the other core
    lm = load(request["model"])
    result = translate(lm, request["sentence"], DecodingSettings(**request["decoding"]),
                       target=request["target"] or None, positional=request["positional"])
    out = Path(request["out"])
    save_frame(out, request["key"], result, request["cut_chars"], lm)
    return out


def main() -> int:
    try:
        run(json.loads(sys.stdin.buffer.read()))
    except Exception as e:          # only a frame not shown: the window's own run says what went wrong
        print(f"no first frame: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
