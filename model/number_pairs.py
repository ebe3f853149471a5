"""Copies of real training pairs with their numbers changed: "Our school was founded in 1990." / "Notre école a été
fondée en 1990." also as "... in 2012." / "... en 2012.", so that a translator learns to copy a number it has not seen.

Why: numbers are rare in the corpus (885 of the 2019 release's 158,348 pairs hold one in English, 503 of them the same
numbers in French), and the bundled en-fr model garbled the ones a class types: "We moved here in 2019." → "... en
209.", "I have 345 books." → "J'ai 34 livres.". Nothing here is invented but the numbers: each copy is a real pair.

A pair is copied only where its numbers are plain: each number of either side stands alone (not in "10,000", "3.5",
"10:45", "21st", "10h45" or "1990s"), has no leading zero, is 2 or more (a 1 governs the singular: "1 an" against
"2 ans"), and the French holds the same numbers as the English, as often. A copy replaces each number, the same way
on both sides, by another of its kind: a four-digit number from 1000 to 2099 (a year, mostly) by a year from 1900
to 2030; a day next to a month's name by a day from 2 to 28; any other by a number with as many digits, never
0 or 1. Two numbers of a pair stay two numbers. With --widen SHARE, that share of the two-digit numbers becomes
three-digit ones instead: three-digit numbers are split into three pieces ("▁3", "4", "5") that a translator must
copy in order, and the corpus has few of them ("I have 345 stamps." → "J'ai 34 timbres.").

    python -m model.number_pairs IN.tsv OUT.tsv [--copies 12] [--seed 1] [--widen 0.5]   (writes only the copies)
"""
from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

from .data import read_tsv, write_tsv

DIGITS = re.compile(r"\d+")
PLAIN = re.compile(r"(?<![\d.,:/])\b[1-9]\d*\b(?![.,:/]\d)")     # a whole number with nothing numeric glued to it
YEARS = (1900, 2030)
MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
          "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre")
DAY = re.compile(rf"(?:\b(?:{MONTHS})\s+(\d+)\b|\b(\d+)\s+(?:{MONTHS})\b)", re.IGNORECASE)


def plain_numbers(text: str) -> list[str] | None:
    """The numbers of text, in order, or None when one of its digit runs is not a plain number of 2 or more."""
    runs = DIGITS.findall(text)
    plain = PLAIN.findall(text)
    if len(plain) != len(runs) or any(int(n) < 2 for n in plain):
        return None
    return plain


def copyable(english: str, french: str) -> list[str] | None:
    """The distinct numbers a copy may change, or None where the pair is not copied (see the module's text)."""
    en, fr = plain_numbers(english), plain_numbers(french)
    if not en or fr is None or Counter(en) != Counter(fr):
        return None
    return list(dict.fromkeys(en))


def days(text: str) -> set[str]:
    """The numbers of text next to a month's name: "October 12", "12 octobre"."""
    return {a or b for a, b in DAY.findall(text)}


def another(number: str, rng: random.Random, day: bool = False, widen: float = 0.0) -> str:
    """A number of number's kind: a day of a month (2–28) for a day, a year for a year (1000–2099), else one with
    as many digits, 2 or more; a two-digit number becomes a three-digit one with probability widen."""
    if day:
        return str(rng.randint(2, 28))
    if len(number) == 4 and 1000 <= int(number) <= 2099:
        return str(rng.randint(*YEARS))
    width = 3 if len(number) == 2 and rng.random() < widen else len(number)
    low = max(2, 10 ** (width - 1))
    return str(rng.randint(low, 10 ** width - 1))


def renumber(text: str, mapping: dict[str, str]) -> str:
    return PLAIN.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)


def number_pairs(pairs: list[tuple[str, str]], copies: int, seed: int,
                 widen: float = 0.0) -> list[tuple[str, str]]:
    """Up to `copies` copies of each copyable pair, each with other numbers; new pairs only, each once, in order."""
    rng = random.Random(seed)
    seen = set(pairs)
    made: dict[tuple[str, str], None] = {}
    for en, fr in pairs:
        numbers = copyable(en, fr)
        if numbers is None:
            continue
        dated = days(en) | days(fr)
        for _ in range(copies):
            new: dict[str, str] = {}
            for n in numbers:
                for _ in range(20):                       # two numbers of a pair stay two numbers
                    candidate = another(n, rng, n in dated, widen)
                    if candidate not in new.values():
                        new[n] = candidate
                        break
            if len(new) != len(numbers):
                continue
            pair = (renumber(en, new), renumber(fr, new))
            if pair not in seen:
                seen.add(pair)
                made[pair] = None
    return list(made)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.number_pairs", description=__doc__.split("\n\n")[0])
    parser.add_argument("tsv", type=Path, help="the pairs to read (English<TAB>French)")
    parser.add_argument("out", type=Path, help="the TSV to write: the copies with other numbers")
    parser.add_argument("--copies", type=int, default=12, help="copies of each pair whose numbers are plain")
    parser.add_argument("--seed", type=int, default=1, help="the same seed and pairs give the same copies")
    parser.add_argument("--widen", type=float, default=0.0,
                        help="the share of two-digit numbers (not days) made three-digit in the copies (0 to 1)")
    a = parser.parse_args(argv)
    if a.copies < 1:
        parser.error("--copies must be 1 or more")
    if not 0.0 <= a.widen <= 1.0:
        parser.error("--widen must be from 0 to 1")
    corpus = read_tsv(a.tsv)
    pairs = list(zip(corpus.src, corpus.tgt))
    made = number_pairs(pairs, a.copies, a.seed, a.widen)
    sources = sum(copyable(en, fr) is not None for en, fr in pairs)
    write_tsv(a.out, made)
    print(f"{a.out}: {len(made)} copies of {sources} of {len(pairs)} pairs, with other numbers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
