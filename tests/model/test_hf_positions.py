"""What a Hugging Face model uses for positions is in its Trace, taken from the model's own modules: the rotary
frequencies θ_i (the rotary module's inv_freq, rope scaling included) and the cos/sin tables it multiplied q and k
by; T5's relative position bias per head (compute_bias for this input's lengths) and its buckets. The positions
switch runs the model as if its position weights were zero, for every family."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, translate  # noqa: E402

SENTENCE = "the cat sat on the mat"
ROTARY = {      # a Llama with rope_theta and linear scaling, a Qwen2 with YaRN (its cos and sin are scaled too)
    "llama": dict(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 500.0}),
    "qwen2": dict(rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 1000.0,
                                   "original_max_position_embeddings": 16}),
}
_OPENED: dict = {}


def _open(family, tmp_path_factory, **config):
    key = (family, tuple(sorted(config)))
    if key not in _OPENED:
        folder = hf_tiny.build(family, tmp_path_factory.mktemp(family), **config)
        lm = load(folder)
        _OPENED[key] = folder, lm, translate(lm, SENTENCE, DecodingSettings(max_new=5))
    return _OPENED[key]


@pytest.fixture(params=sorted(ROTARY))
def rotary(request, tmp_path_factory):
    return (request.param, *_open(request.param, tmp_path_factory, **ROTARY[request.param]))


@pytest.fixture
def t5(tmp_path_factory):
    return _open("t5", tmp_path_factory)


def test_the_rotary_frequencies_are_the_modules_own(rotary):
    family, folder, lm, result = rotary
    t, sc = result.trace, result.trace.schema
    keys = sc.rotary_keys(sc.stacks[0].key)
    ref = hf_tiny.reference_model(family, folder).model.rotary_emb
    assert lm.model.config.num_key_value_heads == 2 and sc.n_kv_heads == 2     # grouped-query heads
    theta = t[keys.theta]
    assert theta.shape == (sc.d_k // 2,)
    np.testing.assert_array_equal(theta, lm.model.model.rotary_emb.inv_freq.numpy())
    np.testing.assert_array_equal(theta, ref.inv_freq.numpy())
    base = ROTARY[family]["rope_parameters"]["rope_theta"]
    plain = 1.0 / base ** (np.arange(0, sc.d_k, 2) / sc.d_k)
    assert not np.allclose(theta, plain, rtol=1e-3)          # the scaling the module applies is in it
    if family == "llama":
        np.testing.assert_allclose(theta, plain / 2, rtol=1e-6)


def test_the_rotary_tables_are_what_the_module_gave_for_these_positions(rotary):
    family, folder, lm, result = rotary
    t, sc = result.trace, result.trace.schema
    keys = sc.rotary_keys(sc.stacks[0].key)
    T = len(t.tgt_tokens)
    np.testing.assert_array_equal(t[keys.positions], np.arange(T))
    ref = hf_tiny.reference_model(family, folder).model.rotary_emb
    with torch.no_grad():
        cos, sin = ref(torch.zeros(1, T, sc.d_model), torch.arange(T)[None])
    half = sc.d_k // 2
    np.testing.assert_allclose(t[keys.cos], cos[0, :, :half].numpy(), atol=1e-7)
    np.testing.assert_allclose(t[keys.sin], sin[0, :, :half].numpy(), atol=1e-7)
    angle = np.arange(T)[:, None] * t[keys.theta].astype(np.float64)[None, :]
    scaling = float(ref.attention_scaling)
    assert (scaling != 1.0) == (family == "qwen2")
    np.testing.assert_allclose(t[keys.cos], np.cos(angle) * scaling, atol=1e-5)
    np.testing.assert_allclose(t[keys.sin], np.sin(angle) * scaling, atol=1e-5)


def test_t5s_bias_per_head_is_compute_bias_for_these_lengths(t5):
    folder, lm, result = t5
    t, sc = result.trace, result.trace.schema
    ref = hf_tiny.reference_model("t5", folder)
    stacks = {"enc_self": ref.encoder, "dec_self": ref.decoder}
    assert sc.bias_keys("cross") is None and "cross" in sc.kind_names        # T5's cross-attention has none
    for kind, stack in stacks.items():
        keys = sc.bias_keys(kind)
        rows, cols = t.axis_tokens(kind)
        attn = stack.block[0].layer[0].SelfAttention
        with torch.no_grad():
            expected = attn.compute_bias(len(rows), len(cols))[0].numpy()             # (H, Tq, Tk)
        assert expected.shape == (4, len(rows), len(cols))
        np.testing.assert_array_equal(t[keys.bias], expected)
        offsets = torch.arange(len(cols))[None, :] - torch.arange(len(rows))[:, None]
        buckets = attn._relative_position_bucket(offsets, bidirectional=not attn.is_decoder,
                                                 num_buckets=attn.relative_attention_num_buckets,
                                                 max_distance=attn.relative_attention_max_distance)
        np.testing.assert_array_equal(t[keys.buckets], buckets.numpy())
        weight = attn.relative_attention_bias.weight.detach().numpy()              # (buckets, H)
        np.testing.assert_array_equal(t[keys.bias], weight[t[keys.buckets]].transpose(2, 0, 1))
        k = sc.kind(kind)
        for layer in range(sc.stack(k.stack).n_layers):       # computed in layer 1, added in every layer, unscaled
            g = lambda name: t.get(k.stack, layer, k.sublayer, name).astype(np.float64)  # noqa: E731
            np.testing.assert_allclose(g("scores"), g("q") @ g("k").transpose(0, 2, 1) + t[keys.bias], atol=1e-4)


def _without_positions(model) -> None:
    """Zero the weights and buffers a model's positions come from (so q and k are not rotated: inv_freq = 0)."""
    names = ("wpe", "position_embeddings", "embed_positions", "relative_attention_bias", "inv_freq")
    with torch.no_grad():
        for name, t in [*model.named_parameters(), *model.named_buffers()]:
            if any(n in name for n in names):
                t.zero_()


@pytest.mark.parametrize("family", hf_tiny.FAMILIES)
def test_positions_off_runs_the_model_without_its_positions(family, tmp_path_factory, monkeypatch):
    """The switch: learned and sinusoidal position embeddings are 0, rotary rotates by nothing, T5's bias is 0; the
    generated tokens, every attention weight and the logits are the model's with those weights zeroed."""
    folder, lm, on = _open(family, tmp_path_factory)
    off = translate(lm, SENTENCE, DecodingSettings(max_new=5), positional=False, previous=on)
    try:
        again = translate(lm, SENTENCE, DecodingSettings(max_new=5), previous=off)      # stays off until switched
        back = translate(lm, SENTENCE, DecodingSettings(max_new=5), positional=True, previous=again)
    finally:
        lm.positional = True
    t = off.trace
    assert t.meta["positional"] is False and on.trace.meta["positional"] is True
    assert again.trace.arrays is t.arrays and back.trace.meta["positional"] is True
    for st in t.schema.stacks:
        assert not t[f"{st.tokens}.pe"].any()
        assert on.trace[f"{st.tokens}.pe"].any() == (t.schema.positions in ("learned", "sinusoidal"))
    ref = hf_tiny.reference_model(family, folder)
    _without_positions(ref)
    tok = lm.tokenizer
    ids = torch.tensor([tok(SENTENCE)["input_ids"]])
    if family not in hf_tiny.ENCODER_ONLY:                     # BERT generates nothing
        with torch.no_grad():
            seq = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=5, num_beams=1,
                               do_sample=False, pad_token_id=tok.pad_token_id if tok.pad_token_id is not None
                               else tok.eos_token_id)[0].tolist()
        new = seq[1:] if family in hf_tiny.ENCODER_DECODER else seq[ids.shape[1]:]
        assert new[: len(off.out_ids)] == off.out_ids
    monkeypatch.setattr(hf_tiny, "reference_model", lambda *a: ref)     # the reference, its positions zeroed
    expected, logits = hf_tiny.reference(family, folder, off)
    changed = False
    for kind, layers in expected.items():
        for layer, a in enumerate(layers):
            np.testing.assert_allclose(t.attention(kind, layer), a, atol=1e-5)
            changed |= hf_tiny.differ(t.attention(kind, layer), on.trace.attention(kind, layer))
    np.testing.assert_allclose(t["logits"], logits, atol=1e-4)
    assert changed                                                # the switch did something
    sc = t.schema
    if sc.positions == "rotary":
        keys = sc.rotary_keys(sc.stacks[0].key)
        assert (t[keys.cos] == 1).all() and not t[keys.sin].any()
    if sc.positions == "relative":
        assert all(not t[sc.bias_keys(k).bias].any() for k in sc.kind_names if sc.bias_keys(k))


def test_t5s_equations_say_what_it_computes():
    """No √d_k in T5's scores; the bias on its self-attention, none on its cross-attention (as its schema marks)."""
    from model.families.hf import t5
    from model.schema import Stage
    sc = t5.schema_of_config({"model_type": "t5", "num_layers": 2, "d_model": 32, "num_heads": 4, "d_kv": 8})
    eq = {k.name: sc.caption(Stage(k.stack, 0, k.sublayer))[2] for k in sc.kinds}
    assert all("/ √d_k" not in e and "the scores not divided by √d_k" in e for e in eq.values())
    assert "+ B_rel" in eq["enc_self"] and "+ B_rel" in eq["dec_self"] and "B_rel" not in eq["cross"]
    assert [k.name for k in sc.kinds if sc.bias_keys(k.name)] == ["enc_self", "dec_self"]
