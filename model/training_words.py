"""How often each word of a model's training sources came, kept beside its weights (training_words.tsv), so that a
translation can say which of the sentence's words the model rarely or never read: "cinema" is in none of the
139,892 English sentences the bundled en-fr model learnt from, and it wrote "la célémme" for it. No torch here."""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .command_line import ArgumentParser, UsageError, command, writable_folder
from .files import atomic_write
from .text import clean_text

FILE = "training_words.tsv"
RARE = 3                  # a word in fewer training sentences than this is named in the note ("mat", in 4 of
                          # en-fr's, came out right; at 3 the flagged validation sentences score lower still)
HEADER = "# sentences"    # the file's first line: "# sentences<TAB>N", then "word<TAB>count" lines, most common first

# words: letters with inner apostrophes ("don't", "aujourd'hui"); a run holding a digit or an underscore ("2nd",
# "COVID19") is no word, and neither is one of a script written without spaces (Chinese, Japanese, Thai …), where a
# run is a whole clause
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_UNSPACED = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x3400, 0x4DBF),
             (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FFFF))


def _in_word(c: str) -> bool:
    """A letter, digit or _ (\\w), or a mark that goes with the letter before it: a Devanagari vowel sign, virama or
    nukta is no \\w ("हिन्दी" was three words, "क़" lost its nukta: hypothesis), nor is a variation selector."""
    return c.isalnum() or c == "_" or unicodedata.category(c)[0] == "M"


def _runs(text: str) -> list[str]:
    """The runs of word characters, joined by an apostrophe between two of them ("don't", "l’eau")."""
    runs, i, n = [], 0, len(text)
    while i < n:
        if not (text[i].isalnum() or text[i] == "_"):
            i += 1
            continue
        j = i + 1
        while j < n and (_in_word(text[j]) or (text[j] in "'’" and j + 1 < n and _in_word(text[j + 1]))):
            j += 1
        runs.append(text[i:j])
        i = j
    return runs


def _is_word(run: str) -> bool:
    return not any(c.isdigit() or c == "_" or any(lo <= ord(c) <= hi for lo, hi in _UNSPACED) for c in run)


def typed_words(text: str) -> list[str]:
    """The words of a text as written (composed: "nai\u0308ve" is "naïve"), without a possessive's 's."""
    runs = _runs(unicodedata.normalize("NFC", text))
    return [w for w in (_POSSESSIVE.sub("", r) for r in runs if _is_word(r)) if w]


def _key(typed: str) -> str:
    """A typed word as it is counted: casefolded, ’ as '."""
    return typed.casefold().replace("’", "'")


def words(text: str) -> list[str]:
    """The words of a text as they are counted: casefolded, "grandmother's" as "grandmother", ’ as '."""
    return [_key(w) for w in typed_words(text)]


@dataclass(frozen=True)
class WordCounts:
    sentences: int            # distinct source sentences counted (a sentence of several pairs once)
    counts: dict[str, int]    # casefolded word → how many of those sentences held it (once a sentence)

    @classmethod
    def of(cls, sentences: Iterable[str]) -> "WordCounts":
        distinct = dict.fromkeys(sentences)
        counts = Counter(w for s in distinct for w in set(words(s)))
        return cls(len(distinct), dict(counts))

    def rare(self, text: str, below: int = RARE) -> list[tuple[str, int]]:
        """The text's words read in fewer than `below` training sentences, each once, in the text's order, as
        (the word as typed, its count)."""
        seen, found = set(), []
        for typed in typed_words(text):
            key = _key(typed)
            n = self.counts.get(key, 0)
            if key not in seen and n < below:
                seen.add(key)
                found.append((typed, n))
        return found

    def save(self, folder: str | Path) -> Path:
        """Write FILE in folder (whole or not at all)."""
        path = Path(folder) / FILE
        ranked = sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        text = f"{HEADER}\t{self.sentences}\n" + "".join(f"{w}\t{n}\n" for w, n in ranked)
        atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
        return path


def read_word_counts(folder: str | Path) -> WordCounts | None:
    """A model folder's word counts; None when it has none or the file cannot be read as one (the file only adds a
    note, so a broken one must not keep the model from opening: word_counts_problem says what is wrong). Lines
    that are not "word<TAB>count" are skipped."""
    return word_counts_and_problem(folder)[0]


def word_counts_problem(folder: str | Path | None) -> str | None:
    """Why a model folder's FILE, which is there, gives no word counts, in a user's words; None when it reads, or
    when there is none (a folder without counts is no problem)."""
    return word_counts_and_problem(folder)[1] if folder is not None else None


def word_counts_and_problem(folder: str | Path) -> tuple[WordCounts | None, str | None]:
    """(read_word_counts, word_counts_problem) of a folder from one reading of its FILE; (None, None) without one."""
    path = Path(folder) / FILE
    if not path.exists():
        return None, None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        why = getattr(e, "strerror", None) or "not UTF-8 text"
        return None, f"{path.name} cannot be read ({why}): the note on rarely read words is off"
    head = lines[0].split("\t") if lines else []
    if len(head) != 2 or head[0] != HEADER or not head[1].isdigit():
        return None, (f"{path.name} has no first line “{HEADER}<TAB>N”: the note on rarely read words is off "
                      f"(python -m model.training_words FOLDER FILE… makes the file)")
    counts = {}
    for line in lines[1:]:
        word, _, n = line.partition("\t")
        if word and n.isdigit():
            counts[word] = int(n)
    return WordCounts(int(head[1]), counts), None


def rare_words_meta(lm, text: str) -> dict:
    """The trace's meta entries for the note on rare words: the text's rare words with their counts, and how many
    sentences were counted; {} for a model without counts."""
    counts = getattr(lm, "training_words", None)
    if counts is None:
        return {}
    # the words the model reads, not the characters typed: "ca\u200dr" (a zero-width joiner inside) is read "car",
    # fullwidth "ｒｅｄ" and "𝒻𝒶𝓈𝓉" "red" and "fast", and the note had named "ca" and "fa" as never seen (QA)
    read = clean_text(text)
    return {"rare_words": [[w, n] for w, n in counts.rare(read)], "training_sentences": counts.sentences}


@command
def main(argv=None) -> int:
    """python -m model.training_words FOLDER FILE …: write FOLDER/training_words.tsv from the source sentences of
    the files a model learnt from (a TSV's first column, or a file of one sentence a line)."""
    p = ArgumentParser(prog="python -m model.training_words", description=main.__doc__.split(":", 1)[1])
    p.add_argument("folder", help="the model folder")
    p.add_argument("files", nargs="+", help="training files: source<TAB>target lines, or one sentence a line")
    a = p.parse_args(argv)
    if not Path(a.folder).is_dir():
        raise UsageError(f"{a.folder}: not a folder (give the model's folder)")
    writable_folder(a.folder, "FOLDER")
    sentences = []
    for name in a.files:
        try:
            with open(name, encoding="utf-8") as f:
                sentences += [line.split("\t", 1)[0].strip() for line in f if line.strip()]
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"{name}: cannot be read as UTF-8 text ({getattr(e, 'strerror', None) or e})") from None
    counts = WordCounts.of(sentences)
    path = counts.save(a.folder)
    print(f"{path}: {len(counts.counts):,} words of {counts.sentences:,} sentences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
