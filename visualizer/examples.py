"""Example sentences chosen to show something (reordering, agreement, long range, repeated words)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from model.assets import ASSETS


@dataclass(frozen=True)
class Example:
    sentence: str
    shows: str

    @property
    def topic(self) -> str:
        """What it shows in a few words, its explanation's opening ("Word reordering", "A long-range dependency")."""
        return self.shows.split(":")[0].split(";")[0].split(".")[0].strip()


def load_examples(language: str = "en") -> list[Example]:
    data = json.loads((ASSETS / "examples.json").read_text(encoding="utf-8"))
    return [Example(e["sentence"], e["shows"]) for e in data.get(language, [])]
