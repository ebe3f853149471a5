"""Session files: the sentence, target, model, decoding settings and view, as JSON; clear errors when invalid."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from model.config import DecodingSettings
from model.trace import ATTENTION_KINDS

from .export import ExportError, write_text
from .file_schema import DECODING, SESSION, VIEW, SchemaError, validate
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
    """The changes to apply to a ViewState (run fields and view fields), validated (see file_schema.SESSION)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise SessionError(f"{path}: not a session file (invalid JSON: {str(e).splitlines()[0]})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError(f"{path}: not an Attention Visualizer session file (format {FORMAT!r} expected)")
    try:
        fields = validate(data, SESSION)
        decoding = validate(fields["decoding"], DECODING, "decoding")
        view = fields["view"]
        changes = {"model_name": fields["model"], "sentence": fields["sentence"], "target": fields["target"] or "",
                   "positional": fields["positional"], "decoding": DecodingSettings(**decoding)}
        for k in VIEW_KEYS:
            if k in view:
                changes[k] = VIEW[k].check(f"view.{k}", view[k])
    except (SchemaError, ValueError) as e:
        raise SessionError(f"{path}: invalid session ({e})".splitlines()[0]) from None
    if not changes["model_name"].strip():
        raise SessionError(f"{path}: invalid session (model: empty)")
    if changes.get("stack", "enc") not in STACK_SUBLAYERS:
        raise SessionError(f"{path}: invalid session (view.stack: unknown stack {changes['stack']!r})")
    if "kind" in changes and changes["kind"] not in ATTENTION_KINDS:
        raise SessionError(f"{path}: invalid session (view.kind: unknown attention kind {changes['kind']!r})")
    if "stack" in changes and changes.get("sublayer", STACK_SUBLAYERS[changes["stack"]][0]) \
            not in STACK_SUBLAYERS[changes["stack"]]:
        raise SessionError(f"{path}: invalid session (view.sublayer: no sublayer {changes['sublayer']!r} "
                           "in that stack)")
    return changes
