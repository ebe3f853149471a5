"""Text as the app's own models read it, without the tokenizers library (the window's start imports this)."""
from __future__ import annotations

import re
import unicodedata

INVISIBLE = re.compile(r"[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def clean_text(text: str) -> str:
    """NFKC, control and invisible format characters removed, runs of white space folded."""
    text = unicodedata.normalize("NFKC", text)
    text = INVISIBLE.sub(" ", text)
    return " ".join(text.split())


def blank(text: str) -> bool:
    """Nothing to read in text: white space, control and invisible characters only (zero-width spaces were
    translated as if they were a sentence)."""
    return not clean_text(text)
