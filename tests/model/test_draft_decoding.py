"""Greedy decoding that checks a draft first (the last keystroke's translation) gives greedy decoding's output."""
from __future__ import annotations

import pytest

from model.checkpoint import load
from model.config import EOS
from model.decoding import encode_source, greedy, translate

SENTENCES = ["I have a red car.", "The cat sat on the mat.", "Where is the station?", "She reads a book every day.",
             "We will go to the beach tomorrow if it does not rain."]


@pytest.fixture(scope="module")
def lm():
    return load("en-fr")


@pytest.mark.parametrize("text", SENTENCES)
def test_any_draft_gives_the_greedy_output(lm, text):
    src = encode_source(lm, text).ids
    plain = greedy(lm.model, src, 40)
    other = greedy(lm.model, encode_source(lm, "The dog runs in the garden.").ids, 40)
    drafts = {
        "the output itself": plain,
        "its first half": plain[: len(plain) // 2],
        "without </s>": plain[:-1],
        "wrong from the third token": plain[:2] + [t + 1 for t in plain[2:]],
        "another sentence's output": other,
        "longer, then </s>": plain[:-1] + plain[:3] + [EOS],
        "a single token": plain[:1],
    }
    for name, draft in drafts.items():
        assert greedy(lm.model, src, 40, draft=draft) == plain, name


def test_max_new_caps_a_draft_too(lm):
    src = encode_source(lm, SENTENCES[4]).ids
    plain = greedy(lm.model, src, 40)
    for cap in (1, 3, len(plain) - 1):
        expected = greedy(lm.model, src, cap)
        assert expected == plain[:cap]
        assert greedy(lm.model, src, cap, draft=plain) == expected
        assert greedy(lm.model, src, cap, draft=plain[:1]) == expected


def test_a_draft_that_is_no_draft_is_ignored(lm):
    src = encode_source(lm, SENTENCES[0]).ids
    plain = greedy(lm.model, src, 40)
    for draft in ([], None, [lm.cfg.tgt_vocab_size + 5], [-1, 3]):
        assert greedy(lm.model, src, 40, draft=draft) == plain


def test_translate_with_a_draft_traces_the_same_run(lm):
    a = translate(lm, SENTENCES[1])
    b = translate(lm, SENTENCES[1], draft=translate(lm, SENTENCES[0]).out_ids)
    assert a.out_ids == b.out_ids and a.text == b.text
    assert (a.trace["probs"] == b.trace["probs"]).all()
