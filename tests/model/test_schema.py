"""The model schema: the seed transformer as one instance, three other shapes, synthetic traces that obey them."""
from __future__ import annotations

import json

import numpy as np
import pytest

from model.equations import attention_equation, sublayer_input
from model.families.shapes import decoder_only
from model.schema import OUTPUT, RMS_NORM, Schema, Stage
from model.trace import Trace


def test_the_seed_schema_describes_the_seed_model(tiny_lm):
    sc = tiny_lm.schema
    assert sc.family == "seed" and sc.layout == "encoder-decoder"
    assert [st.key for st in sc.stacks] == ["enc", "dec"]
    assert [(st.n_layers, [s.key for s in st.sublayers]) for st in sc.stacks] == [(2, ["self", "ffn"]),
                                                                                 (2, ["self", "cross", "ffn"])]
    assert sc.kind_names == ("enc_self", "dec_self", "cross")
    assert (sc.n_heads, sc.n_kv_heads, sc.d_model, sc.d_k) == (tiny_lm.cfg.h, tiny_lm.cfg.h, 16, 8)
    stages = sc.stages()
    assert len(stages) == 1 + 2 * 2 + 1 + 2 * 3 + 1 and stages[0] == Stage("src_embed") and stages[-1] == Stage(OUTPUT)
    assert sc.title(Stage("dec", 1, "cross")) == "Decoder cross-attention + Add & Norm — layer 2"
    assert sc.kind("cross").title == "Cross-attention" and sc.kind("dec_self").file == "decoder_self"
    assert sc.kind("cross").queries == "tgt" and sc.kind("cross").keys == "src"
    for stage in stages:                              # every stage has a caption and an equation
        title, text, equation = sc.caption(stage)
        assert title and len(text) > 20 and "=" in equation


def test_a_seed_model_that_does_not_scale_its_scores_has_no_sqrt_dk_in_its_captions():
    """The seed example (scale_scores false, as the note) read softmax(QKᵀ / √d_k) V in its captions while the Math
    page said "not divided by √d_k" (QA)."""
    from model.config import ModelConfig
    from model.families.seed_schema import schema
    for scaled in (True, False):
        sc = schema(ModelConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, h=2, d_ff=32, N_enc=1, N_dec=1,
                                scale_scores=scaled))
        equations = [sc.caption(Stage(st.key, 0, sub.key))[2] for st in sc.stacks for sub in st.sublayers
                     if sub.kind.startswith("attention")]
        assert len(equations) == 3 and all(("/ √d_k" in eq) == scaled for eq in equations), equations
        # said, not only left out (a student read softmax(QKᵀ) V as a typo of the paper's formula: QA)
        assert all(("the scores not divided by √d_k" in eq) != scaled for eq in equations), equations


@pytest.mark.parametrize("name", ["decoder-only", "encoder-only", "encoder-decoder"])
def test_three_shapes_round_trip_through_json_and_npz(tmp_path, shapes, name):
    from model.synthetic import synthetic_trace
    sc = shapes[name]
    assert Schema.from_dict(json.loads(json.dumps(sc.to_dict()))) == sc
    t = synthetic_trace(sc)
    t.save_npz(tmp_path / "t.npz")
    back = Trace.load_npz(tmp_path / "t.npz")
    assert back.schema == sc and sorted(back.arrays) == sorted(t.arrays)
    # saved before stacks had their letter (the bundled start frames): the paper's decoder's is y, the others' x
    older = json.loads(json.dumps(sc.to_dict()))
    for st in older["stacks"]:
        del st["stream"]
    assert Schema.from_dict(older) == sc and [st.stream for st in sc.stacks] == (
        ["x", "y"] if name == "encoder-decoder" else ["x"])


def test_the_attention_equation_adds_the_output_projections_bias_where_the_model_has_one(tiny_lm):
    """The caption read LayerNorm(x + Concat(head₁…head_h) W_O) while the seed model adds b_O (QA)."""
    from model.families.shapes import encoder_only
    assert "W_O + b_O)" in tiny_lm.schema.caption(Stage("enc", 0, "self"))[2]
    assert tiny_lm.model.encoder[0].self_attn.W_O.bias is not None
    unbiased = encoder_only("t", 1, 16, 2, 32, biases=False)
    assert "b_O" not in unbiased.caption(Stage("enc", 0, "self"))[2]


@pytest.mark.parametrize("name", ["decoder-only", "encoder-only", "encoder-decoder"])
def test_an_embeddings_caption_with_the_positions_off_adds_none(shapes, name):
    """With Positional encoding unticked the caption went on saying "x_i = √d_model · E[token_i] + PE(i)" (QA)."""
    sc = shapes[name]
    for st in sc.stacks:
        on, off = sc.caption(Stage(st.embed_stage)), sc.caption(Stage(st.embed_stage), positional=False)
        if sc.positions in ("sinusoidal", "learned"):
            assert ("PE(" in on[2] or "P[" in on[2]) and "PE(" not in off[2] and "P[" not in off[2]
            assert "switched off" in off[1] + off[2] and off[0].endswith("(positions off)")
        else:                                         # rotary positions are not added to the embedding
            assert off == on
    # a schema written before these words were: the caption it has
    data = sc.to_dict()
    for st in data["stacks"]:
        del st["embed_caption_off"], st["embed_equation_off"]
    old, first = Schema.from_dict(data), Stage(sc.stacks[0].embed_stage)
    assert old.caption(first, positional=False) == old.caption(first)


def test_decoder_only_shape_has_one_causal_kind_and_shared_key_value_heads(shapes):
    sc = shapes["decoder-only"]
    assert sc.kind_names == ("self",) and sc.kind("self").causal and sc.norm == RMS_NORM
    assert [sc.kv_head(h) for h in range(4)] == [0, 0, 1, 1]
    assert "2 query heads share each key/value head" in sc.caption(Stage("dec", 0, "self"))[2]
    assert "RMSNorm" in sc.caption(Stage("dec", 0, "self"))[2] and "R(Q)" in sc.caption(Stage("dec", 0, "self"))[2]
    assert all(s.stack != "src_embed" for s in sc.stages())


def test_invalid_schemas_are_refused():
    with pytest.raises(ValueError, match="cannot share"):
        decoder_only("x", 2, 32, 4, 64, n_kv_heads=3)
    with pytest.raises(ValueError, match="invalid model schema"):
        Schema.from_dict({"family": "x"})


def test_synthetic_traces_obey_their_schema(shaped_trace):
    t, sc = shaped_trace, shaped_trace.schema
    for k in sc.kinds:
        rows, cols = t.axis_tokens(k.name)
        for layer in range(sc.stack(k.stack).n_layers):
            w, m = t.attention(k.name, layer), t.mask(k.name, layer)
            assert w.shape == (sc.n_heads, len(rows), len(cols))
            np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)
            assert not w[:, ~m].any()
            assert t.get(k.stack, layer, k.sublayer, "k").shape[0] == sc.n_kv_heads
    # the math inspector's numbers, grouped-query heads included: Σ α v equals the head output
    k = sc.kinds[-1]
    for head in range(sc.n_heads):
        eq = attention_equation(t, k.name, sc.stack(k.stack).n_layers - 1, head, 1)
        np.testing.assert_allclose(eq.alpha @ eq.V, eq.output, rtol=1e-4, atol=1e-5)
    st = sc.stacks[-1]
    assert sublayer_input(t, st.key, 0, st.sublayers[0].key) is t[f"{st.tokens}.x"]
    if sc.has_output:
        assert t.n_steps == t["logits"].shape[0] == len(t.out_tokens)


@pytest.mark.parametrize("tied", [False, True])
def test_the_output_equation_says_what_the_output_layer_is(tied):
    """Tied to the target embedding (the paper's sharing): E_yᵀ and no bias, as the generator has none; else
    W_out + b_out. Read off the model's own generator, not a copy of the rule."""
    from dataclasses import replace
    from model.config import ModelConfig
    from model.families.seed_schema import schema
    from model.transformer import Transformer
    cfg = replace(ModelConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=8, h=2, d_ff=16, N_enc=1, N_dec=1),
                  tie_output=tied)
    model = Transformer(cfg)
    eq = schema(cfg).output_equation
    assert ("+ b_out" in eq) == (model.generator.bias is not None)
    assert ("E_yᵀ" in eq) == (model.generator.weight is model.tgt_embed.weight)


def test_the_one_line_description_counts_heads_in_the_singular_too():
    """The status bar read "1+1 layers, 1 heads, d_model 2" for the notes' worked example."""
    from model.families import load
    assert load("seed-example").schema.describe() == "1+1 layers, 1 head, d_model 2"
    assert load("en-fr").schema.describe() == "5+5 layers, 8 heads, d_model 256"
