"""Lists of sentences with their accepted translations (`English<TAB>accepted|another accepted`), and the rule
that says whether a translation is one of them: equal ignoring case, the spacing before punctuation (`?` and ` ?`,
French spacing) and the apostrophe's shape (' and ’). Used by `attention-visualizer check-translations` and by
`python -m model.train --check FILE`, which logs the count at every validation."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from .command_line import UsageError
from .files import NOT_REGULAR, not_regular

APOSTROPHES = re.compile("[\u2019\u2018\u02bc\u0060\u00b4]")


def normalise(text: str) -> str:
    """The form two translations are compared in: case folded, one kind of apostrophe, single spaces, none
    before closing punctuation or after an opening guillemet."""
    text = APOSTROPHES.sub("'", unicodedata.normalize("NFC", text).casefold())
    text = " ".join(text.split())                    # also no-break and narrow no-break spaces
    text = re.sub(r" (?=[?!:;.,»)\]])", "", text)
    return re.sub(r"(?<=[«(\[]) ", "", text)


def is_right(output: str, accepted: list[str]) -> bool:
    got = normalise(output)
    return any(got == normalise(a) for a in accepted)


def alternatives(accepted: str) -> list[str]:
    """The accepted translations in one list entry: `a | b | c` -> [a, b, c] (blank ones dropped)."""
    return [a.strip() for a in accepted.split("|") if a.strip()]


def read_checks(path: str | Path) -> list[tuple[str, list[str]]]:
    """(English sentence, accepted translations) per line; UsageError naming the line when one is malformed."""
    path = Path(path)
    if not_regular(path):
        raise UsageError(f"{path}: {NOT_REGULAR}")
    try:
        text = path.read_text(encoding="utf-8-sig")     # a BOM (Notepad, Excel's "CSV UTF-8") hid a comment's #
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        from .files import utf8_problem
        raise UsageError(f"{path}: not UTF-8 text ({utf8_problem(path, e)})") from None
    checks = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        source, tab, accepted = line.partition("\t")
        if "\t" in accepted:           # (the second TAB was taken as part of a translation, never right: QA)
            raise UsageError(f"{path}:{n}: {line.count(chr(9)) + 1} TAB-separated fields, 2 expected (English and "
                             "the accepted translations separated by |)")
        answers = alternatives(accepted)
        if not tab or not source.strip() or not answers:
            raise UsageError(f"{path}:{n}: expected English<TAB>accepted translations separated by |")
        checks.append((source.strip(), answers))
    if not checks:
        raise UsageError(f"{path}: no sentences to check")
    return checks


def count_right(outputs: list[str], checks: list[tuple[str, list[str]]]) -> int:
    """How many outputs are one of their sentence's accepted translations."""
    return sum(is_right(o, accepted) for o, (_, accepted) in zip(outputs, checks, strict=True))
