"""Head ablation: a switched-off head's output slice is zero, the model runs on without it, and nothing else moves."""
from __future__ import annotations

import numpy as np
import pytest

from model import DecodingSettings, load, translate
from model.ablation import AblationError, expand, parse_spec
from model.decoding import decode_ids, encode_source, heads_off

SENTENCE = "the cat sat on the mat"


def test_the_ablated_heads_output_slice_is_zero_in_the_trace(tiny_lm):
    off = frozenset({("enc_self", 0, 1), ("cross", 1, 0)})
    trace = translate(tiny_lm, SENTENCE, ablations=off).trace
    assert np.all(trace["enc.0.self.head_out"][1] == 0)
    assert np.all(trace["dec.1.cross.head_out"][0] == 0)
    assert np.abs(trace["enc.0.self.head_out"][0]).max() > 0           # the other heads still speak
    assert np.abs(trace["dec.1.cross.head_out"][1]).max() > 0
    assert trace.meta["ablations"] == ["cross:2:1", "enc_self:1:2"]
    # the attention weights themselves are still computed (the head looks, it just is not heard)
    assert np.allclose(trace["enc.0.self.weights"][1].sum(-1), 1, atol=1e-5)


def test_ablating_nothing_changes_nothing_and_every_head_comes_back(tiny_lm):
    before = translate(tiny_lm, SENTENCE).trace
    translate(tiny_lm, SENTENCE, ablations=expand([("cross", None, None)], tiny_lm.schema))
    after = translate(tiny_lm, SENTENCE, ablations=frozenset()).trace
    assert before.arrays.keys() == after.arrays.keys()
    for key in before.arrays:
        assert np.array_equal(before[key], after[key]), key


def test_ablating_every_cross_attention_head_changes_the_translation():
    lm = load("en-fr")
    plain = translate(lm, "The red car is fast.")
    off = translate(lm, "The red car is fast.", ablations=expand([("cross", None, None)], lm.schema))
    assert off.text != plain.text
    for layer in range(lm.cfg.N_dec):
        assert np.all(off.trace[f"dec.{layer}.cross.head_out"] == 0)


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_cached_decoding_agrees_with_uncached_under_ablation(tiny_lm, method):
    src = encode_source(tiny_lm, SENTENCE).ids
    settings = DecodingSettings(method=method, beam=3, max_new=12)
    with heads_off(tiny_lm, frozenset({("dec_self", 0, 0), ("cross", 1, 1)})):
        cached = decode_ids(tiny_lm, src, settings, use_cache=True)
        uncached = decode_ids(tiny_lm, src, settings, use_cache=False)
    assert cached == uncached


def test_ablation_specs():
    assert parse_spec("cross:2:all") == ("cross", 2, None)
    for bad in ("cross:0:1", "cross:1", "cross:x:1", ":1:1"):
        with pytest.raises(AblationError):
            parse_spec(bad)


def test_expand_checks_the_schema(tiny_lm):
    schema = tiny_lm.schema
    assert expand([("enc_self", 2, None)], schema) == {("enc_self", 1, 0), ("enc_self", 1, 1)}
    assert len(expand([("cross", None, None)], schema)) == 2 * 2
    with pytest.raises(AblationError, match="unknown attention kind"):
        expand([("self", 1, 1)], schema)
    with pytest.raises(AblationError, match="no layer 3"):
        expand([("cross", 3, 1)], schema)
    # translate's heads count from 0, and so do its words: "no head 3" answered a head 2 (QA); a negative number
    # had passed as Python's last one, recorded as 'cross:0:0' (QA)
    for ablations, words in (({("cross", 0, 2)}, "cross: no head 2 counted from 0 (it has heads 0 to 1)"),
                             ({("cross", -1, 0)}, "cross: no layer -1 counted from 0 (it has layers 0 to 1)"),
                             ({("cross", "all", 0)}, "ablations: the layer of cross is 'all': a whole number counted "
                                                     "from 0, or None for every layer"),
                             (("cross", 0, 0), "ablations: a set of (kind, layer, head) triples, not one triple"),
                             ({("cross", 0)}, "ablations: ('cross', 0) is not a (kind, layer, head) triple")):
        with pytest.raises(AblationError) as e:
            translate(tiny_lm, SENTENCE, ablations=ablations)
        assert str(e.value).startswith(words)
    both = translate(tiny_lm, SENTENCE, ablations={("cross", None, 1)}).trace      # None: every layer
    assert sorted(both.meta["ablations"]) == ["cross:1:2", "cross:2:2"]


def test_the_mean_of_the_heads_on_names_how_many_and_one_alone_by_its_number():
    from model.ablation import mean_of_heads_on
    w = np.random.default_rng(0).random((4, 3, 3))
    mean, words = mean_of_heads_on(w, "cross", 0, {("cross", 0, 1)})
    np.testing.assert_allclose(mean, w[[0, 2, 3]].mean(0))
    assert words == "mean of the 3 heads on"
    alone, words = mean_of_heads_on(w, "cross", 0, {("cross", 0, h) for h in (0, 1, 3)})
    np.testing.assert_array_equal(alone, w[2])
    assert words == "the one head on, head\u00a03"                # not "mean of the 1 heads on" (QA)
    assert mean_of_heads_on(w, "cross", 0, set())[1] == "mean of heads"


def test_heads_off_are_named_by_layer_and_a_whole_layer_in_a_few_words():
    """QA as a teacher: an exported heatmap's title with a layer's 8 heads off read "Decoder masked self L5 H1,
    Decoder masked self L5 H2, …" over three lines. A layer's heads are named together, every one as "all 8"."""
    from model.ablation import describe
    schema = load("en-fr").schema
    kinds = {k: schema.kind(k).label for k in schema.kind_names}
    cross = next(k for k in kinds if k == "cross")
    other = next(k for k in kinds if k != "cross")
    whole = {(other, 4, h) for h in range(schema.n_heads)}
    assert describe(whole, schema) == f"8 heads off: {kinds[other]} L5 (all 8 heads)"
    some = {(cross, 0, 1), (cross, 0, 0), (other, 1, 3)}
    assert describe(some, schema) == f"3 heads off: {kinds[cross]} L1 H1, H2; {kinds[other]} L2 H4"
    assert describe(some | whole, schema, listed=1) == f"11 heads off: {kinds[cross]} L1 H1, H2; …"
    assert describe({(cross, 0, 0)}, schema) == f"1 head off: {kinds[cross]} L1 H1"
    assert describe({(cross, 0, 0), (cross, 1, 0)}) == "2 heads off: cross:1:1; cross:2:1"   # no schema: as typed
    assert describe(set(), schema) == ""
    # a kind's every head: in a few words too (Compare runs' title ran to five lines, QA as a researcher)
    every_cross = {(cross, layer, h) for layer in range(5) for h in range(schema.n_heads)}
    assert describe(every_cross | {(other, 1, 3)}, schema) == (
        f"41 heads off: {kinds[cross]}, every layer (all 40 heads); {kinds[other]} L2 H4")
    assert describe(every_cross - {(cross, 4, 7)}, schema, listed=None).count("(all 8 heads)") == 4
