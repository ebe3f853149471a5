"""A Hugging Face folder's tokenizer, opened offline, and its two sides behind the seed tokenizer's methods.

Fast tokenizers (tokenizer.json) and slow ones (sentencepiece models: OPUS-MT's source.spm/target.spm with vocab.json,
T5's spiece.model, Llama's tokenizer.model) open alike, through AutoTokenizer (never remote code). A folder whose
tokenizer needs a package that is missing (sentencepiece; protobuf to convert a sentencepiece model into a fast
tokenizer) gets one line naming the command that installs it.

Marian keeps a source and a target side: the target is read with `text_target` (its own sentencepiece model, and its
own vocabulary when `separate_vocabs`), and with separate vocabularies the source's ids name source pieces (the
tokenizer's convert_ids_to_tokens reads the target's vocabulary)."""
from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

from ...assets import ModelLoadError, reason
from ...text import VISIBLE_CONTROLS
from ...tokenizer import WORD_START, reads_in_lowercase
from .folder import INSTALL, transformers

BYTE_SPACE = "\u0120"                                    # "Ġ": byte-level BPE's stored space
SENTENCEPIECE_FILES = ("source.spm", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
PACKAGES = {"sentencepiece": "sentencepiece", "protobuf": "google.protobuf"}     # pip name: module


def open_tokenizer(folder: Path):
    """AutoTokenizer.from_pretrained(folder), offline, fast or slow; one line when it cannot be read."""
    tf = transformers()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # MarianTokenizer's "Recommended: pip install sacremoses" (unused)
            return tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except Exception as e:
        missing = missing_packages(folder)
        if missing:
            raise ModelLoadError(missing) from None
        raise ModelLoadError(f"{folder}: cannot read its tokenizer ({reason(e, 160)})") from None


def missing_packages(folder: Path) -> str | None:
    """The line naming what a sentencepiece-only folder's tokenizer needs and is not installed; None when nothing."""
    if (folder / "tokenizer.json").is_file():
        return None
    files = [n for n in SENTENCEPIECE_FILES if (folder / n).is_file()]
    missing = [name for name, module in PACKAGES.items() if not _installed(module)]
    if not files or not missing:
        return None
    return (f"{folder}: its tokenizer ({files[0]}) needs {' and '.join(missing)}, not installed: "
            f"pip install {' '.join(missing)} (or {INSTALL})")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):        # a parent package missing, or a module without a spec
        return False


def source_vocabulary(tok) -> dict[int, str] | None:
    """id -> piece of a source side with a vocabulary of its own (Marian with separate_vocabs); None when the sides
    share the tokenizer's."""
    if getattr(tok, "separate_vocabs", False) and hasattr(tok, "get_src_vocab"):
        return {int(i): t for t, i in tok.get_src_vocab().items()}
    return None


class HFTokenizer:
    """One side of a transformers tokenizer behind the seed tokenizer's methods (encode, pieces, decode, vocab_size).
    Pieces read as the fast tokenizers' own decoder reads one piece (a word start bare, a lone space as ␣); a slow
    sentencepiece tokenizer's pieces through the same Metaspace decoder. A piece that continues a word is marked
    "##" as the seed's and BERT's are (GPT-2's "red" cut "re ##d", Marian's "cha ##sed"), in a vocabulary that marks
    word starts (▁ or Ġ): bare, "re d" read as two words."""

    def __init__(self, tok, target: bool = False, size: int | None = None):
        self.tok, self.target = tok, target
        self.vocab = None if target else source_vocabulary(tok)
        self._size = size
        self._starts = word_start_marks(tok)
        backend = getattr(tok, "backend_tokenizer", None)
        self._decoder = getattr(backend, "decoder", None) if backend is not None else \
            _sentencepiece_decoder(self._starts)
        self._special = set(tok.all_special_tokens)

    @property
    def lowercases(self) -> bool:
        """Whether the tokenizer lowercases what it reads: a fast one's normalizer (an uncased BERT's), a slow one's
        do_lower_case."""
        backend = getattr(self.tok, "backend_tokenizer", None)
        return reads_in_lowercase(backend) if backend is not None else bool(getattr(self.tok, "do_lower_case", False))

    @property
    def vocab_size(self) -> int:
        """The ids this side can name: the model's output layer for the target side, else the tokenizer's."""
        return self._size or (len(self.vocab) if self.vocab is not None else len(self.tok))

    def encode(self, text: str) -> list[int]:
        kw = {"text_target": text} if self.target else {"text": text}
        return list(self.tok(**kw, add_special_tokens=False)["input_ids"])

    def tokens(self, ids) -> list[str | None]:
        """The pieces as the tokenizer stores them ('▁the')."""
        ids = [int(i) for i in ids]
        if self.vocab is not None:
            return [self.vocab.get(i) for i in ids]
        return self.tok.convert_ids_to_tokens(ids)

    def piece(self, token: str | None, i: int | None = None) -> str:
        """A stored piece as it reads; an id the tokenizer has no piece for (a model's table padded past its
        tokenizer, as many are to a multiple of 64) reads "<id 50300>", not as the unknown token it is not."""
        if token is None:
            return f"<id {i}>" if i is not None else "<unk>"
        if token in self._special or self._decoder is None:
            return visible(token)
        if type(self._decoder).__name__ == "ByteLevel":
            text = byte_level_text(token)
        else:
            try:
                text = self._decoder.decode([token])
            except Exception:          # a decoder that cannot read one piece alone: show it as stored
                text = token
        text = visible(text)
        shown = text.strip() or ("␣" if text or not token.strip(WORD_START + "Ġ ") else token)
        return "##" + shown if self._continues(token, shown) else shown

    def _continues(self, token: str, shown: str) -> bool:
        """Whether a piece goes on the word before it: its vocabulary marks word starts and this one has none. Only
        pieces with a letter or digit: punctuation and byte pieces (<0xF0>) read as they are, as the seed's do."""
        return (bool(self._starts) and not token.startswith(self._starts) and not shown.startswith(("<0x", "##"))
                and any(c.isalnum() for c in shown))

    def pieces(self, ids) -> list[str]:
        """Each id's piece alone, as an output token or a vocabulary entry reads ("##d" continues a word)."""
        ids = [int(i) for i in ids]
        return [self.piece(t, i) for t, i in zip(self.tokens(ids), ids)]

    def text_pieces(self, ids) -> list[str]:
        """The pieces of a text read in order: its first piece, one after a special token and one after a lone word
        mark (sentencepiece's "▁" cut from "the") continue nothing (GPT-2's opening "The" has no Ġ before it)."""
        ids = [int(i) for i in ids]
        tokens = self.tokens(ids)
        out = [self.piece(t, i) for t, i in zip(tokens, ids)]
        for i, p in enumerate(out):
            # (only where this class put the mark: BERT's own "##ing" is its decoder's, and stays)
            if p.startswith("##") and self._starts and (i == 0 or tokens[i - 1] in self._special
                                                        or tokens[i - 1] in self._starts):
                out[i] = p[2:]
        return out

    def decode(self, ids) -> str:
        """The text of ids without special tokens, an unknown piece read "�" as the seed models' (a given target's
        emoji vanished from a Marian's translation line, while its note said it read "�": QA). Where the unknown
        token is also an end or start (GPT-2's <|endoftext|>), it stays special."""
        ids = [int(i) for i in ids]
        unk = self.tok.unk_token_id
        if unk is not None and unk in ids and unk not in {self.tok.eos_token_id, self.tok.bos_token_id,
                                                          self.tok.pad_token_id}:
            # decoded with its neighbours, as the tokenizer spaces them: joined with spaces, a T5's "אמרתי" with an
            # unknown letter read "א � רתי" (QA)
            mark = self.tok.unk_token
            if self.vocab is not None:
                text = self.tok.convert_tokens_to_string([t for t, i in zip(self.tokens(ids), ids)
                                                          if t and (i == unk or t not in self._special)])
            else:
                special = set(self.tok.all_special_ids) - {unk}
                text = self.tok.decode([i for i in ids if i not in special], skip_special_tokens=False)
            return text.replace(mark, "�").strip()
        if self.vocab is not None:
            return self.tok.convert_tokens_to_string([t for t in self.tokens(ids) if t and t not in self._special])
        return self.tok.decode(ids, skip_special_tokens=True).strip()


def unknown_parts(tok, text: str) -> list[str]:
    """The parts of text a fast tokenizer reads as its unknown token, in order (the seed tokenizer's unknown_parts):
    the note on unknown pieces named none of a Hugging Face model's, and blamed emoji for a word-level vocabulary's
    unknown words (QA). [] for a slow tokenizer (no offsets), and where the unknown token is also an end or start
    (GPT-2's <|endoftext|>: typed, it is that special token, not an unknown part)."""
    unk = tok.unk_token_id
    if (unk is None or not text or not getattr(tok, "is_fast", False)
            or unk in {tok.eos_token_id, tok.bos_token_id, tok.pad_token_id}):
        return []
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    return [text[a:b] for i, (a, b) in zip(enc["input_ids"], enc["offset_mapping"]) if i == unk and b > a]


def visible(text: str) -> str:
    """A piece's text with its control characters readable: a line break as ↵, a tab as ⇥, others as <0x01>."""
    return "".join(VISIBLE_CONTROLS.get(c, f"<0x{ord(c):02X}>") if (ord(c) < 32 or 0x7F <= ord(c) < 0xA0) and c != " "
                   else c for c in text)


_BYTES: dict[str, int] | None = None


def byte_level_text(token: str) -> str:
    """A byte-level BPE piece (GPT-2's: each byte stored as a printable character) as text; the bytes of a
    character split between pieces (an emoji, an accented letter in some vocabularies) as <0xF0>…: decoded alone
    each such piece read "�", and every one looked the same."""
    global _BYTES
    if _BYTES is None:
        from transformers.convert_slow_tokenizer import bytes_to_unicode
        _BYTES = {c: b for b, c in bytes_to_unicode().items()}
    if any(c not in _BYTES for c in token):
        return token
    raw = bytes(_BYTES[c] for c in token)
    text = raw.decode("utf-8", errors="surrogateescape")
    return "".join(f"<0x{ord(c) - 0xDC00:02X}>" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def word_start_marks(tok) -> tuple[str, ...]:
    """The marks a vocabulary puts on a word's first piece (sentencepiece's ▁, byte-level BPE's Ġ); () when it marks
    continuations instead (BERT's ##) or nothing."""
    vocab = tok.get_vocab()
    return tuple(m for m in (WORD_START, BYTE_SPACE) if any(t.startswith(m) for t in vocab))


def _sentencepiece_decoder(starts: tuple[str, ...]):
    """The Metaspace decoder for a slow tokenizer whose pieces mark word starts with ▁ (sentencepiece; starts: its
    word_start_marks); None else."""
    if WORD_START not in starts:
        return None
    from tokenizers import decoders
    return decoders.Metaspace()
