"""The last translated frame, kept between runs, so the window shows it at once while torch and the model load.

A frame is only reused for exactly the run it came from: the same model files (path, size and modification
time), sentence, target, decoding settings and positional-encoding switch. The model files are the seed family's
four, or every file of a Hugging Face folder (see model_files). It is a Trace file (numpy only, no pickle) whose
_frame record also holds what the window shows of the model before it is open: its output vocabulary's pieces and
its longest input; a missing, stale or unreadable one is ignored. Nothing here imports torch.

A bundled model also ships a start frame (START_FRAME in its folder): its run of the app's default sentence, so
that the very first start of the app has a frame to show too. That one is keyed by the SHA-256 of the model's
files instead of their path and times (a fresh clone has new ones). Write it with

    python -m visualizer.last_frame assets/models/en-fr
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from model.ablation import ablated_heads
from model.assets import CONFIG, SRC_TOK, TGT_TOK, WEIGHTS, ModelLoadError, model_folder
from model.families import existing_folder, family_for, output_pieces, schema_of
from model.families.seed_schema import NAME as SEED

from .file_schema import FRAME_HEADER, FRAME_RECORD, SchemaError, validate

if TYPE_CHECKING:       # imported where used: numpy is slow to import, and a start computes keys before the rest
    from model.trace import Trace

FORMAT = 1
FILE_NAME = "last-frame.npz"
START_FRAME = "start-frame.npz"
MODEL_FILES = (WEIGHTS, CONFIG, SRC_TOK, TGT_TOK)
# A run's arrays are saved at close only up to this size. They are written uncompressed: a model's floats hardly
# compress (a random GPT-2-sized model's 128-token run: 148 MB, 130 MB compressed) and compressing held the close for
# 7 s, decompressing the next start for 1.2 s (0.35 and 0.45 s plain). A 512-token run of a GPT-2-sized model
# holds 817 MB (attention and scores, 12 layers of 12 heads of 512 x 512, and a 50,257-wide row of logits and of
# probabilities a token): too much to write into the settings folder at every close, or to read back faster than
# the model runs again.
MAX_SAVED_BYTES = 256 * 2**20


@dataclass
class Frame:
    """What the window shows of a run (the fields of model.decoding.Translation it reads), plus what it shows of the
    model: its output vocabulary's pieces (by id) and its longest input (cfg.max_len of the open model)."""
    text: str
    out_ids: list[int]
    trace: Trace
    truncated: int
    cut_chars: bool
    folder: Path
    vocab: list[str]
    max_len: int


def run_key(files: list, sentence: str, target: str, decoding, positional: bool, **where) -> str:
    return json.dumps({"format": FORMAT, **where, "files": files, "sentence": sentence, "target": target,
                       "decoding": asdict(decoding), "positional": bool(positional)},
                      sort_keys=True, ensure_ascii=False)


def model_files(folder: Path) -> list | None:
    """[name, size, mtime_ns] of the files a model is made of: the seed family's four (MODEL_FILES), or every regular
    file under a Hugging Face folder (config.json, *.safetensors, tokenizer files, target_tokenizer/...; links followed,
    as the hub cache's snapshot folders link to its blobs; hidden names such as .git apart). None when the folder
    is no model (its config names no family) or a file cannot be read."""
    try:
        seed = family_for(folder).NAME == SEED
    except ModelLoadError:
        return None
    names = MODEL_FILES if seed else _files_under(folder)
    files = []
    for name in names:
        try:
            st = (folder / name).stat()
        except OSError:
            return None
        if stat.S_ISREG(st.st_mode):
            files.append([name, st.st_size, st.st_mtime_ns])
    return files


def _files_under(folder: Path) -> list[str]:
    names = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = Path(root).relative_to(folder)
        names += [(rel / f).as_posix() for f in sorted(files) if not f.startswith(".")]
    return names


def frame_key(model_name: str, sentence: str, target: str, decoding, positional: bool) -> str | None:
    """A string naming one run of one model's files; None when the model is not a folder on disk (the seed example,
    a model id not in the cache, a folder that is no model)."""
    try:
        folder = existing_folder(model_name)
    except ModelLoadError:
        return None
    files = model_files(folder) if folder is not None else None
    if files is None:
        return None
    return run_key(files, sentence, target, decoding, positional, folder=str(folder.resolve()))


def start_key(folder: Path, sentence: str, target: str, decoding, positional: bool) -> str | None:
    """The key of a run of the model in folder by the contents of its files (for its bundled start frame)."""
    files = []
    for name in MODEL_FILES:
        try:
            files.append([name, hashlib.sha256((folder / name).read_bytes()).hexdigest()])
        except OSError:
            return None
    return run_key(files, sentence, target, decoding, positional)


def save_frame(path: Path, key: str, result, cut_chars: bool, lm, compressed: bool = False) -> bool:
    """Write the frame of result, a run of lm (a first look still generating is no frame: ValueError), through a
    temporary file and a rename: never a half-written file. False (nothing written) when its arrays are larger than
    MAX_SAVED_BYTES. Raises OSError."""
    from model.trace import Trace
    t = result.trace
    if t.meta.get("partial"):
        raise ValueError("a first look at a run still generating is not a frame")
    if sum(a.nbytes for a in t.arrays.values()) > MAX_SAVED_BYTES:
        return False
    meta = dict(t.meta, _frame={"key": key, "text": result.text, "out_ids": [int(i) for i in result.out_ids],
                                "truncated": int(result.truncated), "cut_chars": bool(cut_chars),
                                "vocab": output_pieces(lm), "max_len": int(lm.cfg.max_len)})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays, meta, t.schema).save_npz(f, compressed)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


class DamagedFrame(Exception):
    """A frame file that cannot be read or does not hold what a frame holds; str() says what is wrong."""


def read_frame(path: Path, key: str | None, folder: Path | None = None) -> Frame | None:
    """The frame saved under this key, or None (no file, or another run's). The model's folder is the one named
    in the key unless given. Raises DamagedFrame for a file that is not a valid frame (see file_schema)."""
    if key is None or not path.is_file():
        return None
    from model.trace import Trace
    try:
        meta = Trace.load_header(path).get("meta")
        if isinstance(meta, dict) and isinstance(meta.get("_frame"), dict) and meta["_frame"].get("key") != key:
            return None         # another run's: its arrays (150 MB for a GPT-2-sized model's 128 tokens) are not read
        trace = Trace.load_npz(path)
    except Exception as e:      # zip, JSON, numpy or header errors: numpy raises many kinds
        raise DamagedFrame(f"not a readable frame file ({type(e).__name__}: {first_sentence(str(e))})") from None
    try:
        validate({"src_tokens": trace.src_tokens, "tgt_tokens": trace.tgt_tokens, "out_tokens": trace.out_tokens,
                  "meta": trace.meta}, FRAME_HEADER)
        info = validate(trace.meta.pop("_frame", None), FRAME_RECORD, "_frame")
    except SchemaError as e:
        raise DamagedFrame(str(e)) from None
    if info["key"] != key:
        return None
    folder = Path(folder or json.loads(key)["folder"])
    try:
        schema = schema_of(folder)
        recorded = info["vocab"] is not None and info["max_len"] is not None
        vocab, max_len = (info["vocab"], info["max_len"]) if recorded else seed_model_facts(folder)
    except Exception:                # the model's folder changed meanwhile: nothing to show it with
        return None
    if trace.schema != schema and trace.schema.same_model(schema):      # saved by a version with other captions:
        trace = Trace(trace.src_tokens, trace.tgt_tokens, trace.out_tokens, trace.arrays, trace.meta, schema)
    check_arrays(trace, info, schema, len(vocab))
    return Frame(info["text"], info["out_ids"], trace, info["truncated"], info["cut_chars"], folder, vocab, max_len)


def first_sentence(text: str, limit: int = 100) -> str:
    """A library's message up to its first full stop, cut at a word with '…' past limit characters (numpy's run on
    about allow_pickle= and `pickle.load()`, which no user of the app can act on)."""
    text = " ".join(text.split())
    text = text.split(". ")[0].rstrip(".")
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def seed_model_facts(folder: Path) -> tuple[list[str], int]:
    """The output pieces and longest input of a seed model, from its files (for frames saved before the _frame
    record held them, as the bundled start frames)."""
    from model.config import ModelConfig
    from model.tokenizer import TextTokenizer
    tok = TextTokenizer.load(folder / TGT_TOK)
    return tok.pieces(range(tok.vocab_size)), ModelConfig.load(folder / CONFIG).max_len


def check_arrays(trace: Trace, info: dict, schema, vocab_size: int) -> None:
    """DamagedFrame unless the arrays have the shapes the model's schema (from its config), the vocabulary and the
    tokens give (what the panels index)."""
    import numpy as np

    def damaged(what: str):
        raise DamagedFrame(what)

    for name, arr in trace.arrays.items():
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
            damaged(f"array {name}: not numbers ({getattr(arr, 'dtype', type(arr))})")
    if trace.schema != schema:
        damaged("its model shape is not the model's")
    out_rows = trace.tokens(schema.output_stack.tokens)
    if any(not trace.tokens(st.tokens) for st in schema.stacks) or len(trace.out_tokens) != len(out_rows):
        damaged("token lists of the wrong lengths")
    for kind in schema.kinds:
        rows, cols = trace.axis_tokens(kind.name)
        for layer in range(schema.stack(kind.stack).n_layers):
            try:
                shape = trace.attention(kind.name, layer).shape
            except KeyError:
                damaged(f"no {kind.name} attention in layer {layer}")
            if shape != (schema.n_heads, len(rows), len(cols)):
                damaged(f"{kind.name} attention of layer {layer} has shape {shape}, expected "
                        f"{(schema.n_heads, len(rows), len(cols))}")
    logits = trace.arrays.get("logits")
    if logits is None or logits.shape != (len(out_rows), vocab_size):
        damaged(f"logits of shape {None if logits is None else logits.shape}, expected "
                f"{(len(out_rows), vocab_size)}")
    if any(not 0 <= i < vocab_size for i in info["out_ids"]):
        damaged("_frame.out_ids: a token id outside the vocabulary")


def load_frame(path: Path, key: str | None, folder: Path | None = None) -> Frame | None:
    """read_frame, with None for a damaged file too."""
    try:
        return read_frame(path, key, folder)
    except DamagedFrame:
        return None


def set_aside(path: Path, reason: str) -> Path | None:
    """Rename a damaged frame file to NAME.damaged (the app starts as new) and say so on stderr."""
    aside = path.with_name(path.name + ".damaged")
    try:
        os.replace(path, aside)
    except OSError:
        aside = None
    where = f"set aside as {aside}" if aside else "left in place (it could not be renamed)"
    print(f"note: the saved last frame {path} is damaged ({reason}); {where}; the app starts as new",
          file=sys.stderr)
    return aside


def saved_frame(path: Path, state) -> Frame | None:
    """The frame of the run of state (a ViewState) saved in path at the last close, else the model's bundled
    start frame if that is its run, else None. A damaged saved frame is set aside (see set_aside)."""
    fields = state.run_fields()
    try:
        frame = read_frame(path, frame_key(state.model_name, *fields))
    except DamagedFrame as e:
        set_aside(path, str(e))
        frame = None
    if frame is None:
        folder = model_folder(state.model_name)
        if folder is not None and (folder / START_FRAME).is_file():      # hash the files only if it has one
            frame = load_frame(folder / START_FRAME, start_key(folder, *fields), folder)
    # the key holds no heads off: a frame of the run with other heads off is another run's (a session of 40 heads
    # off opened on the plain run's frame, QA)
    if frame is not None and ablated_heads(frame.trace) != frozenset(getattr(state, "ablations", ())):
        return None
    return frame


def write_start_frame(folder: Path) -> Path:
    """Run the model in folder on the app's default state and save that frame as the folder's start frame."""
    from model import load, translate
    from visualizer.state import ViewState

    state = ViewState()
    lm = load(str(folder))
    result = translate(lm, state.sentence, state.decoding, target=state.target or None, positional=state.positional)
    path = folder / START_FRAME
    save_frame(path, start_key(folder, state.sentence, state.target, state.decoding, state.positional), result,
               cut_chars=False, lm=lm, compressed=True)         # a file in the repository
    return path


if __name__ == "__main__":
    from visualizer.state import default_model
    for arg in sys.argv[1:] or [default_model()]:
        written = write_start_frame(model_folder(arg))
        print(f"{written}: {written.stat().st_size:,} bytes")
