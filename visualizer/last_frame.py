"""The last translated frame, kept between runs, so the window shows it at once while torch and the model load.

A frame is only reused for exactly the run it came from: the same model files (path, size and modification
time), sentence, target, decoding settings and positional-encoding switch. It is a Trace file (numpy only,
no pickle); a missing, stale or unreadable one is ignored. Nothing here imports torch.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from model.assets import CONFIG, SRC_TOK, TGT_TOK, WEIGHTS, model_folder
from model.config import ModelConfig
from model.trace import Trace

FORMAT = 1
FILE_NAME = "last-frame.npz"


@dataclass
class Frame:
    """What the window shows of a run (the fields of model.decoding.Translation it reads), plus the config."""
    text: str
    out_ids: list[int]
    trace: Trace
    truncated: int
    cut_chars: bool
    cfg: ModelConfig
    folder: Path


def frame_key(model_name: str, sentence: str, target: str, decoding, positional: bool) -> str | None:
    """A string naming one run of one model's files; None when the model is not a folder on disk."""
    folder = model_folder(model_name)
    if folder is None:
        return None
    files = []
    for name in (WEIGHTS, CONFIG, SRC_TOK, TGT_TOK):
        try:
            st = (folder / name).stat()
        except OSError:
            return None
        files.append([name, st.st_size, st.st_mtime_ns])
    return json.dumps({"format": FORMAT, "folder": str(folder.resolve()), "files": files, "sentence": sentence,
                       "target": target, "decoding": asdict(decoding), "positional": bool(positional)},
                      sort_keys=True, ensure_ascii=False)


def save_frame(path: Path, key: str, result, cut_chars: bool) -> None:
    """Write the frame through a temporary file and a rename: never a half-written file. Raises OSError."""
    t = result.trace
    meta = dict(t.meta, _frame={"key": key, "text": result.text, "out_ids": [int(i) for i in result.out_ids],
                                "truncated": int(result.truncated), "cut_chars": bool(cut_chars)})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays, meta).save_npz(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_frame(path: Path, key: str | None) -> Frame | None:
    """The frame saved under this key, or None (no file, another run, or a file that cannot be read)."""
    if key is None or not path.is_file():
        return None
    try:
        trace = Trace.load_npz(path)
        info = trace.meta.pop("_frame")
        if info["key"] != key:
            return None
        folder = Path(json.loads(key)["folder"])
        cfg = ModelConfig.load(folder / CONFIG)
        return Frame(str(info["text"]), [int(i) for i in info["out_ids"]], trace, int(info["truncated"]),
                     bool(info["cut_chars"]), cfg, folder)
    except Exception:   # a damaged or foreign file: start as if there were none (the live run follows anyway)
        return None
