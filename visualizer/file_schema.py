"""The fields of the app's own files (session files, settings, saved frames), with their types and ranges.

Each file is read through one schema here: a value of the wrong type or out of range is named in the message
(`decoding.seed: 3000000000 is above 2147483647`). Nothing here imports Qt, numpy or torch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from model.command_line import MAX_BEAM
from model.config import METHODS

INT32_MAX = 2**31 - 1       # Qt's spin boxes and numpy's seeds stop here
_MISSING = object()


class SchemaError(ValueError):
    """A field that is missing, of the wrong type or out of range; str() names the field, on one line."""


@dataclass(frozen=True)
class Field:
    kind: type                       # bool, int, float, str, list or dict (an int is a float too; a bool is neither)
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    default: Any = _MISSING          # _MISSING: the field is required
    optional: bool = False           # None is allowed
    items: type | None = None        # a list's element type
    max_len: int | None = None       # a str's or list's length

    def check(self, name: str, value):
        if value is None and self.optional:
            return None
        if not _is(value, self.kind):
            raise SchemaError(f"{name}: {_show(value)} is not {_KIND_NAMES[self.kind]}")
        if self.kind is float:
            value = float(value)
            if not math.isfinite(value):
                raise SchemaError(f"{name}: {_show(value)} is not a finite number")
        if self.choices is not None and value not in self.choices:
            raise SchemaError(f"{name}: {_show(value)} is not one of {', '.join(map(str, self.choices))}")
        if self.low is not None and value < self.low:
            raise SchemaError(f"{name}: {_show(value)} is below {self.low}")
        if self.high is not None and value > self.high:
            raise SchemaError(f"{name}: {_show(value)} is above {self.high}")
        if self.max_len is not None and len(value) > self.max_len:
            raise SchemaError(f"{name}: longer than {self.max_len}")
        if self.items is not None:
            for i, item in enumerate(value):
                if not _is(item, self.items):
                    raise SchemaError(f"{name}[{i}]: {_show(item)} is not {_KIND_NAMES[self.items]}")
        return value


_KIND_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "text", list: "a list",
               dict: "an object"}


def _is(value, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate(data, schema: dict[str, Field], where: str = "") -> dict:
    """The fields of schema read from data (a dict), defaults filled in; unknown keys are ignored."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where or 'the file'}: {_show(data)} is not an object")
    out = {}
    for key, field in schema.items():
        name = f"{where}.{key}" if where else key
        if key not in data:
            if field.default is _MISSING:
                raise SchemaError(f"{name}: missing")
            out[key] = field.default
            continue
        out[key] = field.check(name, data[key])
    return out


# --- session files (see session.py) ---------------------------------------------------------------
SESSION = {
    "format": Field(str),
    "model": Field(str, max_len=4096),
    "sentence": Field(str, max_len=100_000),
    "target": Field(str, default="", optional=True, max_len=100_000),
    "positional": Field(bool, default=True),
    "decoding": Field(dict, default={}),
    "view": Field(dict, default={}),
    "ablations": Field(list, items=str, default=[], max_len=100_000),   # "KIND:LAYER:HEAD", 1-based (model/ablation.py)
}
DECODING = {
    "method": Field(str, choices=METHODS, default="greedy"),
    "beam": Field(int, low=1, high=MAX_BEAM, default=4),
    "temperature": Field(float, low=0.01, high=100.0, default=1.0),
    "top_k": Field(int, low=0, high=INT32_MAX, default=0),
    "seed": Field(int, low=0, high=INT32_MAX, default=0),
    "max_new": Field(int, low=1, high=100_000, default=None, optional=True),
}
VIEW = {                              # stack/sublayer/kind choices are checked by session.py against the state's
    "stack": Field(str),
    "layer": Field(int, low=0, high=INT32_MAX),
    "sublayer": Field(str),
    "kind": Field(str),
    "head": Field(int, low=0, high=INT32_MAX),
    "step": Field(int, low=0, high=INT32_MAX),
}

# --- settings (see settings.py): value types as QSettings may hand them back (INI files give text) ----------
SETTINGS_RANGES = {"font_size": (6.0, 48.0)}

# --- saved frames (see last_frame.py): the header of the Trace file and its _frame record --------------------
FRAME_HEADER = {
    "src_tokens": Field(list, items=str),
    "tgt_tokens": Field(list, items=str),
    "out_tokens": Field(list, items=str),
    "meta": Field(dict),
}
FRAME_RECORD = {
    "key": Field(str),
    "text": Field(str),
    "out_ids": Field(list, items=int),
    "truncated": Field(int, low=0, high=INT32_MAX),
    "cut_chars": Field(bool),
    "vocab": Field(list, items=str, default=None, optional=True),    # the output pieces by id (none in older frames)
    "max_len": Field(int, low=1, high=INT32_MAX, default=None, optional=True),
}
