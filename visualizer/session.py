"""Session files: the sentence, target, model, decoding settings and view, as JSON; clear errors when invalid."""
from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path, PureWindowsPath

from model.ablation import AblationError, expand, parse_spec, spec
from model.assets import ModelLoadError, bundled_models
from model.config import DecodingSettings
from model.files import utf8_problem
from model.schema import Stage
from model.text import blank

from .export import ExportError, write_text
from .file_schema import DECODING, SESSION, VIEW, SchemaError, validate
from .state import ViewState

FORMAT = "attention-visualizer-session/1"
VIEW_KEYS = ("stack", "layer", "sublayer", "kind", "head", "step")


class SessionError(Exception):
    """A session file that cannot be used; str() is one line."""


def session_dict(state: ViewState, view: dict | None = None) -> dict:
    """The session of state; view: fields of the view that replace the state's (a session's view not applied yet)."""
    shown = {k: getattr(state, k) for k in VIEW_KEYS} | {k: v for k, v in (view or {}).items() if k in VIEW_KEYS}
    return {"format": FORMAT, "model": state.model_name, "sentence": state.sentence, "target": state.target,
            "positional": state.positional, "decoding": asdict(state.decoding), "view": shown,
            "ablations": [spec(a) for a in sorted(state.ablations)]}


def save_session(path: str | Path, state: ViewState, view: dict | None = None) -> None:
    try:
        write_text(Path(path), json.dumps(session_dict(state, view), indent=2, ensure_ascii=False) + "\n")
    except ExportError as e:
        raise SessionError(str(e)) from None


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """Text with each lone surrogate (half of a UTF-16 pair, which JSON's \\ud800 can spell) as U+FFFD: the
    tokenizers refuse such text ("TextInputSequence must be str"), as the command line's arguments do."""
    return LONE_SURROGATE.sub("\ufffd", text)


def read_session(path: str | Path) -> dict:
    """The changes to apply to a ViewState (run fields and view fields), validated (see file_schema.SESSION)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")                 # (a BOM, as Notepad writes one, is skipped)
        if not text.strip():           # ("it stops making sense at line 1, column 1" said nothing useful: QA)
            raise SessionError(f"{path}: the file is empty: nothing was saved in it (save one with File ▸ Save "
                               "session)")
        data = json.loads(text)
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None
    except json.JSONDecodeError as e:     # where it broke, in a person's words (the parser's follow in brackets)
        raise SessionError(f"{path}: the file is damaged or was changed by hand: it stops making sense at line "
                           f"{e.lineno}, column {e.colno} ({e.msg})") from None
    except UnicodeDecodeError as e:       # (the codec's own words had reached a --screenshot's user: QA)
        raise SessionError(f"{path}: not a session file (not UTF-8 text: {utf8_problem(path, e)})") from None
    except RecursionError as e:
        raise SessionError(f"{path}: not a session file (not readable text: {str(e).splitlines()[0]})") from None
    except ValueError as e:               # a number of thousands of digits (Python's limit for reading one)
        raise SessionError(f"{path}: the file is damaged or was changed by hand ({str(e).split(';')[0]})") from None
    version = str(data.get("format", "")) if isinstance(data, dict) else ""
    if version.startswith(FORMAT.rsplit("/", 1)[0] + "/") and version != FORMAT:    # ".../2": not ours to guess at
        raise SessionError(f"{path}: a session file of another version of Attention Visualizer (format {version!r}; "
                           f"this one reads {FORMAT!r})")
    if isinstance(data, dict) and str(data.get("format", "")).startswith("attention-visualizer-export/"):
        # an Export all's run.json, listed by the dialog's *.json (QA: "format … expected" was jargon to a teacher)
        raise SessionError(f"{path}: this is the record an Export all writes beside its pictures, not a session: "
                           "open a file saved with File ▸ Save session")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError(f"{path}: not a session file of Attention Visualizer (save one with File ▸ Save session)")
    try:
        fields = validate(data, SESSION)
        decoding = validate(fields["decoding"], DECODING, "decoding")
        view = fields["view"]
        changes = {"model_name": fields["model"], "sentence": whole_characters(fields["sentence"]),
                   # a target of nothing to read is none (a "\u0000" ran as an empty given target; the command line
                   # refuses one: QA)
                   "target": "" if blank(fields["target"] or "") else whole_characters(fields["target"]),
                   "positional": fields["positional"], "decoding": DecodingSettings(**decoding)}
        for k in VIEW_KEYS:
            if k in view:
                changes[k] = VIEW[k].check(f"view.{k}", view[k])
        ablations = [parse_spec(text) for text in fields["ablations"]]
    except AblationError as e:
        raise SessionError(f"{path}: invalid session (ablations: {e})".splitlines()[0]) from None
    except (SchemaError, ValueError) as e:
        raise SessionError(f"{path}: invalid session ({e})".splitlines()[0]) from None
    if not changes["model_name"].strip():
        raise SessionError(f"{path}: invalid session (model: empty)")
    changes["model_name"] = beside(path, changes["model_name"])
    _check_names(path, changes, ablations)
    return changes


def folder_name(model: str) -> str:
    """The last part of a model's path, saved on Windows too (split at backslashes as at slashes)."""
    return PureWindowsPath(model).name


def beside(path: Path, model: str) -> str:
    """The session's model folder where it is not (a relative path saved by an older version, or a lesson's folder
    moved to another computer), found beside the session file: at that relative path from it, or by its name; else
    the name as it was (a bundled model, a hub id, or a folder the window will say is missing)."""
    if model in bundled_models() or Path(model).is_dir():
        return model
    # a path saved on Windows splits at its backslashes too ("C:\\Users\\alice\\en de copy" was looked for as one
    # name, QA); PureWindowsPath splits at both separators
    windows = PureWindowsPath(model)
    name = windows.name                      # (folder_name's)
    relative = [path.parent / Path(*windows.parts)] if windows.parts and not windows.anchor else []
    for candidate in (path.parent / model, *relative, path.parent / name):
        if name and candidate.is_dir():
            return str(candidate.resolve())
    return model


def _check_names(path: Path, changes: dict, ablations: list) -> None:
    """The stage, attention kind and switched-off heads must exist in the session's model (checked against its
    schema when its config can be read; a model that cannot be opened is reported when the window opens it)."""
    from model.families import check, schema_of
    try:
        check(changes["model_name"])          # a folder that cannot open is named for that, not for its heads
        schema = schema_of(changes["model_name"])
    except ModelLoadError:
        if any(layer is None or head is None for _, layer, head in ablations):
            raise SessionError(f"{path}: invalid session (ablations: 'all' needs the session's model)") from None
        changes["ablations"] = frozenset((k, l - 1, h - 1) for k, l, h in ablations)
        return
    try:
        changes["ablations"] = expand(ablations, schema)
    except AblationError as e:
        raise SessionError(f"{path}: invalid session (ablations: {e})") from None
    if "stack" in changes and changes["stack"] not in schema.stage_names():
        raise SessionError(f"{path}: invalid session (view.stack: unknown stack {changes['stack']!r}; "
                           f"this model has {', '.join(schema.stage_names())})")
    if "kind" in changes and changes["kind"] not in schema.kind_names:
        raise SessionError(f"{path}: invalid session (view.kind: unknown attention kind {changes['kind']!r}; "
                           f"this model has {', '.join(schema.kind_names)})")
    if "stack" in changes and schema.is_layer_stage(Stage(changes["stack"])):
        subs = [s.key for s in schema.stack(changes["stack"]).sublayers]
        if changes.get("sublayer", subs[0]) not in subs:
            raise SessionError(f"{path}: invalid session (view.sublayer: no sublayer {changes['sublayer']!r} "
                               "in that stack)")
