"""Heads switched off in Hugging Face models, as in the seed models (model/ablation.py): the head's slice of the
heads' outputs is zero before W_O. Checked against transformers' own model with that slice of W_O's weights zeroed
(the same computation, done to the weights), on every family; the trace says which heads were off."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import can_ablate, family, translate  # noqa: E402
from test_hf_families import SENTENCE, _open as _opened  # noqa: E402 (the same tiny models, opened once)


def _open(name, tmp_path_factory):
    """(folder, the app's model) of a tiny model of the family."""
    return _opened(name, tmp_path_factory)[1:3]


def _zero_in_weights(reference, lm, kind: str, layer: int, head: int) -> None:
    """Zero W_O's weights that read head `head` of (kind, layer) in transformers' own copy of the model."""
    mm = family(lm.family).model_map(reference)
    k = lm.schema.kind(kind)
    part = next(sm for sm in mm.stacks if sm.key == k.stack).layers[layer][k.sublayer]
    w = part.out.weight
    reads_rows = type(part.out).__name__ == "Conv1D"           # GPT-2's Conv1D: weight (in, out); Linear: (out, in)
    width = (w.shape[0] if reads_rows else w.shape[1]) // lm.schema.n_heads
    with torch.no_grad():
        if reads_rows:
            w[head * width:(head + 1) * width] = 0
        else:
            w[:, head * width:(head + 1) * width] = 0


@pytest.mark.parametrize("name", hf_tiny.FAMILIES)
def test_a_head_off_is_the_model_without_its_share_of_w_o(name, tmp_path_factory):
    folder, lm = _open(name, tmp_path_factory)
    assert can_ablate(lm)
    kind = lm.schema.kind_names[-1]                                # cross-attention where there is one
    off = frozenset({(kind, 1, 2), (kind, 0, 0)})
    result = translate(lm, SENTENCE, DecodingSettings(max_new=4), ablations=off)
    t = result.trace
    k = lm.schema.kind(kind)
    for layer, head in ((1, 2), (0, 0)):
        head_out = t.get(k.stack, layer, k.sublayer, "head_out")
        assert not head_out[head].any() and head_out[(head + 1) % lm.schema.n_heads].any()
    assert sorted(t.meta["ablations"]) == sorted([f"{kind}:2:3", f"{kind}:1:1"])
    reference = hf_tiny.reference_model(name, folder)
    for layer, head in ((1, 2), (0, 0)):
        _zero_in_weights(reference, lm, kind, layer, head)
    ids = list(lm.tokenizer(SENTENCE)["input_ids"])
    with torch.no_grad():
        if lm.schema.layout == "encoder-decoder":
            start = lm.model.generation_config.decoder_start_token_id
            out = reference(input_ids=torch.tensor([ids]),
                            decoder_input_ids=torch.tensor([[start] + result.out_ids[:-1]]), output_attentions=True)
        elif lm.schema.layout == "decoder-only":
            out = reference(input_ids=torch.tensor([(ids + result.out_ids)[:-1]]), output_attentions=True)
        else:
            out = reference(input_ids=torch.tensor([ids]), output_attentions=True)
    np.testing.assert_allclose(t["logits"], out.logits[0].numpy(), atol=1e-4)


@pytest.mark.parametrize("name", ["marian", "gpt2"])
def test_nothing_off_changes_nothing_and_every_head_off_changes_the_output(name, tmp_path_factory):
    _, lm = _open(name, tmp_path_factory)
    settings = DecodingSettings(max_new=5)
    plain = translate(lm, SENTENCE, settings)
    same = translate(lm, SENTENCE, settings, ablations=frozenset())
    assert same.out_ids == plain.out_ids and np.array_equal(same.trace["logits"], plain.trace["logits"])
    kind = lm.schema.kind_names[-1]
    every = frozenset((kind, layer, head) for layer in range(lm.schema.n_layers) for head in range(lm.schema.n_heads))
    silenced = translate(lm, SENTENCE, settings, ablations=every)
    assert not np.allclose(silenced.trace["logits"][0], plain.trace["logits"][0], atol=1e-3)
    again = translate(lm, SENTENCE, settings)                      # every head is on again after the run
    assert again.out_ids == plain.out_ids and np.array_equal(again.trace["logits"], plain.trace["logits"])
