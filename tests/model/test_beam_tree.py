"""The beam tree (model/beam_tree.py): recording the search changes nothing, every hypothesis' log-probability is the
decoder's own (a teacher-forced pass over the hypothesis gives the same numbers), the penalised scores follow the
length penalty, the chosen path is the output, fates follow the tree, and the tree survives a Trace file."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model import load, trace_run, translate
from model.beam_tree import (CHOSEN, FINISHED, GNMT, KEPT, META_KEY, PRUNED, BeamRecorder, BeamTree, BeamTreeError,
                             Penalty, format_tree, tree_of)
from model.config import DecodingSettings
from model.decoding import BEAM_ALPHA, beam_recorder, beam_search, encode_source
from model.trace import Trace
from model.transformer import EOS, PAD

SENTENCES = ["the cat sat on the mat", "a red car is fast", "where is the station", "we eat bread"]


def decoder_logps(lm, src_ids: list[int], prefix: list[int]) -> np.ndarray:
    """log p(prefix[t] | prefix[:t]) for every t, from one teacher-forced pass over the prefix: the log-softmax of
    the model's logits, <pad> left out as the decoder's search leaves it out (it never generates padding)."""
    logits = torch.tensor(trace_run(lm, src_ids, prefix)["logits"], dtype=torch.float64)     # (T, V)
    logits[:, PAD] = float("-inf")
    lp = torch.log_softmax(logits, -1)
    return np.array([float(lp[t, tok]) for t, tok in enumerate(prefix)])


def check_against_decoder(lm, src_ids: list[int], tree: BeamTree, out_ids: list[int]) -> None:
    assert tree.chosen > 0 and tree.prefix_ids(tree.chosen) == list(out_ids)
    for n in tree.nodes[1:]:
        prefix = tree.prefix_ids(n.id)
        lps = decoder_logps(lm, src_ids, prefix)
        assert n.logp == pytest.approx(lps[-1], abs=1e-4)
        assert n.cum == pytest.approx(lps.sum(), abs=1e-4)
        assert n.score == pytest.approx(lps.sum() / ((5 + len(prefix)) / 6) ** BEAM_ALPHA, abs=1e-4)
        assert n.step == len(prefix) - 1 and n.ended == (n.token == EOS)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_recording_changes_no_output(tiny_lm, k):
    for text in SENTENCES:
        src = encode_source(tiny_lm, text).ids
        plain = beam_search(tiny_lm.model, src, 12, k)
        rec = beam_recorder(tiny_lm, DecodingSettings(method="beam", beam=k))
        assert beam_search(tiny_lm.model, src, 12, k, tree=rec) == plain
        result = translate(tiny_lm, text, DecodingSettings(method="beam", beam=k, max_new=12))
        assert result.out_ids == plain
        tree = tree_of(result.trace)
        assert tree.width == k and tree.prefix_ids(tree.chosen) == plain


@pytest.mark.parametrize("k", [2, 4])
def test_every_score_is_the_decoders(tiny_lm, k):
    for text in SENTENCES[:2]:
        result = translate(tiny_lm, text, DecodingSettings(method="beam", beam=k, max_new=8))
        check_against_decoder(tiny_lm, encode_source(tiny_lm, text).ids, tree_of(result.trace), result.out_ids)


@pytest.fixture(scope="module")
def en_fr_apple():
    lm = load("en-fr")
    text = "The little girl is eating an apple."
    return lm, text, translate(lm, text, DecodingSettings(method="beam", beam=4))


def test_the_bundled_models_search_as_a_tree(en_fr_apple):
    lm, text, result = en_fr_apple
    tree = tree_of(result.trace)
    check_against_decoder(lm, encode_source(lm, text).ids, tree, result.out_ids)
    ended = [n for n in tree.nodes if n.ended]
    assert len(ended) >= 4 and all(n.token == EOS for n in ended)      # it stopped with k finished, fairseq's rule
    # the output is the finished hypothesis of the best penalised score, not the best log-probability
    assert max(ended, key=lambda n: n.score).id == tree.chosen
    assert tree.nodes[tree.chosen].score == pytest.approx(Penalty(GNMT, BEAM_ALPHA)(tree.nodes[tree.chosen].cum,
                                                                                  len(result.out_ids)), abs=1e-9)
    # at most k hypotheses stay in the beam at a step; a pruned one has no surviving descendant
    for step in range(tree.n_steps):
        assert sum(1 for n in tree.nodes[1:] if n.step == step and not n.ended) <= 4
    for n in tree.nodes[1:]:
        kids = tree.children(n.id)
        if n.fate == PRUNED:
            assert all(c.fate == PRUNED for c in kids) and not n.ended
        if n.fate == KEPT and not kids:
            assert n.step == tree.n_steps - 1                  # still in the beam when the search stopped
    assert [n.fate for n in tree.path(tree.chosen)] == [CHOSEN] * len(result.out_ids)
    assert {n.fate for n in tree.nodes[1:]} == {CHOSEN, FINISHED, KEPT, PRUNED}


def test_the_tree_survives_a_trace_file(en_fr_apple, tmp_path):
    _, _, result = en_fr_apple
    result.trace.save_npz(tmp_path / "t.npz")
    again = tree_of(Trace.load_npz(tmp_path / "t.npz"))
    tree = tree_of(result.trace)
    assert again.to_dict() == tree.to_dict() and again.nodes[5].text == tree.nodes[5].text
    text = format_tree(again)
    assert len(text.splitlines()) == len(tree.nodes) and "◀ chosen" in text


def test_no_tree_without_a_search(tiny_lm):
    assert tree_of(translate(tiny_lm, "the cat", DecodingSettings()).trace) is None
    assert META_KEY not in translate(tiny_lm, "the cat", DecodingSettings(method="beam"), target="le chat").trace.meta


@pytest.mark.parametrize("damage", [
    lambda d: d.pop("nodes"),
    lambda d: d["nodes"]["parent"].__setitem__(2, 7),
    lambda d: d["nodes"]["fate"].__setitem__(1, "lost"),
    lambda d: d["nodes"]["cum"].pop(),
    lambda d: d.__setitem__("chosen", 10_000),
    lambda d: d["penalty"].__setitem__("kind", "none"),
])
def test_a_damaged_tree_is_one_clear_error(en_fr_apple, damage):
    data = tree_of(en_fr_apple[2].trace).to_dict()
    damage(data)
    with pytest.raises(BeamTreeError, match="^the beam tree cannot be read") as e:
        BeamTree.from_dict(data)
    assert "\n" not in str(e.value)


def test_fates_of_a_hand_made_search():
    """<s> → a (kept) → b (finished, chosen) ; <s> → c (pruned at step 1) ; a → d (still in the beam at the end)."""
    rec = BeamRecorder(2, Penalty(GNMT, 0.6), 0, "<s>", str, lambda ids: " ".join(map(str, ids)))
    a = rec.add([], 10, math.log(0.6), 0)
    c = rec.add([], 11, math.log(0.3), 0)
    b = rec.add([10], EOS, math.log(0.5), 1, ended=True)
    d = rec.add([10], 12, math.log(0.4), 1)
    tree = rec.done([10, EOS])
    fates = {n.id: n.fate for n in tree.nodes}
    assert fates == {0: CHOSEN, a: CHOSEN, b: CHOSEN, c: PRUNED, d: KEPT}
    assert tree.nodes[b].cum == pytest.approx(math.log(0.3))
    assert tree.nodes[b].score == pytest.approx(math.log(0.3) / (7 / 6) ** 0.6)
    assert rec.done([99]).chosen == -1 and "not among" in rec.done([99]).note


class MarkovStub:
    """A decoder whose next-token log-probabilities depend on the last token alone (a table), for beam searches
    whose every step is known: decode gives the tokens one-hot, the generator reads the table's rows."""

    def __init__(self, table: dict[int, dict[int, float]], vocab: int = 8):
        self.logp = torch.full((vocab, vocab), -50.0)
        for last, row in table.items():
            for token, lp in row.items():
                self.logp[last, token] = lp

    def encode(self, src):
        return torch.zeros(1, src.shape[1], 1), torch.ones(1, 1, src.shape[1], dtype=torch.bool)

    def decode(self, tgt, memory, src_mask, cache=None):
        return torch.nn.functional.one_hot(tgt, self.logp.shape[0]).float()

    def generator(self, y):
        return y @ self.logp


def test_an_end_ranked_below_the_beam_does_not_finish_a_hypothesis():
    """QA: five ends ranked k+1…2k of the 2k candidates finished the search while the greedy path, alive at log p
    −0.4, never ended: beam 5 wrote a worse translation than greedy. Only ends within the k best count (fairseq,
    transformers). Here (k = 2) B→</s> ranks 2nd and A→</s> 3rd at step 1: A C </s> (−0.3) must win."""
    from model.transformer import BOS, EOS
    A, B, C, X = 4, 5, 6, 7
    stub = MarkovStub({BOS: {A: -0.1, B: -2.5}, A: {C: -0.1, EOS: -6.0}, B: {EOS: -0.2, X: -9.0},
                       C: {EOS: -0.1}, X: {EOS: -0.1}})
    assert beam_search(stub, [A, EOS], max_new=5, k=2, use_cache=False) == [A, C, EOS]
