"""Parallel corpora: reading TSV or line-aligned files with line-numbered complaints, and token-sized batches."""
from __future__ import annotations

import itertools
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .files import NOT_REGULAR, atomic_write, not_regular, utf8_problem
from .transformer import BOS, EOS, PAD


class CorpusError(ValueError):
    """A corpus that cannot be read; the message names the file and line."""


@dataclass
class Corpus:
    src: list[str]
    tgt: list[str]
    problems: list[str] = field(default_factory=list)   # "file:line: what is wrong", one per skipped line

    def __len__(self) -> int:
        return len(self.src)


def _open_lines(path: Path):
    if not_regular(path):
        raise CorpusError(f"{path}: {NOT_REGULAR}")
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:     # a BOM (Notepad, Excel's "CSV UTF-8") skipped
            for n, line in enumerate(f, 1):
                yield n, line.rstrip("\r\n")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: not UTF-8 text ({utf8_problem(path, e)})") from None
    except OSError as e:
        raise CorpusError(f"{path}: cannot read ({e.strerror})") from None


def read_tsv(path: str | Path, strict: bool = False) -> Corpus:
    """`source<TAB>target` lines. Blank lines and `#` comments (a line that starts with # and has no TAB, as the
    check lists have) are passed over; malformed lines are skipped and reported, or raise when strict."""
    path = Path(path)
    corpus = Corpus([], [])
    for n, line in _open_lines(path):
        if "\t" not in line and (not line.strip() or line.lstrip().startswith("#")):
            continue
        parts = line.split("\t")
        problem = None
        if len(parts) < 2:
            problem = "no TAB between source and target"
        elif len(parts) > 2:                  # the third field was dropped without a word
            problem = f"{len(parts)} TAB-separated fields, 2 expected (source and target)"
        elif not parts[0].strip() or not parts[1].strip():
            problem = "empty source or target"
        if problem:
            if strict:
                raise CorpusError(f"{path}:{n}: {problem}")
            corpus.problems.append(f"{path}:{n}: {problem}")
            continue
        corpus.src.append(parts[0].strip())
        corpus.tgt.append(parts[1].strip())
    return corpus


def write_tsv(path: str | Path, pairs) -> None:
    """`source<TAB>target` lines for (source, target) pairs, written whole or not at all (model.files.atomic_write)."""
    text = "".join(f"{src}\t{tgt}\n" for src, tgt in pairs)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_aligned(src_path: str | Path, tgt_path: str | Path, strict: bool = False) -> Corpus:
    """Line i of the source file is translated by line i of the target file."""
    src_path, tgt_path = Path(src_path), Path(tgt_path)
    src_lines = list(_open_lines(src_path))
    tgt_lines = list(_open_lines(tgt_path))
    if len(src_lines) != len(tgt_lines):
        raise CorpusError(f"{tgt_path}: has {len(tgt_lines)} lines but {src_path} has {len(src_lines)}")
    corpus = Corpus([], [])
    for (n, s), (_, t) in zip(src_lines, tgt_lines):
        s, t = " ".join(s.split()), " ".join(t.split())   # stray spaces and TABs inside a line
        if not s or not t:
            msg = f"{src_path if not s else tgt_path}:{n}: empty line"
            if strict:
                raise CorpusError(msg)
            corpus.problems.append(msg)
            continue
        corpus.src.append(s)
        corpus.tgt.append(t)
    return corpus


def report_problems(corpus: Corpus, shown: int = 10, out=None) -> None:
    out = out or sys.stderr
    for p in corpus.problems[:shown]:
        print(f"warning: skipped {p}", file=out)
    if corpus.problems:
        print(f"warning: skipped {len(corpus.problems)} malformed line(s) in all", file=out)


def token_batches(pairs: list[tuple[list[int], list[int]]], max_tokens: int, seed: int, shuffle: bool = True):
    """Index lists of pairs of similar length whose padded size stays under max_tokens."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]), len(pairs[i][1])))
    batches, cur, longest = [], [], 0
    for i in order:
        n = max(len(pairs[i][0]), len(pairs[i][1]) + 1)
        if cur and max(longest, n) * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, n)
    if cur:
        batches.append(cur)
    if shuffle:
        random.Random(seed).shuffle(batches)
    return batches


def collate(pairs: list[tuple[list[int], list[int]]], idx: list[int]):
    """(src (B, Ts), tgt_in (B, Tt), tgt_out (B, Tt)) padded with PAD; source ends with </s>."""
    srcs = [pairs[i][0] for i in idx]
    tgts = [pairs[i][1] for i in idx]
    return padded(srcs, last=EOS), padded(tgts, first=BOS), padded(tgts, last=EOS)


def padded(rows: list[list[int]], first: int | None = None, last: int | None = None) -> torch.Tensor:
    """The rows as one (B, T) tensor padded with PAD, each with `first` before it and `last` after it when given.
    Filled in one step through a mask (row by row, tensor by tensor, a 16,000-token batch took 35 ms: a third of a
    GPU update; benchmarks/collate_speed.py)."""
    lead, tail = int(first is not None), int(last is not None)
    sizes = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    lengths = sizes + lead + tail
    width = int(lengths.max(initial=0))
    out = np.full((len(rows), width), PAD, dtype=np.int64)
    cols = np.arange(width)
    out[(cols >= lead) & (cols < (lead + sizes)[:, None])] = np.fromiter(
        itertools.chain.from_iterable(rows), dtype=np.int64, count=int(sizes.sum()))
    if first is not None:
        out[:, 0] = first
    if last is not None:
        out[np.arange(len(rows)), lengths - 1] = last
    return torch.from_numpy(out)


class PieceDropout:
    """BPE-dropout for training: each batch's sentences split into pieces anew by tokenizers that leave out each
    merge with probability p, so that the model sees a word in many segmentations and learns how pieces make words
    (a rare word's plain pieces, "▁c ine ma", are then less of a puzzle). The batches are planned on the plain
    pieces, so every process of a run cuts an epoch the same way; a sentence whose new pieces would pass the
    model's maximum length keeps its plain ones."""

    def __init__(self, texts: list[tuple[str, str]], plain: list[tuple[list[int], list[int]]], src_tok, tgt_tok,
                 p: float, max_len: int):
        self.texts, self.plain, self.max_len = texts, plain, max_len
        self.src, self.tgt = src_tok.with_dropout(p), tgt_tok.with_dropout(p)

    def pairs(self, idx: list[int]) -> dict[int, tuple[list[int], list[int]]]:
        """The pairs of one batch (indices into the plain pairs), split anew; collate() takes them as they are."""
        out = {}
        for i in idx:
            s, t = self.texts[i]
            si, ti = self.src.encode(s), self.tgt.encode(t)
            out[i] = (si, ti) if len(si) < self.max_len and len(ti) < self.max_len else self.plain[i]
        return out
