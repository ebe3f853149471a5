"""Session files: the sentence, target, model, decoding settings and view, as JSON; clear errors when invalid."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from model.config import DecodingSettings
from model.trace import ATTENTION_KINDS

from .export import ExportError, write_text
from .state import STACK_SUBLAYERS, ViewState

FORMAT = "attention-visualizer-session/1"
VIEW_KEYS = ("stack", "layer", "sublayer", "kind", "head", "step")


class SessionError(Exception):
    """A session file that cannot be used; str() is one line."""


def session_dict(state: ViewState) -> dict:
    return {"format": FORMAT, "model": state.model_name, "sentence": state.sentence, "target": state.target,
            "positional": state.positional, "decoding": asdict(state.decoding),
            "view": {k: getattr(state, k) for k in VIEW_KEYS}}


def save_session(path: str | Path, state: ViewState) -> None:
    try:
        write_text(Path(path), json.dumps(session_dict(state), indent=2, ensure_ascii=False) + "\n")
    except ExportError as e:
        raise SessionError(str(e)) from None


def read_session(path: str | Path) -> dict:
    """The changes to apply to a ViewState (run fields and view fields), validated."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SessionError(f"{path}: not a session file (invalid JSON: {str(e).splitlines()[0]})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError(f"{path}: not an Attention Visualizer session file (format {FORMAT!r} expected)")
    try:
        changes = {"model_name": str(data["model"]), "sentence": str(data["sentence"]),
                   "target": str(data.get("target", "")), "positional": bool(data.get("positional", True)),
                   "decoding": DecodingSettings(**data.get("decoding", {}))}
        view = data.get("view", {})
        for k in VIEW_KEYS:
            if k in view:
                changes[k] = view[k]
    except (KeyError, TypeError, ValueError) as e:
        raise SessionError(f"{path}: invalid session ({type(e).__name__}: {e})".splitlines()[0]) from None
    if changes.get("stack", "enc") not in STACK_SUBLAYERS:
        raise SessionError(f"{path}: invalid session (unknown stack {changes['stack']!r})")
    if "kind" in changes and changes["kind"] not in ATTENTION_KINDS:
        raise SessionError(f"{path}: invalid session (unknown attention kind {changes['kind']!r})")
    if "stack" in changes and changes.get("sublayer", STACK_SUBLAYERS[changes["stack"]][0]) \
            not in STACK_SUBLAYERS[changes["stack"]]:
        raise SessionError(f"{path}: invalid session (no sublayer {changes['sublayer']!r} in that stack)")
    for k in ("layer", "head", "step"):
        if k in changes and (not isinstance(changes[k], int) or isinstance(changes[k], bool) or changes[k] < 0):
            raise SessionError(f"{path}: invalid session ({k} must be a non-negative integer)")
    return changes
