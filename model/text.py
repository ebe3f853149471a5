"""Text as the app's own models read it, without the tokenizers library (the window's start imports this)."""
from __future__ import annotations

import math
import re
import unicodedata

CONTROL = re.compile(r"[\u0000-\u001f\u007f-\u009f]")
# embeddings, overrides and isolates: invisible, they may show the text after them in another order than it is read
DIRECTION_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# … those that turn text right to left (an embedding, an override, an isolate): "car is" shown as "si rac"; the
# left-to-right ones and the ends around plain Latin text reorder nothing (a note said they did, QA)
REORDERING_CONTROLS = re.compile("[\u202b\u202e\u2067]")
# a control character in a piece, as the panels and notes show it
VISIBLE_CONTROLS = {"\n": "↵", "\t": "⇥", "\r": "␍"}
# Invisible format characters, which join or mark inside a word, never part it: the soft hyphen (web pages, PDFs and
# word processors put them in long words: "tea\u00adcher" reached en-fr as "tea <unk> ##cher", "Le thé de la
# réception"), zero-width space, non-joiner and joiner, bidirectional marks, the word joiner and the BOM. They were
# read as spaces ("re\u200cd car" lost "red").
FORMAT = re.compile(r"[\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]")   # (and the variation
# selectors, "❤️"'s U+FE0F, named as empty quotes in the unknown-characters note)


def clean_text(text: str) -> str:
    """NFKC; invisible format characters removed, control characters read as spaces; runs of white space folded."""
    text = unicodedata.normalize("NFKC", text)
    text = CONTROL.sub(" ", FORMAT.sub("", text))
    return " ".join(text.split())


def blank(text: str) -> bool:
    """Nothing to read in text: white space, control and invisible characters only (zero-width spaces were
    translated as if they were a sentence)."""
    return not clean_text(text)


def why_blank(text: str, noun: str = "text") -> str:
    """Why a blank text has nothing to read, in words: empty, or only invisible or control characters (pasted from a
    PDF or a terminal: "the text is empty" denied what the field showed as there)."""
    if not text.strip():
        return f"the {noun} is empty"
    return f"the {noun} holds only invisible or control characters"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def powers_of_ten(x: float, digits: int = 2) -> str:
    """x at digits significant digits in powers of ten as a class reads them: "4.5 × 10⁻³⁸" ("4.55e-38" meant
    nothing to a class, QA as a teacher)."""
    if not math.isfinite(x):
        return str(x)
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def probability(p: float) -> str:
    """A probability as text: three decimals, and two significant digits below 0.01 written out (0.0012, 0.00019
    and 0.000068, not 0.001, 0.000 nor 6.8e-05: "0.001" above "0.00098" read as the less precise) down to a
    millionth; smaller ones in powers of ten (1.2 × 10⁻⁹)."""
    if not math.isfinite(p):          # a model whose weights went NaN (the output panel raised a traceback)
        return str(p)
    rounded = float(f"{p:.2g}")
    if rounded >= 0.01 or p == 0:
        return f"{p:.3f}"
    if rounded < 1e-6:
        return powers_of_ten(p)
    return f"{p:.{1 - math.floor(math.log10(rounded))}f}"
