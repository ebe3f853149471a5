"""Hugging Face models of every family, built tiny and random from a config and saved with save_pretrained, opened
the way a user opens them (model.families.load(folder)): every layer's and head's attention in the Trace is
transformers' own output_attentions; the rest of the Trace is what the model computed (q·k scores that softmax to
those weights, Σαv, norm statistics that reproduce the norm's output, the residual stream, the logits); the
teacher-forced pass after generation equals the model's step-by-step computation."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.assets import ModelLoadError  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.equations import layernorm_equation, sublayer_input  # noqa: E402
from model.families import load, translate  # noqa: E402
from model.schema import ATTENTION_CAUSAL  # noqa: E402

SENTENCE = "the cat sat on the mat"


_OPENED: dict = {}


def _open(family, tmp_path_factory):
    if family not in _OPENED:
        folder = hf_tiny.build(family, tmp_path_factory.mktemp(family))
        lm = load(folder)
        _OPENED[family] = family, folder, lm, translate(lm, SENTENCE, DecodingSettings(max_new=6))
    return _OPENED[family]


@pytest.fixture(params=hf_tiny.FAMILIES)
def opened(request, tmp_path_factory):
    return _open(request.param, tmp_path_factory)


@pytest.fixture(params=[f for f in hf_tiny.FAMILIES if f not in hf_tiny.ENCODER_ONLY])
def generating(request, tmp_path_factory):
    """The families that generate (all but the encoder-only ones)."""
    return _open(request.param, tmp_path_factory)


def test_the_schema_follows_the_config(opened):
    family, folder, lm, _ = opened
    sc = lm.schema
    assert sc.n_heads == 4 and sc.d_model == 32 and all(st.n_layers == 2 for st in sc.stacks)
    expected = {"gpt2": ("decoder-only", "LayerNorm", "pre", "learned", 4),
                "gpt_neo": ("decoder-only", "LayerNorm", "pre", "learned", 4),
                "gpt_neox": ("decoder-only", "LayerNorm", "pre", "rotary", 4),
                "phi": ("decoder-only", "LayerNorm", "pre", "rotary", 4),
                "opt": ("decoder-only", "LayerNorm", "pre", "learned", 4),
                "bert": ("encoder-only", "LayerNorm", "post", "learned", 4),
                "roberta": ("encoder-only", "LayerNorm", "post", "learned", 4),
                "distilbert": ("encoder-only", "LayerNorm", "post", "sinusoidal", 4),
                "marian": ("encoder-decoder", "LayerNorm", "post", "sinusoidal", 4),
                "bart": ("encoder-decoder", "LayerNorm", "post", "learned", 4),
                "mbart": ("encoder-decoder", "LayerNorm", "pre", "learned", 4),
                "t5": ("encoder-decoder", "RMSNorm", "pre", "relative", 4)}.get(
        family, ("decoder-only", "RMSNorm", "pre", "rotary", 2))
    assert (sc.layout, sc.norm, sc.norm_place, sc.positions, sc.n_kv_heads) == expected
    same = {"qwen2": "llama", "qwen3": "llama", "mistral": "llama", "phi3": "llama", "mbart": "bart",
            "gemma2": "gemma", "gemma3": "gemma"}
    assert lm.family == "hf." + same.get(family, family)


def test_every_layer_and_head_is_transformers_own_attention(opened):
    family, folder, lm, result = opened
    t = result.trace
    ref, logits = hf_tiny.reference(family, folder, result)
    assert set(ref) == set(t.schema.kind_names)
    for kind, layers in ref.items():
        assert len(layers) == t.schema.stack(t.schema.kind(kind).stack).n_layers
        for layer, expected in enumerate(layers):
            got = t.attention(kind, layer)
            assert got.shape == expected.shape and got.shape[0] == 4
            np.testing.assert_allclose(got, expected, atol=1e-6)
    np.testing.assert_allclose(t["logits"], logits, atol=1e-4)
    # heads differ (the weights are sharp enough for a swapped head or layer to show)
    w = t.attention(t.schema.kind_names[0], 1)
    assert np.abs(w[0] - w[1]).max() > 1e-2


def test_the_trace_is_what_the_model_computed(opened):
    """Scores softmax to the weights (so q and k are the model's, after rotary), Σαv is the head output, the norm
    statistics reproduce the norm's output, and the sublayer's input plus its output is the residual stream."""
    family, folder, lm, result = opened
    t, sc = result.trace, result.trace.schema
    for k in sc.kinds:
        for layer in range(sc.stack(k.stack).n_layers):
            g = lambda name: t.get(k.stack, layer, k.sublayer, name).astype(np.float64)  # noqa: E731
            m = t.mask(k.name, layer)
            z = np.where(m, g("scores"), -np.inf)
            soft = np.exp(z - z.max(-1, keepdims=True))
            np.testing.assert_allclose(soft / soft.sum(-1, keepdims=True), g("weights"), atol=2e-5)
            assert g("k").shape[0] == sc.n_kv_heads
            v = np.repeat(g("v"), sc.gqa_group, axis=0)
            np.testing.assert_allclose(g("weights") @ v, g("head_out"), atol=1e-5)
            assert m.all() or (k.causal and not m[0, 1:].any())
    for st in sc.stacks:
        for layer in range(st.n_layers):
            for sub in st.sublayers:
                ln = layernorm_equation(t, st.key, layer, sub.key, token=1)
                np.testing.assert_allclose(ln.gamma * ln.normalised + ln.beta, ln.out, atol=1e-4)
                x = sublayer_input(t, st.key, layer, sub.key)
                np.testing.assert_allclose(x + t.get(st.key, layer, sub.key, "out"),
                                           t.get(st.key, layer, sub.key, "residual"), atol=1e-5)


def _bart_norm(m, stack: str):
    return getattr(m.model, "encoder" if stack == "enc" else "decoder").layernorm_embedding


# the norm each family applies to the embedding's sum, by stack ("enc", "dec")
EMBEDDING_NORMS = {"bert": lambda m, stack: m.bert.embeddings.LayerNorm,
                   "roberta": lambda m, stack: m.roberta.embeddings.LayerNorm,
                   "distilbert": lambda m, stack: m.distilbert.embeddings.LayerNorm,
                   "bart": _bart_norm, "mbart": _bart_norm}


def test_the_embedding_is_computed_as_the_schema_writes_it(opened):
    """The Embeddings panel and the Math tab write x = e + p, x = LayerNorm(e + p + s) (BERT: the sum normalised,
    segment 0's vector added) or LayerNorm(e + p) (DistilBERT, BART), and p = P[i + offset] (RoBERTa's and BART's
    tables start at row 2): the trace's x and p are exactly that, with the model's own norm and table (QA: BERT's x
    was not e + p, and RoBERTa's "P[1]" was row 3)."""
    family, folder, lm, result = opened
    t, sc = result.trace, result.trace.schema
    assert sc.embedding_norm == (family in EMBEDDING_NORMS) and sc.segment == (family in ("bert", "roberta"))
    assert sc.position_offset == (2 if family in ("roberta", "bart", "mbart", "opt") else 0)
    for sm in lm.map.stacks:
        tokens = sc.stack(sm.key).tokens
        e, p, x = (t[f"{tokens}.{k}"].astype(np.float64) for k in ("embedding", "pe", "x"))
        total = e + p
        if sc.segment:
            base = getattr(lm.model, family)
            total = total + base.embeddings.token_type_embeddings.weight[0].detach().double().numpy()
        if sc.embedding_norm:                     # the model's own norm, in float64 (the model is left as it is)
            norm = EMBEDDING_NORMS[family](lm.model, sm.key)
            with torch.no_grad():
                total = torch.nn.functional.layer_norm(torch.from_numpy(total), norm.normalized_shape,
                                                       norm.weight.double(), norm.bias.double(), norm.eps).numpy()
        np.testing.assert_allclose(total, x, atol=1e-4)
        if sm.pos is not None:
            table = sm.pos.weight.detach().numpy()
            np.testing.assert_allclose(p, table[sc.position_offset: sc.position_offset + len(p)], atol=1e-6)


def _hooks(model) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


def test_hooks_are_removed_after_a_run_even_a_failing_one(opened, monkeypatch):
    """transformers keeps hooks of its own (installed at the first run): a run leaves exactly those, and adds its
    own while it runs."""
    family, folder, lm, _ = opened
    fresh = _hooks(lm.model)
    from model.families.hf import tracing
    during = []
    real = tracing.record_arrays
    monkeypatch.setattr(tracing, "record_arrays", lambda *a: (during.append(_hooks(lm.model)), real(*a))[1])
    translate(lm, "the dog runs", DecodingSettings(max_new=2))
    assert _hooks(lm.model) == fresh and during[0] > fresh
    from model.families.hf import tracing
    monkeypatch.setattr(tracing, "record_arrays", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        translate(lm, "the dog runs", DecodingSettings(max_new=2))
    assert _hooks(lm.model) == fresh


@pytest.mark.parametrize("method", ["greedy", "beam", "sample"])
def test_step_t_of_the_teacher_forced_pass_is_what_generation_computed(generating, method):
    """generate (the app's settings) with its own per-step logits and attentions, against the trace's row t."""
    family, folder, lm, _ = generating
    settings = DecodingSettings(method=method, beam=3, temperature=0.8, top_k=5, seed=3, max_new=5)
    result = translate(lm, SENTENCE, settings)
    t = result.trace
    ref = hf_tiny.reference_model(family, folder)
    tok = lm.tokenizer
    ids = torch.tensor([tok(SENTENCE)["input_ids"]])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        kw = dict(max_new_tokens=5, num_beams=3 if method == "beam" else 1, do_sample=method == "sample",
                  pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
        if method == "sample":
            kw |= dict(temperature=0.8, top_k=5, top_p=1.0)
        gen = ref.generate(ids, attention_mask=torch.ones_like(ids), return_dict_in_generate=True,
                           output_logits=True, output_attentions=True, **kw)
    seq = gen.sequences[0].tolist()
    first = 0 if lm.schema.layout == "encoder-decoder" else ids.shape[1] - 1        # the trace row of step 0
    new = seq[1:] if lm.schema.layout == "encoder-decoder" else seq[ids.shape[1]:]
    assert new[: len(result.out_ids)] == result.out_ids
    if method == "beam":
        return                       # beam steps score several hypotheses: the chosen output is what is compared
    self_kind = "dec_self" if lm.schema.layout == "encoder-decoder" else "self"
    steps = gen.decoder_attentions if lm.schema.layout == "encoder-decoder" else gen.attentions
    for step in range(len(result.out_ids)):
        row = first + step
        np.testing.assert_allclose(t["logits"][row], gen.logits[step][0].numpy(), atol=1e-4)
        for layer in range(2):
            step_att = steps[step][layer][0, :, -1, : row + 1].numpy()                 # (H, keys so far)
            got = t.attention(self_kind, layer)[:, row, : row + 1]
            np.testing.assert_allclose(got, step_att, atol=1e-4)     # float32: a cached step against the whole pass


def test_a_preview_is_the_input_part_of_the_full_run(generating):
    """A large model shows its input's attention before generating (see visualizer/runs.py): that first pass is
    exactly the input's rows and columns of the full run's, and the first token it predicts is the one generated."""
    family, folder, lm, _ = generating
    seen = []
    result = translate(lm, SENTENCE, DecodingSettings(max_new=4), preview=seen.append)
    assert len(seen) == 1
    first, full = seen[0].trace, result.trace
    assert first.meta["partial"] and not full.meta.get("partial") and seen[0].out_ids == []
    n = len(first.tgt_tokens)
    assert full.tgt_tokens[:n] == first.tgt_tokens and first.src_tokens == full.src_tokens
    for kind in lm.schema.kind_names:
        for layer in range(lm.schema.n_layers):
            a, b = first.attention(kind, layer), full.attention(kind, layer)
            rows = a.shape[1]
            cols = a.shape[2]
            np.testing.assert_allclose(a, b[:, :rows, :cols], atol=1e-5)
    np.testing.assert_allclose(first["logits"], full["logits"][:n], atol=1e-4)
    assert first.out_tokens[-1] == full.out_tokens[n - 1]
    assert translate(lm, SENTENCE, DecodingSettings(max_new=4), target="the cat",
                     preview=seen.append).trace.meta["mode"] == "teacher-forced" and len(seen) == 1  # nothing to wait for


def test_generate_steps_gives_each_written_tokens_trace_for_every_family(generating):
    """The README's generate_steps raised AttributeError on any Hugging Face model (QA as a researcher): it gives
    one trace per written token, each the whole run's rows up to that token, labelled as the run was decoded."""
    from model import generate_steps
    family, folder, lm, _ = generating
    settings = DecodingSettings(max_new=4)
    whole = translate(lm, SENTENCE, settings)
    steps = list(generate_steps(lm, SENTENCE, settings))
    assert len(steps) == len(whole.out_ids) > 0
    for t, trace in enumerate(steps):
        rows = trace.n_steps
        assert trace.meta["step"] == t and trace.meta["decoding"] == whole.trace.meta["decoding"] == "greedy"
        assert trace.out_tokens == whole.trace.out_tokens[:rows] and rows == whole.trace.n_steps - len(steps) + t + 1
        np.testing.assert_allclose(trace["logits"], whole.trace["logits"][:rows], atol=1e-4)
        for info in lm.schema.kinds:                 # an encoder's rows are the source's, the same at every step
            got, full = trace.attention(info.name, 1), whole.trace.attention(info.name, 1)
            expected = full[:, :rows, :got.shape[2]] if info.by_step else full
            np.testing.assert_allclose(got, expected, atol=1e-5)


def test_generate_steps_refuses_an_encoder_only_model_in_words(tmp_path_factory):
    from model import generate_steps
    lm = load(hf_tiny.build("bert", tmp_path_factory.mktemp("bert")))
    with pytest.raises(ValueError, match="encoder-only model"):
        next(generate_steps(lm, SENTENCE))


def test_an_input_longer_than_the_model_is_cut_keeping_its_end_token(tmp_path_factory):
    """Marian reads a source ending in </s>: a source cut at the model's length keeps it, as the tokenizer cuts."""
    family, folder, lm, _ = _open("marian", tmp_path_factory)
    words = " ".join(["the cat sat on the mat"] * 15)                    # 90 words, a model of 64 positions
    result = translate(lm, words, DecodingSettings(max_new=2))
    src = result.trace.src_tokens
    assert len(src) == lm.cfg.max_len and src[-1] == "</s>" and src[:-1] == words.split()[: lm.cfg.max_len - 1]
    assert result.truncated == 90 + 1 - lm.cfg.max_len


def test_roberta_reads_as_many_tokens_as_its_positions_after_the_pad_tokens_id(tmp_path_factory):
    """RoBERTa counts positions from the pad token's id + 1: 66 position rows and pad id 1 cover 64 tokens (reading
    66 ran past its table). A longer text is cut to 64 with <s> and </s> kept, and the trace is still the model's."""
    family, folder, lm, _ = _open("roberta", tmp_path_factory)
    assert lm.model.config.max_position_embeddings == 66 and lm.cfg.max_len == 64
    words = " ".join(["the cat sat on the mat"] * 15)
    result = translate(lm, words, DecodingSettings())
    src = result.trace.src_tokens
    assert len(src) == 64 and (src[0], src[-1]) == ("<s>", "</s>") and src[1:-1] == words.split()[:62]
    assert result.truncated == 90 + 2 - 64
    ids = lm.tokenizer(words, truncation=True, max_length=64)["input_ids"]
    with torch.no_grad():
        out = hf_tiny.reference_model(family, folder)(input_ids=torch.tensor([ids]), output_attentions=True)
    np.testing.assert_allclose(result.trace.attention("self", 1), out.attentions[1][0].numpy(), atol=1e-6)
    np.testing.assert_allclose(result.trace["logits"], out.logits[0].numpy(), atol=1e-4)


def test_a_decoder_only_models_given_continuation_goes_on_from_the_prompt(tmp_path):
    """GPT-2's pieces carry the space before a word ("Ġis"): the Target "is fast." after "The red car" was read
    alone, its "is" a piece glued to "car", and the attention shown was of "caris fast." (QA). Read as the running
    text goes on, the forced ids are the whole text's after the prompt's, and the trace is the one of the model
    reading the whole text."""
    folder = hf_tiny.build_byte_level_gpt2(tmp_path / "gpt2")
    lm = load(folder)
    tok = hf_tiny.tokenizer(folder)
    prompt, target = "the red car", "is fast ."
    whole = tok(f"{prompt} {target}")["input_ids"]
    prompt_ids = tok(prompt)["input_ids"]
    assert whole[:len(prompt_ids)] == prompt_ids
    glued = tok(target, add_special_tokens=False)["input_ids"]
    assert glued != whole[len(prompt_ids):]                       # read alone, "is" has no space before it
    trace = translate(lm, prompt, target=target).trace
    with torch.no_grad():
        reference = hf_tiny.reference_model("gpt2", folder)(torch.tensor([whole]), output_attentions=True)
    shown = trace.attention(trace.schema.kind_names[0], 0)
    n = shown.shape[1]
    assert n >= len(whole) - 1                                     # (the last token is predicted, not read)
    np.testing.assert_allclose(shown, reference.attentions[0][0, :, :n, :n].numpy(), atol=1e-5)
    spaced = translate(lm, prompt + "  ", target=target).trace       # typed with a space before the Target
    assert spaced.tgt_tokens == trace.tgt_tokens and spaced.out_tokens == trace.out_tokens
    np.testing.assert_allclose(spaced.attention(spaced.schema.kind_names[0], 0), shown, atol=1e-6)


def test_gpt_neo_reads_no_more_tokens_than_its_local_layers_window(tmp_path_factory, tmp_path):
    """GPT-Neo's local layers see the last window_size tokens only; the panels draw causal attention. Its texts are
    read up to the window (24 here, of 64 positions), where the two are the same: every row of the local layer
    sees back to the first token, and the trace is transformers' own. Without local layers, all 64 positions."""
    family, folder, lm, _ = _open("gpt_neo", tmp_path_factory)
    assert lm.model.config.attention_layers == ["global", "local"] and lm.cfg.max_len == 24
    words = " ".join(["the cat sat on the mat"] * 15)
    result = translate(lm, words, DecodingSettings(max_new=2))
    rows = len(result.trace.tgt_tokens)                                   # the prompt and the output but its last
    assert rows == 24 and result.truncated > 0
    ids = lm.tokenizer(words)["input_ids"][: rows + 1 - len(result.out_ids)] + result.out_ids
    local = result.trace.attention("self", 1)
    assert (local[:, -1, 0] > 0).all()                                 # the last row still sees the first token
    with torch.no_grad():
        out = hf_tiny.reference_model(family, folder)(input_ids=torch.tensor([ids[:-1]]), output_attentions=True)
    np.testing.assert_allclose(local, out.attentions[1][0].numpy(), atol=1e-6)
    wide = load(hf_tiny.build("gpt_neo", tmp_path / "wide", window_size=256))
    assert wide.cfg.max_len == 64
    # the note on a cut text says what cut it: "the model's 24 tokens" of a model of 64 positions misled (QA)
    from model.notes import model_length
    assert model_length(lm) == ("the model's 24 tokens (its local attention window, window_size; it has 64 "
                                "positions, but past the window its local layers' attention is not the causal "
                                "attention drawn)")
    assert model_length(wide) == "the model's 64 tokens"


def test_the_formulas_add_a_bias_where_the_model_has_one(opened):
    """q = x W_Q (+ b_Q) and FFN(x) = act(x W₁ + b₁) W₂ + b₂: GPT-Neo's q, k and v have no bias and its MLP has,
    Qwen2's the other way round; the formulas say what each model computes."""
    family, folder, lm, _ = opened
    sc = lm.schema
    first = lm.map.stacks[0].layers[0]
    attention = next(part for key, part in first.items() if part.proj)
    projections = list(attention.proj.values())       # the last is v's (or the fused one): q and k may be read
    assert sc.projection_bias == (projections[-1].bias is not None)    # after a norm (Qwen3)
    ffn = next(s for s in sc.stacks[0].sublayers if not s.attention)
    down = next(part for part in first.values() if part.down is not None).down
    if "FFN(" in ffn.equation:                                    # a gated MLP's equation names no bias
        assert ("+ b₂" in ffn.equation) == (getattr(down, "bias", None) is not None), ffn.equation


@pytest.mark.parametrize("family, config, window", [
    ("mistral", {"sliding_window": 12}, 12), ("mistral", {"sliding_window": None}, None),
    ("qwen2", {"use_sliding_window": True, "sliding_window": 12, "max_window_layers": 1}, 12),
    ("qwen3", {"use_sliding_window": False, "sliding_window": 12}, None)])
def test_a_sliding_window_bounds_the_text_read_where_a_layer_has_one(tmp_path, family, config, window):
    """Mistral's layers, and Qwen's past max_window_layers when use_sliding_window is on, see the last
    sliding_window tokens only: texts are read up to it, where that is the causal attention drawn, and every row
    of the last layer is transformers' own. Without a window, all 64 positions."""
    from model.notes import model_length
    folder = hf_tiny.build(family, tmp_path / family, **config)
    lm = load(folder)
    assert lm.cfg.max_len == (window or 64)
    assert model_length(lm) == (f"the model's {window} tokens (its sliding window; it has 64 positions, but past "
                                "the window its attention is not the causal attention drawn)" if window
                                else "the model's 64 tokens")
    words = " ".join(["the cat sat on the mat"] * 15)
    result = translate(lm, words, DecodingSettings(max_new=2))
    rows = len(result.trace.tgt_tokens)
    assert rows == (window or 64) and result.truncated > 0
    ids = lm.tokenizer(words)["input_ids"][: rows + 1 - len(result.out_ids)] + result.out_ids
    with torch.no_grad():
        out = hf_tiny.reference_model(family, folder)(input_ids=torch.tensor([ids[:-1]]), output_attentions=True)
    np.testing.assert_allclose(result.trace.attention("self", 1), out.attentions[1][0].numpy(), atol=1e-6)


def test_opt_after_norm_opens_and_opt_350m_s_projections_are_refused_in_a_line(tmp_path):
    """OPT-350m normalises after each sublayer and projects its embeddings into a wider stream: the first is read
    as BERT's post-norm layers are (attention still transformers' own), the second refused with the reason."""
    folder = hf_tiny.build("opt", tmp_path / "post", do_layer_norm_before=False)
    lm = load(folder)
    assert lm.schema.norm_place == "post"
    result = translate(lm, SENTENCE, DecodingSettings(max_new=3))
    ref, logits = hf_tiny.reference("opt", folder, result)
    for layer, expected in enumerate(ref["self"]):
        np.testing.assert_allclose(result.trace.attention("self", layer), expected, atol=1e-6)
    np.testing.assert_allclose(result.trace["logits"], logits, atol=1e-4)
    wide = hf_tiny.build("opt", tmp_path / "wide", word_embed_proj_dim=16)
    with pytest.raises(ModelLoadError, match="word_embed_proj_dim, as OPT-350m does"):
        load(wide)


def _layers_are_the_modules_own(family, folder, result, parts) -> None:
    """Each layer's attention out, the FFN's norm input, the FFN's out and the stream after it, in the trace, are
    what parts(block, x, mask, position) computes from transformers' own modules on the layer's input x."""
    t = result.trace
    ref = hf_tiny.reference_model(family, folder)
    base = ref.gpt_neox if family == "gpt_neox" else ref.model
    seq = hf_tiny.tokenizer(folder)(SENTENCE)["input_ids"] + result.out_ids
    ids = torch.tensor([seq[:-1]])                          # the rows the trace read (as hf_tiny.reference)
    T = len(t.tgt_tokens)
    with torch.no_grad():
        states = ref(ids, output_hidden_states=True).hidden_states
        position = base.rotary_emb(states[0], torch.arange(T)[None])
        mask = torch.full((T, T), -torch.inf).triu(1)[None, None]
        for layer, block in enumerate(base.layers):
            x = states[layer]
            a, mlp_in, m = parts(block, x, mask, position)
            g = lambda sub, name: t.get("dec", layer, sub, name)  # noqa: E731
            np.testing.assert_allclose(g("self", "out"), a[0].numpy(), atol=1e-5)
            np.testing.assert_allclose(g("ffn", "ln_in"), mlp_in[0].numpy(), atol=1e-5)
            np.testing.assert_allclose(g("ffn", "out"), m[0].numpy(), atol=1e-5)
            np.testing.assert_allclose(g("ffn", "residual"), (x + a + m)[0].numpy(), atol=1e-5)


def _parallel_parts(family, block, x, mask, position, parallel):
    """(attention's out, the FFN's norm input, the FFN's out) of one layer, from transformers' own modules."""
    if family == "phi":                                  # one norm for both
        attn, ln_attn, mlp, ln_mlp = block.self_attn, block.input_layernorm, block.mlp, block.input_layernorm
    else:
        attn, ln_attn, mlp, ln_mlp = block.attention, block.input_layernorm, block.mlp, block.post_attention_layernorm
    a = attn(ln_attn(x), attention_mask=mask, position_embeddings=position)[0]
    mlp_in = x if parallel else x + a
    return a, mlp_in, mlp(ln_mlp(mlp_in))


@pytest.mark.parametrize("family", [f for f in hf_tiny.FAMILIES
                                    if f not in hf_tiny.ENCODER_ONLY + hf_tiny.ENCODER_DECODER])
def test_a_decoders_stream_is_the_models_hidden_states(tmp_path_factory, family):
    """The stream entering the first layer and leaving each layer but the last (whose output transformers gives
    after the final norm) is the model's own hidden state: Gemma's scaled embedding, Gemma 2's second norm on each
    sublayer's output, a parallel layer's sum."""
    family, folder, lm, result = _open(family, tmp_path_factory)
    t = result.trace
    ids = torch.tensor([hf_tiny.tokenizer(folder)(SENTENCE)["input_ids"] + result.out_ids[:-1]])
    with torch.no_grad():
        states = hf_tiny.reference_model(family, folder)(ids, output_hidden_states=True).hidden_states
    np.testing.assert_allclose(t["tgt.x"], states[0][0].numpy(), atol=1e-5)
    last = t.schema.stacks[0].sublayers[-1].key
    for layer in range(t.schema.stacks[0].n_layers - 1):
        np.testing.assert_allclose(t.get("dec", layer, last, "residual"), states[layer + 1][0].numpy(), atol=1e-4)


@pytest.mark.parametrize("family, parallel", [("gpt_neox", True), ("gpt_neox", False), ("phi", True)])
def test_parallel_layers_sublayers_are_the_models_own_modules_outputs(tmp_path, family, parallel):
    """GPT-NeoX (Pythia) and Phi: with a parallel residual the feed-forward network reads the layer's input x, as
    the attention does, and out = x + Attention(LN₁(x)) + FFN(LN₂(x)) (Phi: one LN for both); GPT-NeoX without it
    is the usual pre-norm layer. Each sublayer's out is what transformers' own attention and MLP modules give, its
    norm's input what they read, and the rotary tables cover the rotated share of each head (here half of d_k)."""
    folder = hf_tiny.build(family, tmp_path / "m", **({} if family == "phi" else {"use_parallel_residual": parallel}))
    lm = load(folder)
    result = translate(lm, SENTENCE, DecodingSettings(max_new=3))
    t, sc = result.trace, lm.schema
    assert sc.parallel_residual == parallel
    ffn = sc.stacks[0].sublayer("ffn")
    assert ("h = x + Attention(LayerNorm" in ffn.equation) == parallel
    assert ("one LayerNorm for both" in ffn.equation) == (family == "phi")
    assert ffn.short == ("FFN (the same LayerNorm)" if family == "phi" else "LayerNorm → FFN")   # Phi: one norm
    assert ("reads the same input beside it" in sc.stacks[0].sublayer("self").caption) == parallel
    _layers_are_the_modules_own(family, folder, result, lambda block, x, mask, position: _parallel_parts(
        family, block, x, mask, position, parallel))
    T = len(t.tgt_tokens)
    keys = sc.rotary_keys("dec")
    assert t[keys.theta].shape == (sc.d_k // 4,) and t[keys.cos].shape == (T, sc.d_k // 4)   # half of d_k turned
    np.testing.assert_allclose(t[keys.cos], np.cos(np.arange(T)[:, None] * t[keys.theta][None]), atol=1e-6)


def test_gemma_2s_sublayers_are_normalised_before_and_after_and_its_caps_are_written(tmp_path_factory):
    """Gemma 2 adds RMSNorm(f(RMSNorm(x))) to the stream: each sublayer's out is what its own modules give, the
    FFN's norm input is x + that attention out; its scores and logits are capped as c · tanh(s / c), which the
    equations write (with c), and its norms' γ is 1 + the stored weights."""
    family, folder, lm, result = _open("gemma2", tmp_path_factory)
    sc = lm.schema

    def parts(block, x, mask, position):
        a = block.post_attention_layernorm(block.self_attn(block.input_layernorm(x), position_embeddings=position,
                                                           attention_mask=mask)[0])
        return a, x + a, block.post_feedforward_layernorm(block.mlp(block.pre_feedforward_layernorm(x + a)))
    _layers_are_the_modules_own(family, folder, result, parts)
    attention, ffn = sc.stacks[0].sublayers
    assert "softmax(c·tanh(R(Q)R(K)ᵀ / √d_k / c) + M) V" in attention.equation and "c = 2:" in attention.equation
    assert "out = x + RMSNorm(MaskedMHA(RMSNorm(x)))   (a norm before, one after)" in attention.equation
    assert attention.short == "RMSNorm → Masked self-attention → RMSNorm" and ffn.short == "RMSNorm → MLP → RMSNorm"
    assert sc.score_cap == 2.0 and "softmax(c·tanh(h_t E" in sc.output_equation and "c = 3:" in sc.output_equation
    weight = lm.model.model.layers[1].pre_feedforward_layernorm.weight.detach().numpy()
    np.testing.assert_allclose(result.trace.get("dec", 1, "ffn", "gamma"), 1 + weight, atol=1e-6)
    plain = _open("gemma", tmp_path_factory)[2].schema           # Gemma: one norm a sublayer, no caps
    assert "(a norm before" not in plain.stacks[0].sublayers[0].equation and plain.score_cap == 0.0
    assert "tanh" not in plain.output_equation + plain.stacks[0].sublayers[0].equation


def test_gemma_3s_local_and_global_layers_turn_by_their_own_bases(tmp_path_factory, tmp_path):
    """Gemma 3 turns its local (sliding-window) layers' q and k by one rotary base and its global layers' by
    another, after normalising each head's q and k: each layer's scores are computed with its own (the family tests
    check they softmax to transformers' weights), the tables shown are the global layers' and the local θ is kept
    beside them. EmbeddingGemma, which attends both ways, is refused in a line."""
    family, folder, lm, result = _open("gemma3", tmp_path_factory)
    t, sc = result.trace, lm.schema
    rotary = lm.model.model.rotary_emb
    keys = sc.rotary_keys("dec")
    np.testing.assert_allclose(t[keys.theta], rotary.full_attention_inv_freq.numpy(), rtol=1e-6)
    np.testing.assert_allclose(t[keys.theta + "_local"], rotary.sliding_attention_inv_freq.numpy(), rtol=1e-6)
    assert sc.qk_norm and "R(N_q(Q))R(N_k(K))ᵀ" in sc.stacks[0].sublayers[0].equation and sc.score_cap == 0
    assert [p["self"].rotary_type for p in lm.map.stacks[0].layers] == ["sliding_attention", "full_attention"]
    import json
    config = json.loads((folder / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "use_bidirectional_attention": True}))
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    with pytest.raises(ModelLoadError, match="attends both ways"):
        load(tmp_path)


def test_a_phi_that_normalises_q_and_k_is_refused_in_a_line(tmp_path):
    with pytest.raises(ModelLoadError, match="qk_layernorm"):
        load(hf_tiny.build("phi", tmp_path / "qk", qk_layernorm=True))


@pytest.mark.parametrize("share", [2.0, 0.0, "half"])
def test_a_rotary_share_that_is_no_share_is_refused_when_opened_not_at_the_first_run(tmp_path, share):
    """QA: a Phi whose partial_rotary_factor read 2.0 opened, and every run then failed with "The size of tensor a
    (8) must match…", blamed on the sentence."""
    import json
    folder = hf_tiny.build("phi", tmp_path / "m")
    config = json.loads((folder / "config.json").read_text())
    config["rope_parameters"]["partial_rotary_factor"] = share
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError) as e:
        load(folder)
    assert str(e.value).startswith(f"partial_rotary_factor is {json.dumps(share)}: the share of each head's "
                                   "dimensions that rotary positions turn must be over 0 and at most 1")


def test_a_pre_norm_stages_title_puts_the_norm_first_as_its_box_does(tmp_path_factory):
    """QA as a student: GPT-2's caption read "Masked self-attention + LayerNorm — layer 1" under a map box
    "LayerNorm → Masked self-attention", the order the model computes in. A pre-norm stage's title starts with
    its norm (and ends with the second one Gemma 2 adds); a post-norm one keeps "+ Add & Norm"."""
    from model.schema import Stage
    gpt2 = _open("gpt2", tmp_path_factory)[2].schema
    gemma2 = _open("gemma2", tmp_path_factory)[2].schema
    assert gpt2.title(Stage("dec", 0, "self")) == "LayerNorm → Masked self-attention — layer 1"
    assert gpt2.short(Stage("dec", 0, "self")) == "LayerNorm → Masked self-attention"
    ffn = gemma2.stacks[0].sublayers[1].title
    assert gemma2.title(Stage("dec", 1, "ffn")) == f"RMSNorm → {ffn} → RMSNorm — layer 2"
    assert load("en-fr").schema.title(Stage("dec", 0, "self")) == "Decoder masked self-attention + Add & Norm — layer 1"


def test_a_run_records_the_epsilon_its_norms_add(tmp_path_factory):
    """The LayerNorm tab and the Math tab give ε's value (QA as a student): GPT-2's layer_norm_epsilon, Llama's
    rms_norm_eps; Marian names none (torch's default), and the trace says nothing rather than guess."""
    for family, key in (("gpt2", "layer_norm_epsilon"), ("llama", "rms_norm_eps"), ("marian", None)):
        _, _, lm, result = _open(family, tmp_path_factory)
        expected = getattr(lm.model.config, key) if key else None
        assert result.trace.norm_eps == expected, family


@pytest.mark.parametrize("family", hf_tiny.ENCODER_ONLY)
def test_a_masked_word_models_output_equation_has_its_heads_transform(family, tmp_path_factory):
    """P(x_i | x) = softmax(h_i W_out + b_out) left out the masked-LM head's dense layer, GELU and LayerNorm: the
    equation names them (the vocabulary map alone does not take the trace's last-layer output to its logits)."""
    _, _, lm, run = _open(family, tmp_path_factory)
    trace = run.trace
    assert "LayerNorm(GELU(h_i W_T + b_T))" in trace.schema.output_equation
    assert "A dense layer, GELU and LayerNorm" in trace.schema.output_caption
    head = lm.model.get_output_embeddings()
    h = torch.tensor(trace["enc.out"])
    with torch.no_grad():
        direct = head(h).numpy()                                   # the vocabulary map alone, on h itself
    assert not np.allclose(direct, trace["logits"], atol=1e-3)    # so something sits between h and the map
