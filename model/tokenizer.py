"""Subword tokenizers (the `tokenizers` library), one for the source side and one for the target side."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from .config import BOS, EOS, PAD, UNK
from .text import clean_text

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]          # ids 0..3, the same on both sides
TYPOGRAPHIC = {"“": '"', "”": '"', "„": '"', "‟": '"', "″": '"', "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'",
               "«": '"', "»": '"', "‹": "'", "›": "'",  # German and French quotes (en-de read »Guten Morgen« as <unk>s)
               "–": "-", "—": "-", "‐": "-", "‑": "-"}     # what a word processor writes, and the plain form
assert [SPECIALS.index(t) for t in ("<pad>", "<unk>", "<s>", "</s>")] == [PAD, UNK, BOS, EOS]
WORD_START = "\u2581"                                   # the Metaspace marker "▁"
TWO_DIGITS = re.compile(r"\d\d")


def readable(piece: str) -> str:
    """A piece as users should see it: word starts bare, word continuations as '##piece'."""
    if piece in SPECIALS:
        return piece
    if piece.startswith(WORD_START):
        return piece[len(WORD_START):] or "␣"
    if not any(c.isalnum() for c in piece):
        return piece                                    # punctuation reads fine as it is
    return "##" + piece


def joins_digits(merge: list[str] | str) -> bool:
    """Whether a BPE merge (["a", "b"], or "a b" as tokenizers before 0.20 wrote it) makes a piece with two digits."""
    return bool(TWO_DIGITS.search("".join(merge) if isinstance(merge, list) else merge.replace(" ", "")))


def reads_in_lowercase(tok: Tokenizer) -> bool:
    """Whether a `tokenizers.Tokenizer`'s normalizer lowercases its input (a Lowercase step, an uncased BERT's)."""
    return tok.normalizer is not None and tok.normalizer.normalize_str("Ab") == "ab"


class TextTokenizer:
    """Thin wrapper that adds the project's specials and readable pieces to a `tokenizers.Tokenizer`."""

    def __init__(self, tok: Tokenizer):
        self.tok = tok
        for i, special in enumerate(SPECIALS):
            if tok.token_to_id(special) != i:
                raise ValueError(f"tokenizer must map {special} to id {i}")

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, min_frequency: int = 2,
              lowercase: bool = False) -> "TextTokenizer":
        """lowercase=True makes the tokenizer itself lowercase every input, as a model trained on lowercased text needs."""
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]) if lowercase \
            else normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()])
        tok.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=SPECIALS, show_progress=False)
        tok.train_from_iterator((clean_text(t) for t in texts), trainer=trainer)
        return cls(tok)

    @classmethod
    def load(cls, path: str | Path) -> "TextTokenizer":
        return cls(Tokenizer.from_file(str(path)))

    @classmethod
    def from_str(cls, text: str) -> "TextTokenizer":
        return cls(Tokenizer.from_str(text))

    def save(self, path: str | Path) -> None:
        self.tok.save(str(path))

    def to_str(self) -> str:
        return self.tok.to_str()

    @property
    def vocab_size(self) -> int:
        return self.tok.get_vocab_size()

    @property
    def lowercases(self) -> bool:
        """Whether the tokenizer itself lowercases what it reads (its normalizer; en-de's does)."""
        return reads_in_lowercase(self.tok)

    def with_dropout(self, p: float) -> "TextTokenizer":
        """A copy whose BPE leaves out each merge with probability p at every encoding (BPE-dropout, Provilkov,
        Emelianenko and Voita, 2020): a word comes out in another segmentation each time. For training only."""
        copy = TextTokenizer.from_str(self.to_str())
        copy.tok.model.dropout = p
        return copy

    def digit_by_digit(self) -> "TextTokenizer":
        """A copy that cuts every number into single digits ("125" → "▁1" "2" "5"): the BPE merges that join two
        digits are left out. The vocabulary and its ids stay (pieces such as "▁12" are no longer made), so a model
        trained with this tokenizer's vocabulary goes on training with it. Why: a number was cut by what its digits
        happened to merge into ("125" → "▁12" "5", "345" → "▁3" "4" "5"), and a translator had each cut's copy to
        learn on its own ("I have 345 stamps." → "J'ai 34 timbres.")."""
        spec = json.loads(self.to_str())
        spec["model"]["merges"] = [m for m in spec["model"]["merges"] if not joins_digits(m)]
        return TextTokenizer.from_str(json.dumps(spec, ensure_ascii=False))

    @property
    def splits_digits(self) -> bool:
        """Whether no piece this tokenizer makes holds two digits (see digit_by_digit)."""
        return not any(joins_digits(m) for m in json.loads(self.to_str())["model"].get("merges", []))

    def encode(self, text: str) -> list[int]:
        """Ids of the pieces of text, without specials."""
        return self.encode_with_unknown(text)[0]

    def unknown_parts(self, text: str) -> list[str]:
        """The parts of text the tokenizer reads as <unk> (an emoji, a letter it never saw), in order."""
        return self.encode_with_unknown(text)[1]

    def encode_with_unknown(self, text: str) -> tuple[list[int], list[str]]:
        """(encode(text), unknown_parts(text)) from one encoding."""
        cleaned = self.plain_form(clean_text(text))
        enc = self.tok.encode(cleaned, add_special_tokens=False)
        return enc.ids, [cleaned[a:b] for i, (a, b) in zip(enc.ids, enc.offsets) if i == UNK]

    def plain_form(self, text: str) -> str:
        """text with each typographic quote or dash the vocabulary lacks written as its plain form, when that is
        known: quotes pasted from slides (“Stop!”) reached en-fr as <unk> and spoilt the translation."""
        if not any(c in TYPOGRAPHIC for c in text):
            return text
        for c, plain in self.plain_forms().items():
            text = text.replace(c, plain)
        return text

    def plain_forms(self) -> dict[str, str]:
        """The typographic characters plain_form replaces (those the vocabulary lacks) and what with."""
        if "_plain" not in self.__dict__:
            self._plain = {c: plain for c, plain in TYPOGRAPHIC.items()
                           if UNK in self.tok.encode(c, add_special_tokens=False).ids}
        return self._plain

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [readable(self.tok.id_to_token(int(i)) or "<unk>") for i in ids]

    def decode(self, ids: Iterable[int]) -> str:
        ids = [int(i) for i in ids if int(i) not in (PAD, BOS, EOS)]
        return self.tok.decode(ids, skip_special_tokens=False).replace("<unk>", "�").strip()
