"""The Trace: documented keys and shapes, internal consistency, .npz round trip, teacher forcing, stepwise traces."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from model import Trace, generate_steps, translate
from model.gradient_step import GradientStepper


def expected_shapes(cfg, Ts: int, Tt: int) -> dict[str, tuple]:
    """Every key and shape the docstring of model/trace.py promises."""
    H, d, d_k, d_ff, V = cfg.h, cfg.d_model, cfg.d_k, cfg.d_ff, cfg.tgt_vocab_size
    shapes = {f"{side}.{n}": (T, d) for side, T in (("src", Ts), ("tgt", Tt)) for n in ("embedding", "pe", "x")}
    shapes |= {"enc.out": (Ts, d), "dec.out": (Tt, d), "logits": (Tt, V), "probs": (Tt, V), "out_ids": (Tt,)}

    def norm(prefix, T):
        return {f"{prefix}.residual": (T, d), f"{prefix}.ln_mean": (T,), f"{prefix}.ln_sigma": (T,),
                f"{prefix}.gamma": (d,), f"{prefix}.beta": (d,), f"{prefix}.ln_out": (T, d)}

    def attention(prefix, Tq, Tk, masked):
        s = {f"{prefix}.q": (H, Tq, d_k), f"{prefix}.k": (H, Tk, d_k), f"{prefix}.v": (H, Tk, d_k),
             f"{prefix}.scores": (H, Tq, Tk), f"{prefix}.weights": (H, Tq, Tk), f"{prefix}.head_out": (H, Tq, d_k),
             f"{prefix}.out": (Tq, d)}
        return s | ({f"{prefix}.mask": (Tq, Tk)} if masked else {}) | norm(prefix, Tq)

    for l in range(cfg.N_enc):
        shapes |= attention(f"enc.{l}.self", Ts, Ts, True)
        shapes |= {f"enc.{l}.ffn.hidden": (Ts, d_ff), f"enc.{l}.ffn.out": (Ts, d)} | norm(f"enc.{l}.ffn", Ts)
    for l in range(cfg.N_dec):
        shapes |= attention(f"dec.{l}.self", Tt, Tt, True) | attention(f"dec.{l}.cross", Tt, Ts, True)
        shapes |= {f"dec.{l}.ffn.hidden": (Tt, d_ff), f"dec.{l}.ffn.out": (Tt, d)} | norm(f"dec.{l}.ffn", Tt)
    return shapes


@pytest.fixture(scope="module")
def forced(tiny_lm):
    return translate(tiny_lm, "the cat sat", target="le chat")


def test_keys_and_shapes_are_exactly_as_documented(tiny_lm, forced):
    t = forced.trace
    Ts, Tt = len(t.src_tokens), len(t.tgt_tokens)
    want = expected_shapes(tiny_lm.cfg, Ts, Tt)
    assert sorted(t.arrays) == sorted(want)
    assert {k: t[k].shape for k in t.arrays} == want
    assert all(isinstance(a, np.ndarray) for a in t.arrays.values())
    assert t.n_layers("enc") == tiny_lm.cfg.N_enc and t.n_layers("dec") == tiny_lm.cfg.N_dec
    assert t.n_heads == tiny_lm.cfg.h and t.n_steps == Tt
    assert [t.out_id(i) for i in range(Tt)] == forced.out_ids and t["out_ids"].dtype == np.int64
    assert t.attention("cross", 1, 0).shape == (Tt, Ts)
    assert t.axis_tokens("cross") == (t.tgt_tokens, t.src_tokens)
    assert t.schema.kind_names == ("enc_self", "dec_self", "cross")
    assert t.schema == tiny_lm.schema and t.schema.family == "seed"


def test_teacher_forcing_uses_the_given_target(tiny_lm, forced):
    t = forced.trace
    target = tiny_lm.tgt_tok.encode("le chat")
    assert forced.out_ids[:-1] == target and t.meta["mode"] == "teacher-forced"
    assert t.out_tokens[:-1] == tiny_lm.tgt_tok.pieces(target) and t.out_tokens[-1] == "</s>"
    assert t.tgt_tokens[0] == "<s>" and t.tgt_tokens[1:] == t.out_tokens[:-1]
    assert forced.text == tiny_lm.tgt_tok.decode(target)


def test_the_numbers_hang_together(tiny_lm, forced):
    """Each recorded quantity follows from the others as the paper's equations say."""
    t, cfg = forced.trace, tiny_lm.cfg
    np.testing.assert_allclose(t["src.embedding"] + t["src.pe"], t["src.x"], atol=1e-6)
    for stack, sub in (("enc", "self"), ("dec", "self"), ("dec", "cross")):
        g = lambda n: t.get(stack, 1, sub, n)                                         # noqa: E731
        np.testing.assert_allclose(g("q") @ g("k").transpose(0, 2, 1) / np.sqrt(cfg.d_k), g("scores"), atol=1e-5)
        z = np.where(g("mask"), g("scores"), -np.inf)
        z = np.exp(z - z.max(-1, keepdims=True))
        np.testing.assert_allclose(z / z.sum(-1, keepdims=True), g("weights"), atol=1e-6)
        np.testing.assert_allclose(g("weights") @ g("v"), g("head_out"), atol=1e-5)
        mu, sigma = g("ln_mean")[:, None], g("ln_sigma")[:, None]
        np.testing.assert_allclose(g("residual").mean(-1, keepdims=True), mu, atol=1e-5)
        np.testing.assert_allclose(g("gamma") * (g("residual") - mu) / sigma + g("beta"), g("ln_out"), atol=1e-5)
    # residual = sublayer input + sublayer output; the encoder's last LayerNorm output is the memory
    np.testing.assert_allclose(t["src.x"] + t["enc.0.self.out"], t["enc.0.self.residual"], atol=1e-5)
    np.testing.assert_allclose(t["enc.0.self.ln_out"] + t["enc.0.ffn.out"], t["enc.0.ffn.residual"], atol=1e-5)
    np.testing.assert_allclose(t["enc.1.ffn.ln_out"], t["enc.out"], atol=0)
    np.testing.assert_allclose(t["dec.1.ffn.ln_out"], t["dec.out"], atol=0)
    assert (t["enc.0.ffn.hidden"] >= 0).all() and (t["enc.0.ffn.hidden"] == 0).any()    # after ReLU
    np.testing.assert_allclose(t["probs"].sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(t.probs(0), t["probs"][0], atol=1e-6)


def test_npz_round_trip_is_exact(tiny_lm, tmp_path):
    t = translate(tiny_lm, "i love you").trace
    t.save_npz(tmp_path / "t.npz")
    u = Trace.load_npz(tmp_path / "t.npz")
    assert (u.src_tokens, u.tgt_tokens, u.out_tokens, u.meta) == (t.src_tokens, t.tgt_tokens, t.out_tokens, t.meta)
    assert u.arrays.keys() == t.arrays.keys()
    for k in t.arrays:
        assert u[k].dtype == t[k].dtype
        np.testing.assert_array_equal(u[k], t[k])


def test_npz_is_saved_under_the_name_given_and_never_half(tiny_lm, tmp_path, monkeypatch):
    """numpy added ".npz" to a name without it (save_npz("x") wrote x.npz, and load_npz("x") failed); a save that
    fails midway leaves the file before it, not half of one."""
    t = translate(tiny_lm, "i love you").trace
    t.save_npz(tmp_path / "x")
    assert [p.name for p in tmp_path.iterdir()] == ["x"]
    assert Trace.load_npz(tmp_path / "x").src_tokens == t.src_tokens
    (tmp_path / "y.npz").write_bytes(b"before")

    def fail(*_a, **_k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(np, "savez_compressed", fail)
    with pytest.raises(OSError):
        t.save_npz(tmp_path / "y.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x", "y.npz"]
    assert (tmp_path / "y.npz").read_bytes() == b"before"


def test_generate_steps_yields_one_trace_per_generated_token(tiny_lm):
    full = translate(tiny_lm, "the dog runs")
    steps = list(generate_steps(tiny_lm, "the dog runs"))
    assert len(steps) == len(full.out_ids) > 1
    for t, trace in enumerate(steps):
        assert trace.n_steps == t + 1 and trace.meta["step"] == t
        assert trace.out_tokens == tiny_lm.tgt_tok.pieces(full.out_ids[: t + 1])
        # the prefix rows of step t are the rows of the full run (causality)
        np.testing.assert_allclose(trace["logits"], full.trace["logits"][: t + 1], atol=1e-5)
    np.testing.assert_allclose(steps[-1].attention("cross", 1), full.trace.attention("cross", 1), atol=1e-6)


def test_a_trace_is_a_snapshot_not_a_view_of_the_weights(tiny_model_dir):
    """Weights changed later (a gradient step in the app) must not change a Trace taken before."""
    from model import load
    lm = load(tiny_model_dir)
    t = translate(lm, "the cat sat", target="le chat").trace
    before = {k: v.copy() for k, v in t.arrays.items()}
    GradientStepper(lm).step("the cat sat", "le chat", lr=1.0)
    with torch.no_grad():
        for p in lm.model.parameters():
            p.add_(1.0)
    changed = [k for k in before if not np.array_equal(before[k], t[k])]
    assert changed == []


def test_learned_positions_are_copied_too(tiny_lm):
    from dataclasses import replace

    from model import LoadedModel, Transformer
    lm = LoadedModel("learned", None, Transformer(replace(tiny_lm.cfg, pe="learned")).eval(),
                     tiny_lm.src_tok, tiny_lm.tgt_tok)
    t = translate(lm, "the cat").trace
    pe = t["src.pe"].copy()
    with torch.no_grad():
        lm.model.pe.add_(1.0)
    np.testing.assert_array_equal(t["src.pe"], pe)


def test_every_key_named_in_docs_math_exists(forced):
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "math.md").read_text(encoding="utf-8")
    keys = set(re.findall(r"`((?:src|tgt|enc|dec)\.[\w{}.]+|logits|probs)`", text))
    assert len(keys) > 25
    arrays = forced.trace.arrays
    missing = sorted(k for k in keys if k.replace("{l}", "1") not in arrays               # a leaf, or a
                     and not any(a.startswith(k.replace("{l}", "1") + ".") for a in arrays))   # sublayer prefix
    assert missing == []


@pytest.mark.parametrize("damaged", [None, 3, ["0"], [True], "0"])
def test_a_damaged_never_drawn_leaves_every_id_drawable(tiny_lm, damaged):
    """A hand-edited or damaged saved trace's "never_drawn" (null, a number) raised TypeError at every probs() (QA);
    it is read as none, and probs is the plain softmax."""
    t = translate(tiny_lm, "the dog runs").trace
    t.meta["never_drawn"] = damaged
    z = np.exp(t["logits"][0].astype(np.float64) - t["logits"][0].max())
    assert t.never_drawn == () and np.allclose(t.probs(0), z / z.sum())


def test_a_file_that_is_no_saved_trace_is_said_to_be_none_and_never_unpickled(tmp_path):
    """numpy's words for a text file advised unpickling it, and a plain .npz gave "KeyError: '__header__ is not a
    file in the archive'" (QA, a researcher in a notebook)."""
    import numpy as np

    from model.trace import Trace
    text, plain, lone = tmp_path / "bad.npz", tmp_path / "plain.npz", tmp_path / "one.npy"
    text.write_text("hello", encoding="utf-8")
    np.savez(plain, a=np.zeros(3))
    np.save(lone, np.zeros(3))
    listed, keyless, objects = tmp_path / "listed.npz", tmp_path / "keyless.npz", tmp_path / "objects.npz"
    np.savez(listed, __header__=np.array(json.dumps([1, 2])))                 # a header of another shape
    np.savez(keyless, __header__=np.array(json.dumps({"meta": {}})))          # … without its tokens
    np.savez(objects, __header__=np.array(json.dumps({"src_tokens": [], "tgt_tokens": [], "out_tokens": [],
                                                      "meta": {}})), a=np.array([{"x": 1}], dtype=object))
    for path in (text, plain, lone, listed, keyless, objects):
        with pytest.raises(ValueError) as e:
            Trace.load_npz(path)
        assert str(e.value) == f"{path}: not a trace saved by Attention Visualizer (Trace.save_npz)"
    with pytest.raises(FileNotFoundError):
        Trace.load_npz(tmp_path / "gone.npz")


def test_a_length_limit_below_one_token_is_refused():
    """max_new 0 or -5 gave an empty translation with no word (QA)."""
    from model.config import DecodingSettings
    for bad in (0, -5):
        with pytest.raises(ValueError, match=f"max_new must be >= 1 .*got {bad}"):
            DecodingSettings(max_new=bad)
    assert DecodingSettings(max_new=1).max_new == 1 and DecodingSettings().max_new is None


def test_a_layer_or_head_the_model_lacks_is_named_counted_from_0(tiny_lm):
    """trace.attention("cross", 9, 0) raised "KeyError: 'dec.9.cross.weights'" and head -1 gave the last head
    (QA, a researcher in a notebook): one line, counted from 0, a KeyError and an IndexError both."""
    from model.trace import NotInTrace
    trace = translate(tiny_lm, "the cat sat").trace
    for layer, head, words in ((9, 0, "cross: no layer 9 counted from 0 (it has layers 0 to 1)"),
                               (-1, 0, "cross: no layer -1 counted from 0 (it has layers 0 to 1)"),
                               (0, 2, "cross: no head 2 counted from 0 (it has heads 0 to 1)"),
                               (0, -1, "cross: no head -1 counted from 0 (it has heads 0 to 1)")):
        with pytest.raises(NotInTrace) as e:
            trace.attention("cross", layer, head)
        assert str(e.value) == words and isinstance(e.value, KeyError) and isinstance(e.value, IndexError)
    assert trace.attention("cross", np.int64(1), np.int64(1)).shape == trace["dec.1.cross.weights"][1].shape
    # a kind as exported file names spell it, as ablations take it (KeyError had answered "encoder_self": QA)
    np.testing.assert_array_equal(trace.attention("encoder_self", 1), trace.attention("enc_self", 1))
    np.testing.assert_array_equal(trace.mask("decoder_self", 0), trace.mask("dec_self", 0))
    assert trace.axis_tokens("encoder_self") == trace.axis_tokens("enc_self")


def test_arguments_of_the_wrong_kind_are_named_in_one_line(tiny_lm):
    """translate("en-fr", …) and settings given as text or a dict ended in AttributeErrors (QA)."""
    from model import DecodingSettings
    for args, kwargs, words in ((("en-fr", "Hi."), {}, "translate takes a model opened with model.load "
                                                       "(load('en-fr')), not a str"),
                                ((tiny_lm, None), {}, "translate takes the text as a str, not a NoneType"),
                                ((tiny_lm, "Hi.", "beam"), {}, "settings: a DecodingSettings"),
                                ((tiny_lm, "Hi."), {"settings": {"method": "beam"}}, "settings: a DecodingSettings")):
        with pytest.raises(TypeError) as e:
            translate(*args, **kwargs)
        assert str(e.value).startswith(words)
    assert translate(tiny_lm, "the cat", DecodingSettings(method="beam", beam=2)).text is not None
    plain = translate(tiny_lm, "the cat").text                     # None: the default settings (it had raised)
    assert translate(tiny_lm, "the cat", None).text == translate(tiny_lm, "the cat", settings=None).text == plain


def test_forced_ids_outside_the_vocabulary_are_named(tiny_lm):
    """An id past the vocabulary ended in torch's "index out of range in self", deep in the decoder (QA)."""
    n = tiny_lm.cfg.tgt_vocab_size
    for ids in ([n + 5, 5], [-1]):
        with pytest.raises(ValueError) as e:
            translate(tiny_lm, "the cat", forced_ids=ids)
        assert str(e.value) == (f"forced_ids: {ids[0]} is no token id of {tiny_lm.name} (its ids run from 0 to "
                                f"{n - 1})")
