"""--digit-by-digit: tokenizers that cut every number into single digits, the vocabulary and its ids kept."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from model.tokenizer import TextTokenizer
from model.train import main as train_main

from test_train_pipeline import TINY, synthetic_tsv

RNG = random.Random(5)
TEXTS = [f"the class has {n} pupils and {m} books" for n, m in
         ((RNG.choice([12, 12, 20, 25, 100, 125, 2013]), RNG.randrange(10, 999)) for _ in range(300))]
WORDS = "the class has pupils and books".split()


@pytest.fixture(scope="module")
def merged() -> TextTokenizer:
    tok = TextTokenizer.train(TEXTS, vocab_size=150)
    assert not tok.splits_digits and "▁12" in tok.tok.get_vocab()        # numbers the corpus repeats were merged
    return tok


@pytest.fixture(scope="module")
def split(merged) -> TextTokenizer:
    return merged.digit_by_digit()


def number_pieces(tok: TextTokenizer, text: str) -> list[str]:
    return [p for p in tok.tok.encode(text, add_special_tokens=False).tokens if any(c.isdigit() for c in p)]


def test_the_merged_tokenizer_cuts_numbers_unevenly(merged):
    assert number_pieces(merged, "125") != ["▁1", "2", "5"]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 10**9), words=st.lists(st.sampled_from(WORDS), max_size=4))
def test_every_number_comes_out_digit_by_digit_and_reads_back(merged, split, n, words):
    text = " ".join([*words, str(n), *words])
    pieces = number_pieces(split, text)
    assert all(sum(c.isdigit() for c in p) == 1 for p in pieces) and "".join(pieces).lstrip("▁") == str(n)
    assert split.decode(split.encode(text)) == merged.decode(merged.encode(text)) == text


def test_the_vocabulary_ids_and_text_without_numbers_stay(merged, split):
    assert split.tok.get_vocab() == merged.tok.get_vocab()
    for text in ("the class has pupils", "books and pupils, the class"):
        assert split.encode(text) == merged.encode(text)
    assert split.splits_digits and split.digit_by_digit().to_str() == split.to_str()
    assert merged.splits_digits is False             # the copy left the tokenizer it came from as it was


def test_old_style_merges_written_as_strings_are_read_too(merged):
    """tokenizers before 0.20 wrote each merge as "a b": such a file is converted the same way."""
    import json
    spec = json.loads(merged.to_str())
    spec["model"]["merges"] = [" ".join(m) for m in spec["model"]["merges"]]
    old = TextTokenizer.from_str(json.dumps(spec))
    assert not old.splits_digits
    assert number_pieces(old.digit_by_digit(), "2013 and 125") == ["▁2", "0", "1", "3", "▁1", "2", "5"]


def numbered_tsv(path: Path) -> Path:
    lines = [f"{t}\t{t.replace('the class has', 'la classe a')}" for t in TEXTS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_run_with_the_option_saves_digit_by_digit_tokenizers(tmp_path):
    tsv = numbered_tsv(tmp_path / "train.tsv")
    common = ["--tsv", str(tsv), "--steps", "2", "--average", "1", *TINY, "--vocab-size", "150",
              "--share-embeddings"]
    assert train_main([*common, "--out", str(tmp_path / "a")]) == 0
    start = tmp_path / "a" / "model"
    before = TextTokenizer.load(start / "tokenizer_src.json")
    assert not before.splits_digits
    assert train_main([*common, "--out", str(tmp_path / "b"), "--init-from", str(start), "--digit-by-digit"]) == 0
    for name in ("tokenizer_src.json", "tokenizer_tgt.json"):
        after = TextTokenizer.load(tmp_path / "b" / "model" / name)
        assert after.splits_digits and after.tok.get_vocab() == before.tok.get_vocab()
        assert after.to_str() == before.digit_by_digit().to_str()
    assert TextTokenizer.load(start / "tokenizer_src.json").to_str() == before.to_str()    # the start is untouched
    assert train_main([*common, "--out", str(tmp_path / "c"), "--digit-by-digit"]) == 0    # a new vocabulary too
    fresh = TextTokenizer.load(tmp_path / "c" / "model" / "tokenizer_src.json")
    assert fresh.splits_digits and re.fullmatch(r"▁1 2 5", " ".join(number_pieces(fresh, "125")))
