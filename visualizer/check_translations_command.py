"""`attention-visualizer check-translations FILE [--model M] [--beam N]`: translate each English sentence of a
list and compare with its accepted translations; print each miss and the count.

FILE holds `English<TAB>accepted translation|another accepted translation` lines (blank lines and lines starting
with # are skipped). A translation is right when it equals an accepted one ignoring case, the spacing before
punctuation (`?` and ` ?`, French spacing) and the apostrophe's shape (' and ’). Exit 0 when all are right,
1 otherwise (with `error: N of M translations missed` on stderr).
"""
from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

from model.command_line import ArgumentParser, CommandError, UsageError, beam_width, command, model_argument

from .translate_command import load_model_arg

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


def read_checks(path: str | Path) -> list[tuple[str, list[str]]]:
    """(English sentence, accepted translations) per line; UsageError naming the line when one is malformed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    checks = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        source, tab, accepted = line.partition("\t")
        answers = [a.strip() for a in accepted.split("|") if a.strip()]
        if not tab or not source.strip() or not answers:
            raise UsageError(f"{path}:{n}: expected English<TAB>accepted translations separated by |")
        checks.append((source.strip(), answers))
    if not checks:
        raise UsageError(f"{path}: no sentences to check")
    return checks


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer check-translations",
                       description="Translate each sentence of a list and compare with its accepted translations.")
    p.add_argument("file", help="English<TAB>accepted|translations lines")
    model_argument(p)
    p.add_argument("--beam", type=beam_width, default=1, help="beam width (1 = greedy)")
    a = p.parse_args(argv)
    checks = read_checks(a.file)
    from model.evaluate import translate_all

    lm = load_model_arg(a.model)
    outputs = translate_all(lm, [s for s, _ in checks], a.beam)
    right = 0
    for (source, accepted), output in zip(checks, outputs):
        if is_right(output, accepted):
            right += 1
            continue
        print(f"miss: {source}\n  got:      {output}\n  accepted: {' | '.join(accepted)}")
    print(f"{right} of {len(checks)} right", flush=True)
    if right < len(checks):       # exit 1, with the one line every failing command ends with
        raise CommandError(f"{len(checks) - right} of {len(checks)} translations missed")
    return 0
