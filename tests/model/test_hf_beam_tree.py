"""The beam tree of transformers' own beam search (model/families/hf/beam.py), on tiny random models saved with
save_pretrained: recording changes no output, the chosen path is generate's output, the chosen hypothesis' score is
generate's own sequence score, and every hypothesis' log-probability is the model's (a teacher-forced pass over it
gives the same numbers)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.beam_tree import tree_of  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, translate  # noqa: E402
from model.families.hf.tracing import generation_kwargs  # noqa: E402

TEXTS = ["the cat sat on the mat", "a red car is fast"]
_OPENED: dict = {}


def open_tiny(family: str, tmp_path_factory):
    """(the app's model, transformers' own copy) of a tiny random model of the family."""
    if family not in _OPENED:
        folder = hf_tiny.build(family, tmp_path_factory.mktemp(family))
        _OPENED[family] = load(folder), hf_tiny.reference_model(family, folder)
    return _OPENED[family]


def generate_plain(model, lm, ids: list[int], k: int, max_new: int):
    """generate's beam search as transformers runs it, without the app: (sequence, its score)."""
    x = torch.tensor([ids])
    with torch.no_grad():
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), return_dict_in_generate=True,
                             output_scores=True, **generation_kwargs(
                                 DecodingSettings(method="beam", beam=k), max_new, lm))
    return out.sequences[0].tolist(), float(out.sequences_scores[0])


def model_logps(lm, ids: list[int], prefix: list[int]) -> list[float]:
    """log p(prefix[t] | the sentence, prefix[:t]) from one teacher-forced pass of the model (log-softmax of its
    logits)."""
    with torch.no_grad():
        if lm.schema.layout == "encoder-decoder":
            start = lm.model.config.decoder_start_token_id
            logits = lm.model(input_ids=torch.tensor([ids]),
                              decoder_input_ids=torch.tensor([[start] + prefix])).logits[0, :-1]
        else:
            logits = lm.model(input_ids=torch.tensor([ids + prefix])).logits[0, len(ids) - 1: -1]
    lp = torch.log_softmax(logits.double(), -1)
    return [float(lp[t, tok]) for t, tok in enumerate(prefix)]


@pytest.mark.parametrize("family,k", [("marian", 4), ("t5", 3), ("gpt2", 4), ("llama", 2)])
def test_the_tree_of_generates_beam_search(family, k, tmp_path_factory):
    lm, reference = open_tiny(family, tmp_path_factory)
    for text in TEXTS:
        max_new = 7
        result = translate(lm, text, DecodingSettings(method="beam", beam=k, max_new=max_new))
        tree = tree_of(result.trace)
        ids = list(lm.tokenizer(text)["input_ids"])
        seq, seq_score = generate_plain(reference, lm, ids, k, max_new)
        generated = seq[1:] if family in hf_tiny.ENCODER_DECODER else seq[len(ids):]
        eos = lm.tokenizer.eos_token_id
        generated = generated[: generated.index(eos) + 1] if eos in generated else generated
        assert result.out_ids == generated                      # recording changed nothing
        assert tree.chosen > 0 and tree.prefix_ids(tree.chosen) == result.out_ids and not tree.note
        chosen = tree.nodes[tree.chosen]
        assert chosen.score == pytest.approx(seq_score, abs=1e-4)   # generate's own score of its output
        for n in tree.nodes[1:]:
            prefix = tree.prefix_ids(n.id)
            lps = model_logps(lm, ids, prefix)
            assert n.logp == pytest.approx(lps[-1], abs=1e-4)
            assert n.cum == pytest.approx(sum(lps), abs=1e-4)
            assert n.score == pytest.approx(tree.search_cum(n.id) / len(prefix) ** tree.penalty.value, abs=1e-4)
        for step in range(tree.n_steps):
            assert sum(1 for n in tree.nodes[1:] if n.step == step and not n.ended) <= k
        # a hypothesis traced as it is (what a click in the beam tree shows): the decoder's own numbers again
        node = max(tree.nodes[1:], key=lambda n: (n.fate != "chosen", n.step))
        prefix = tree.prefix_ids(node.id)
        forced = translate(lm, text, forced_ids=prefix)
        assert forced.out_ids == prefix and forced.trace.out_tokens[-len(prefix):] == lm.tgt_tok.pieces(prefix)
        lp = torch.log_softmax(torch.tensor(forced.trace["logits"][-len(prefix):], dtype=torch.float64), -1)
        assert [float(lp[t, tok]) for t, tok in enumerate(prefix)] == pytest.approx(model_logps(lm, ids, prefix),
                                                                                   abs=1e-5)
