"""Example sentences chosen to show something (reordering, agreement, long range, repeated words)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from model.assets import ASSETS


@dataclass(frozen=True)
class Example:
    sentence: str
    shows: str


def load_examples(language: str = "en") -> list[Example]:
    data = json.loads((ASSETS / "examples.json").read_text(encoding="utf-8"))
    return [Example(e["sentence"], e["shows"]) for e in data.get(language, [])]
