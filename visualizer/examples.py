"""Example sentences chosen to show something (reordering, agreement, long range, repeated words), for the open
model: a model that writes German gets sentences of its own (the bundled en-de learnt from image captions and wrote
"ich habe, dass ich im i i i ive gibt." for "I love you."), and what each shows is said for the model's target
language (the French explanations called German's "ein rotes Auto" a reordering: QA)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from model.assets import ASSETS
from model.notes import ENGLISH_SOURCE


@dataclass(frozen=True)
class Example:
    sentence: str
    explanations: dict[str, str] = field(default_factory=dict)     # target language code (or "*") -> what it shows

    def shows(self, model: str = "") -> str:
        """What it shows for a model (its name or folder): said for its target language, else for any model."""
        return self.explanations.get(target_code(model) or "*") or self.explanations["*"]

    def topic(self, model: str = "") -> str:
        """What it shows in a few words, its explanation's opening ("Word reordering", "A long-range dependency")."""
        return self.shows(model).split(":")[0].split(";")[0].split(".")[0].strip()


def target_code(model: str) -> str | None:
    """The language a model from English writes, from its name or folder ("en-de", "opus-mt-en-fr"): "de", "fr";
    None when its name does not say."""
    found = ENGLISH_SOURCE.search(str(model).lower().rstrip("/"))          # (…/runs/en-fr/ too)
    return found.group(1) if found else None


def load_examples(model: str = "", schema=None) -> list[Example]:
    """The examples for a model (its name or folder; schema: the open model's, when known): the worked example's own
    sentence, a language model's texts to continue or a masked-word model's texts with its own mask token (QA: GPT-2
    and BERT were offered translation sentences "to see in cross-attention", and BERT none with a mask), a language
    pair's own list ("en-de") if there is one, else the list for any model that reads English."""
    data = json.loads((ASSETS / "examples.json").read_text(encoding="utf-8"))
    layout = getattr(schema, "layout", None)
    mask = (getattr(schema, "special", None) or {}).get("mask") or "[MASK]"
    # the worked example knows six words: its own sentence only (QA: "I love you." gave "sat sat sat …")
    chosen = (data.get("seed-example") if str(model) == "seed-example" else None) or \
        (data.get(layout) if layout in ("decoder-only", "encoder-only") else None) or \
        data.get(f"en-{target_code(model)}") or data["en"]
    return [Example(e["sentence"].replace("{mask}", mask), e["shows"] if isinstance(e["shows"], dict)
                    else {"*": e["shows"]}) for e in chosen]
