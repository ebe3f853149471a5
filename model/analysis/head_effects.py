"""How much each attention head matters to a run's output: the head switched off alone (model/ablation.py), the
decoder forced through the same output, and the change in the log-probability of each output token.

    effect = mean over the output's tokens of  log p(token | head off) − log p(token | every head on)

in nats. Negative: the model is less sure of its own output without the head (the head helps write it); near 0:
the output does not lean on it. One forced pass a head, so a run's heads are measured in a few seconds for the
bundled models; an encoder-only model writes no output and has none.

Forcing the same output measures the head where the run's own choices stand; switched off in a free run, a head
can also change what comes after (translate --ablate shows that).
"""
from __future__ import annotations

from typing import Callable

import numpy as np



def cannot_measure(lm) -> str | None:
    """Why lm's heads have no effect to measure (an encoder-only model writes no output; a family that cannot switch
    heads off), else None."""
    from ..families import can_ablate, title, writes_text
    if writes_text(lm) is not None:       # (its words sent `metrics --effects` to "use `metrics`", QA)
        return (f"{lm.name} is an encoder-only model ({title(lm)}): it writes no output whose probability a head "
                "could change; its heads' attention metrics need no --effects")
    return None if can_ablate(lm) else f"heads of {lm.name} cannot be switched off"


def output_log_probs(trace, out_ids: list[int]) -> np.ndarray:
    """log p of each output token (out_ids) at the step that chose it, in nats."""
    first = trace.prompt_rows()                 # (a decoder-only model's output starts after its prompt's rows)
    return np.array([np.log(max(float(trace.probs(first + i)[t]), 1e-300)) for i, t in enumerate(out_ids)])


def output_ids(trace) -> list[int]:
    """The ids of a run's output (its translation, a given target, a decoder-only model's continuation), as the
    trace recorded them; [] for a trace without them."""
    ids = trace.arrays.get("out_ids")
    if ids is None:
        return []
    return [int(i) for i in np.asarray(ids)[trace.prompt_rows():]]


def head_effects(lm, trace, heads: list[tuple[str, int, int]] | None = None,
                 progress: Callable[[int, int], bool | None] | None = None) -> dict[tuple[str, int, int], float]:
    """{(kind, layer, head) 0-based: effect} for each head (default: every head of the model) of a traced run of lm
    (its text the trace's); in a run with heads switched off, each other head is switched off beside them (those
    have none). progress(done, total) may return False to stop: the heads measured so far."""
    from ..ablation import ablated_heads
    from ..families import positions_kept, translate
    if (why := cannot_measure(lm)) is not None:
        raise ValueError(why)
    out_ids = output_ids(trace)
    if not out_ids:
        return {}
    text = str(trace.meta.get("sentence", ""))
    base = output_log_probs(trace, out_ids)
    if heads is None:
        schema = lm.schema
        heads = [(k.name, layer, h) for k in schema.kinds for layer in range(schema.stack(k.stack).n_layers)
                 for h in range(schema.n_heads)]
    already = ablated_heads(trace)
    # the trace must be this model's run: en-fr's output forced through en-de's decoder gave an "effect" of
    # -10 nats with no word (QA). One forced pass with the trace's own heads off gives back its probabilities.
    # runs with the trace's positional switch, and puts the model's back after (translate's switch lasts from a
    # run on: a review found head_effects had left it changed)
    positional = trace.meta.get("positional")
    with positions_kept(lm):
        again = output_log_probs(translate(lm, text, forced_ids=out_ids, ablations=already,
                                           positional=positional).trace, out_ids)
        if not np.allclose(again, base, atol=1e-3, equal_nan=True):
            raise ValueError(f"the trace is not a run of {lm.name} as its weights are now (its output's "
                             "probabilities differ): trace the text with this model first")
        heads = [h for h in heads if h not in already]
        effects = {}
        for i, head in enumerate(heads):
            off = translate(lm, text, forced_ids=out_ids, ablations=already | {head}, positional=positional).trace
            effects[head] = float(np.mean(output_log_probs(off, out_ids) - base))
            if progress is not None and progress(i + 1, len(heads)) is False:
                break
        return effects
