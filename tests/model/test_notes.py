"""Notes a reader of a result should have (model/notes.py), on real runs of tiny models."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, translate  # noqa: E402
from model.notes import prompt_fills  # noqa: E402


def test_a_prompt_that_fills_the_positions_says_how_little_room_was_left(tmp_path):
    """A 3,000-character paste into GPT-2 was cut to its positions and generated one token; the only word was
    "the text was cut" (QA pass)."""
    lm = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    room = lm.cfg.max_len
    long = translate(lm, " ".join(["the cat sat on the mat"] * 40), DecodingSettings(max_new=5))
    assert long.truncated > 0 and long.trace.meta["prompt_tokens"] == room
    note = prompt_fills(long.trace, room)
    written = len(long.trace.out_tokens) - (room - 1)
    assert note == (f"The prompt fills the model's {room} positions: it had room to write {written} "
                    f"token{'' if written == 1 else 's'}. Shorten the text to see it continue.")
    short = translate(lm, "the cat sat on the mat", DecodingSettings(max_new=5))
    assert prompt_fills(short.trace, room) is None


def test_a_target_the_model_finds_far_too_unlikely_is_questioned(tiny_lm):
    """A target typed for one sentence stayed when the sentence changed and was shown as its translation: a given
    target whose tokens get a geometric mean p under 0.05 gets a note; the model's own output, none."""
    import math

    import numpy as np

    from model import translate as translate_seed
    from model.notes import UNLIKELY_TARGET, result_notes, unlikely_target
    forced = translate_seed(tiny_lm, "the cat sat", target="le chat").trace
    V = forced.arrays["logits"].shape[-1]

    def with_p(p: float):
        """The forced trace with logits that give each forced token probability p."""
        logits = np.zeros_like(forced.arrays["logits"])
        for step in range(forced.n_steps):
            logits[step, forced.out_id(step)] = math.log(p * (V - 1) / (1 - p))
        forced.arrays["logits"] = logits
        return forced

    assert unlikely_target(with_p(0.2)) is None
    note = unlikely_target(with_p(0.004))
    assert note.startswith("The model finds the given target very unlikely for this sentence (its tokens get "
                           "p = 0.004 each, on average)") and note in result_notes(forced, 64)
    assert unlikely_target(with_p(UNLIKELY_TARGET * 1.01)) is None
    greedy = translate_seed(tiny_lm, "the cat sat").trace                  # the model's own: no target, no note
    assert unlikely_target(greedy) is None
