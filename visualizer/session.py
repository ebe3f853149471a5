"""Session files: the sentence, target, model, decoding settings and view, as JSON; clear errors when invalid."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from model.assets import ModelLoadError
from model.config import DecodingSettings
from model.schema import Stage

from .export import ExportError, write_text
from .state import ViewState

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
    for k in ("stack", "sublayer", "kind"):
        if k in changes and not isinstance(changes[k], str):
            raise SessionError(f"{path}: invalid session ({k} must be a string)")
    _check_names(path, changes)
    for k in ("layer", "head", "step"):
        if k in changes and (not isinstance(changes[k], int) or isinstance(changes[k], bool) or changes[k] < 0):
            raise SessionError(f"{path}: invalid session ({k} must be a non-negative integer)")
    return changes


def _check_names(path: Path, changes: dict) -> None:
    """The stage and attention kind must exist in the session's model (checked against its schema when its
    config can be read; a model that cannot be opened is reported when the window opens it)."""
    from model.families import schema_of
    try:
        schema = schema_of(changes["model_name"])
    except ModelLoadError:
        return
    if "stack" in changes and changes["stack"] not in schema.stage_names():
        raise SessionError(f"{path}: invalid session (unknown stack {changes['stack']!r}; "
                           f"this model has {', '.join(schema.stage_names())})")
    if "kind" in changes and changes["kind"] not in schema.kind_names:
        raise SessionError(f"{path}: invalid session (unknown attention kind {changes['kind']!r}; "
                           f"this model has {', '.join(schema.kind_names)})")
    if "stack" in changes and schema.is_layer_stage(Stage(changes["stack"])):
        subs = [s.key for s in schema.stack(changes["stack"]).sublayers]
        if changes.get("sublayer", subs[0]) not in subs:
            raise SessionError(f"{path}: invalid session (no sublayer {changes['sublayer']!r} in that stack)")
