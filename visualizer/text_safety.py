"""Text from users in places that are not plain text: XML (SVG exports) and window titles and labels."""
from __future__ import annotations

import html
import re
import unicodedata

# characters XML 1.0 does not allow, written raw or as character references (Qt's SVG writer does both)
_XML_INVALID = "\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff"
_RAW = re.compile(f"[{_XML_INVALID}]")
_REF = re.compile(r"&#(?:x0*([0-8bcefBCEF]|1[0-9a-fA-F]|[fF]{3}[eEfF])|0*([0-8]|1[1-24-9]|2[0-9]|3[01]|6553[45]));")
_ISOLATES = re.compile("[\u2066-\u2069]")
FSI, PDI = "\u2068", "\u2069"
WORD_JOINER = "\u2060"
ZERO_WIDTH_SPACE = "\u200b"
_LONG_RUN = re.compile(r"\S{25,}")


def xml_safe(data: bytes) -> bytes:
    """An XML document (UTF-8) without the control characters XML forbids, raw or as &#…; references."""
    text = data.decode("utf-8", "replace")
    return _REF.sub("", _RAW.sub("", text)).encode("utf-8")


def isolate(text: str) -> str:
    """Text to show inside other text (a window title, a label): wrapped in a first-strong isolate, so that
    bidirectional controls in it (U+202E…) cannot reorder what is around it. Isolate controls of its own are
    dropped: a stray U+2069 would end the isolation early. Text without right-to-left letters or bidirectional
    controls comes back as it is: the isolates showed as boxes in taskbars that do not know them (QA)."""
    text = _ISOLATES.sub('', text)
    if not any(unicodedata.bidirectional(c) in RIGHT_TO_LEFT for c in text):
        return text
    return f"{FSI}{text}{PDI}"


RIGHT_TO_LEFT = {"R", "AL", "AN", "RLE", "RLO", "LRE", "LRO", "PDF", "RLI", "LRI", "FSI", "PDI"}
LRM = "\u200e"


def model_order(text: str) -> str:
    """Tokens as the model reads them, left to right, where right-to-left letters are among them: a left-to-right
    mark before the text and after each run of right-to-left letters, so that the digits and brackets after one
    stay after it. A GPT-2 piece "ש<0xD7>" (a letter and a byte) was drawn ">0xD7ש<" on its axis, and a bar's
    "א (#116)" as ")#116א (" (QA). Each run of Hebrew or Arabic letters still reads right to left within itself;
    text without such letters comes back as it is."""
    if not any(unicodedata.bidirectional(c) in ("R", "AL") for c in text):
        return text
    out, in_run = [LRM], False
    for c in text:
        kind = unicodedata.bidirectional(c)
        # a vowel mark or a joiner (NSM, BN) goes with the letter before it: a mark between them had scrambled
        # "שָׁלוֹם" and disjoined "مَرْحَبًا" (QA)
        rtl = kind in ("R", "AL") or (in_run and kind in ("NSM", "BN"))
        if in_run and not rtl:
            out.append(LRM)
        out.append(c)
        in_run = rtl
    return "".join(out + ([LRM] if in_run else []))


def unbreakable_html(text: str) -> str:
    """text escaped for Qt's rich text, with a word joiner between its characters: a line never breaks inside it
    (a token chip "</s>" was shown as "</" and "s>" on two lines; Qt ignores white-space:nowrap on a span)."""
    return WORD_JOINER.join(html.escape(c) for c in text)


def breakable_html(text: str, every: int = 24) -> str:
    """text escaped for Qt's rich text, with a zero-width space after every `every` characters of a run without
    spaces: a word-wrapped label can break a line there. Without it a long unbroken output ("apidapidapid…", an
    undertrained model's) asked for its whole width, and the window grew wider than the screen and stayed so."""
    def cut(m: re.Match) -> str:
        run = m.group(0)
        return ZERO_WIDTH_SPACE.join(run[i: i + every] for i in range(0, len(run), every))
    return html.escape(_LONG_RUN.sub(cut, text))
