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
