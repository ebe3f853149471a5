"""Greedy decoding that checks a draft first (the last keystroke's translation) gives greedy decoding's output."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from model import decoding
from model import load
from model.config import EOS, DecodingSettings
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
    b = translate(lm, SENTENCES[1], previous=translate(lm, SENTENCES[0]))
    assert a.out_ids == b.out_ids and a.text == b.text
    assert (a.trace["probs"] == b.trace["probs"]).all()


def assert_same_trace(a, b):
    assert (a.src_tokens, a.tgt_tokens, a.out_tokens) == (b.src_tokens, b.tgt_tokens, b.out_tokens)
    assert sorted(a.arrays) == sorted(b.arrays)
    for key in a.arrays:
        np.testing.assert_allclose(a.arrays[key], b.arrays[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_a_draft_that_is_the_output_gives_the_trace_without_a_second_pass(lm, monkeypatch):
    """The draft check reads <s> + the draft: when greedy keeps all of it, that traced pass is the trace."""
    for text in SENTENCES[:3]:
        plain = translate(lm, text)
        other_source = replace(plain, run=())          # the same output, from another sentence's run
        monkeypatch.setattr(decoding, "trace_run", lambda *a, **k: pytest.fail("a second decoder pass ran"))
        b = translate(lm, text, previous=other_source)
        monkeypatch.undo()
        assert b.out_ids == plain.out_ids and b.text == plain.text
        assert_same_trace(b.trace, plain.trace)
        assert b.trace.meta == plain.trace.meta


def test_an_unchanged_run_is_given_again_without_the_model(lm, monkeypatch):
    text = SENTENCES[3]
    a = translate(lm, text)
    monkeypatch.setattr(decoding, "decode_ids", lambda *a, **k: pytest.fail("the model ran"))
    monkeypatch.setattr(decoding, "trace_run", lambda *a, **k: pytest.fail("the model ran"))
    b = translate(lm, text + " ", previous=a)          # the same source pieces
    assert b.trace.arrays is a.trace.arrays and b.out_ids == a.out_ids
    assert b.trace.meta["sentence"] == text + " " and a.trace.meta["sentence"] == text
    monkeypatch.undo()
    changed = {"another sentence": dict(text=SENTENCES[0]),
               "beam search": dict(text=text, settings=DecodingSettings(method="beam", beam=3)),
               "a given target": dict(text=text, target="Elle lit."),
               "positional encoding off": dict(text=text, positional=False)}
    for name, kwargs in changed.items():
        c = translate(lm, previous=a, **kwargs)
        assert c.trace.arrays is not a.trace.arrays, name
        assert_same_trace(c.trace, translate(lm, **kwargs).trace)
        lm.model.positional = True


def test_a_gradient_step_is_a_new_run(lm):
    """The Training step panel changes the weights and runs the model again: the same text is no longer the same run."""
    from model.gradient_step import GradientStepper
    text = SENTENCES[2]
    a = translate(lm, text)
    stepper = GradientStepper(lm)
    try:
        stepper.step(text, "Où est la gare ?", lr=0.5)
        b = translate(lm, text, previous=a)
        assert b.trace.arrays is not a.trace.arrays
        assert not np.array_equal(b.trace["logits"], a.trace["logits"])
        assert_same_trace(b.trace, translate(lm, text).trace)
    finally:
        stepper.reset()
    c = translate(lm, text, previous=b)                   # the weights as loaded again
    assert c.trace.arrays is not b.trace.arrays
    np.testing.assert_allclose(c.trace["logits"], a.trace["logits"], rtol=1e-5, atol=1e-5)
