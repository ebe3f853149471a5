"""How a Hugging Face tokenizer's pieces read in the panels (model/families/hf/tokenizer.py)."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("transformers")

from model.families.hf.tokenizer import HFTokenizer, visible  # noqa: E402

TEXTS = ["I love my cat 😀", "the café is open\nnew line", "tab\there"] * 20


@pytest.fixture(scope="module")
def byte_level():
    """A GPT-2-style byte-level BPE tokenizer, trained here: emoji and accents come apart into byte pieces."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(TEXTS, vocab_size=300, min_frequency=1, special_tokens=["<|endoftext|>"])
    return HFTokenizer(PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>"))


def test_byte_pieces_of_a_split_character_read_as_their_bytes_not_as_a_replacement_mark(byte_level):
    first_byte = byte_level.tok.convert_tokens_to_ids("ð")            # byte 0xF0 as GPT-2 stores it
    assert byte_level.pieces([first_byte]) == ["<0xF0>"]
    shown = "".join(byte_level.pieces(byte_level.tok("😀", add_special_tokens=False)["input_ids"]))
    raw = re.sub(r"<0x([0-9A-F]{2})>", lambda m: chr(int(m.group(1), 16)), shown).encode("latin-1", "ignore")
    assert raw.decode("utf-8") == "😀" or shown == "😀"      # the emoji's bytes, in order, or the emoji whole
    every = byte_level.pieces(range(byte_level.vocab_size))
    assert not any("\ufffd" in p for p in every)                    # "�" said nothing: every one looked the same
    assert not any(ord(c) < 32 for p in every for c in p)           # no raw control characters on an axis
    newline = byte_level.tok("line\nnew", add_special_tokens=False)["input_ids"]
    assert "↵" in "".join(byte_level.pieces(newline))


def test_control_characters_are_shown_by_name_or_code():
    assert visible("a\nb\tc\x01d\x7f") == "a↵b⇥c<0x01>d<0x7F>"
    assert visible("plain text, ünïcödé") == "plain text, ünïcödé"


def test_a_byte_level_piece_that_continues_a_word_is_marked_and_the_text_reads_back(byte_level):
    """GPT-2 marks a word's first piece with Ġ: a piece without it continues the word ("##"), as the seed's and
    BERT's pieces read; the text's first piece continues nothing. Joined by the output panel's rule, the pieces give
    the words back (they read "re d c ar" when every piece was bare)."""
    from visualizer.panels.output import join_pieces
    text = "the cafe is open tab here"
    ids = byte_level.tok(text, add_special_tokens=False)["input_ids"]
    stored = byte_level.tokens(ids)
    shown = byte_level.text_pieces(ids)
    assert any(not t.startswith("\u0120") for t in stored[1:])           # the text has a piece inside a word
    for i, (t, p) in enumerate(zip(stored, shown)):
        after_space = i == 0 or stored[i - 1] == "\u0120"                  # a lone Ġ is a space before a word
        assert p.startswith("##") == (not after_space and not t.startswith("\u0120"))
    assert not shown[0].startswith("##") and byte_level.pieces(ids[:1])[0] == "##" + shown[0]
    assert join_pieces(shown) == text


def test_a_decoder_only_models_output_pieces_read_as_its_rows_do(byte_level, tmp_path):
    """QA: after a lone-space piece a GPT-2's piece read "##red" in the chips (what each row predicts) and "red" on
    the heatmap's axis (the rows): each row's prediction is the next row's token, and reads the same."""
    import torch
    import transformers

    from model.families import load, translate
    torch.manual_seed(0)
    tok = byte_level.tok
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=len(tok), n_positions=64, n_embd=16, n_layer=1, n_head=2,
        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id))
    model.save_pretrained(str(tmp_path))
    tok.save_pretrained(str(tmp_path))
    lm = load(tmp_path)
    text = "the red car is open"                          # "red", "car": words the tokenizer never saw whole
    trace = translate(lm, text).trace
    stored = lm.src_tok.tokens(tok(text, add_special_tokens=False)["input_ids"])
    assert "\u0120" in stored                              # a lone Ġ: the case that read two ways
    n = trace.prompt_rows()
    assert trace.out_tokens[: n - 1] == trace.tgt_tokens[1:n]
    assert trace.out_tokens[: len(trace.tgt_tokens) - 1] == trace.tgt_tokens[1:]
