"""Notes about a result that its reader should have, shared by the window and the commands."""
from __future__ import annotations

from .schema import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY

LONG_SOURCE = 20          # tokens: a source at least this long, translated into under half as many, gets a note


def stopped_early(trace) -> str | None:
    """A note when a translation is under half as many tokens as a long source: small models trained on short
    sentences often end a long one early, and a class should not take the half for the whole. None for a short
    source, a decoder-only or encoder-only model, a user's own target and a partial result."""
    n_src, n_out = len(trace.src_tokens), len(trace.out_tokens)
    if (trace.schema.layout != ENCODER_DECODER or trace.meta.get("mode") == "teacher-forced"
            or trace.meta.get("partial") or n_src < LONG_SOURCE or 2 * n_out >= n_src):
        return None
    tokens = "token" if n_out == 1 else "tokens"
    return (f"The translation is much shorter than the sentence ({n_out} {tokens} for {n_src}): this small model "
            "may have stopped early. Try the sentence in shorter parts.")


def prompt_fills(trace, max_len: int) -> str | None:
    """A note when a decoder-only model's prompt took (nearly) all of its positions, so that it could write
    (almost) nothing: a 3,000-character paste generated one token, and only "the text was cut" was said."""
    given = trace.prompt_rows()
    if trace.schema.layout != DECODER_ONLY or trace.meta.get("partial") or given < max_len - 2:
        return None
    written = max(0, len(trace.out_tokens) - given)
    tokens = "token" if written == 1 else "tokens"
    return (f"The prompt fills the model's {max_len} positions: it had room to write {written} {tokens}. "
            "Shorten the text to see it continue.")


def first_step(trace) -> int:
    """The output row a run is best opened at: a decoder-only model's first written token (the rows before it
    read the prompt), a masked-word model's first mask (the rows before it repeat their own tokens); 0 else."""
    last = max(trace.n_steps - 1, 0)
    if trace.schema.layout == DECODER_ONLY:
        return min(trace.prompt_rows(), last)
    mask = trace.schema.special.get("mask")
    if trace.schema.layout == ENCODER_ONLY and mask:
        rows = trace.tokens(trace.schema.output_stack.tokens)
        return min(rows.index(mask), last) if mask in rows else 0
    return 0
