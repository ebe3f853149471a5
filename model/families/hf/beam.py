"""transformers' beam search recorded as a BeamTree (model/beam_tree.py), without changing it: a logits processor
that only watches. At every step `generate` hands it the hypotheses in the beam (rows of ids) and their next-token
log-probabilities; it ranks their continuations as the search does (the best 2k of log p(prefix) + log p(token)),
sees which of them are in the beam at the next step (kept), and takes the complete ones among the best k
(finished: </s>, or every continuation at the length limit). The decoder's own log-probabilities come from
generate's raw logits (output_logits); where the model's generation rules changed one (a </s> forced at the length
limit), the node keeps the value the search used as well."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import LogitsProcessor, LogitsProcessorList

from ...beam_tree import POWER, BeamRecorder, BeamTree, Penalty

NEVER = -1e8        # generate's placeholders for empty beams score -1e9


@dataclass
class Candidate:
    prefix: tuple           # the hypothesis it continues (generated ids)
    token: int
    logp: float             # the log-probability the search used (after the generation rules)
    row: int                # its hypothesis' row in this step's batch
    rank: int               # among the step's continuations, best first
    total: float            # the search's log p(prefix + token), float32 as generate sums it
    ended: bool
    kept: bool = False
    finished: bool = False


class BeamObserver(LogitsProcessor):
    """Pass in generate's logits_processor (after the model's own rules: custom processors run last)."""

    def __init__(self, width: int, eos: set[int], max_new: int):
        self.width, self.eos, self.max_new = width, eos, max_new
        self.prompt_len: int | None = None
        self.steps: list[list[Candidate]] = []
        self.totals: dict[tuple, float] = {(): 0.0}      # the search's log p of each hypothesis in the beam

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        ids = input_ids.tolist()
        if self.prompt_len is None:
            self.prompt_len = len(ids[0])
        rows = [tuple(r[self.prompt_len:]) for r in ids]
        if self.steps:
            self._settle(set(rows))
        first: dict[tuple, int] = {}                        # one row per hypothesis (the first beams are copies)
        for i, r in enumerate(rows):
            if r in self.totals and r not in first:
                first[r] = i
        idx = list(first.values())
        step = len(rows[0])
        V = scores.shape[-1]
        logp = scores[idx].to(torch.float32)                                               # (b, V)
        total = (torch.tensor([self.totals[rows[i]] for i in idx], dtype=torch.float32)[:, None] + logp).view(-1)
        top = torch.topk(total, min(2 * self.width, total.numel()))
        cands = []
        for rank, (s, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            if s < NEVER:
                break
            j, tok = divmod(flat, V)
            cands.append(Candidate(rows[idx[j]], tok, float(logp[j, tok]), idx[j], rank, s,
                                   tok in self.eos or step + 1 >= self.max_new))
        self.steps.append(cands)
        return scores

    def _settle(self, beam: set | None) -> None:
        """The last step's fates: kept = in the beam now (beam: the next step's hypotheses; None at the end: the
        best k that did not end), finished = complete and among the best k."""
        alive = 0
        for c in self.steps[-1]:
            ids = c.prefix + (c.token,)
            c.finished = c.ended and c.rank < self.width
            c.kept = not c.ended and (ids in beam if beam is not None else alive < self.width)
            alive += c.kept
            if c.kept:
                self.totals[ids] = c.total

    def tree(self, recorder: BeamRecorder, output_ids: list[int], raw_logits=None) -> BeamTree:
        """The tree of the search just run; raw_logits: generate's output_logits (one (rows, V) per step)."""
        if self.steps:
            self._settle(None)
        for step, cands in enumerate(self.steps):
            raw = None
            if raw_logits is not None and step < len(raw_logits):
                raw = torch.log_softmax(raw_logits[step].to(torch.float32), -1)
            for c in cands:
                if not (c.kept or c.finished):
                    continue
                logp = float(raw[c.row, c.token]) if raw is not None else c.logp
                rule = c.logp if abs(c.logp - logp) > 1e-5 else None
                recorder.add(c.prefix, c.token, logp, step, ended=c.finished, rule_logp=rule)
        return recorder.done(output_ids)


def observer_kwargs(observer: BeamObserver) -> dict:
    """generate's arguments that let the observer watch and give back the raw logits; the search is the same."""
    return dict(logits_processor=LogitsProcessorList([observer]), return_dict_in_generate=True, output_logits=True)


def length_penalty(model) -> Penalty:
    """The length penalty generate uses for this model (its generation config's, 1.0 by default)."""
    value = getattr(getattr(model, "generation_config", None), "length_penalty", None)
    return Penalty(POWER, 1.0 if value is None else float(value))
