"""Example sentences chosen to show something (reordering, agreement, long range, repeated words); what each shows
is said for the open model's target language (en-de's German keeps "ein rotes Auto" in English order, which the
French explanation of the menu called a reordering: QA)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from model.assets import ASSETS

TARGET_CODE = re.compile(r"(?:^|[-_/])en-([a-z]{2,3})/?$")     # en-fr, opus-mt-en-de, …/runs/en-fr/


@dataclass(frozen=True)
class Example:
    sentence: str
    explanations: dict[str, str] = field(default_factory=dict)     # target language code (or "*") -> what it shows

    def shows(self, model: str = "") -> str:
        """What it shows for a model (its name or folder): said for its target language, else for any model."""
        found = TARGET_CODE.search(str(model).lower())
        code = found.group(1) if found else "*"
        return self.explanations.get(code) or self.explanations["*"]

    def topic(self, model: str = "") -> str:
        """What it shows in a few words, its explanation's opening ("Word reordering", "A long-range dependency")."""
        return self.shows(model).split(":")[0].split(";")[0].split(".")[0].strip()


def load_examples(language: str = "en") -> list[Example]:
    data = json.loads((ASSETS / "examples.json").read_text(encoding="utf-8"))
    return [Example(e["sentence"], e["shows"] if isinstance(e["shows"], dict) else {"*": e["shows"]})
            for e in data.get(language, [])]
