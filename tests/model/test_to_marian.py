"""A seed-family model written as a transformers Marian folder (model/families/hf/to_marian.py) translates as the app
does: `MarianMTModel.from_pretrained(folder).generate(num_beams=1)` chooses the app's greedy ids, its teacher-forced
logits are the app's, its tokenizers give the app's ids, and the folder opened by the app's own Marian family
translates the same, with the same attention weights."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from model import load, translate  # noqa: E402
from model.checkpoint import save_model  # noqa: E402
from model.config import BOS, EOS, PAD, DecodingSettings, ModelConfig  # noqa: E402
from model.decoding import _max_new, encode_source, greedy  # noqa: E402
from model.families.hf.to_marian import (TOLERANCE, ConvertError, convert, marian_config,  # noqa: E402
                                         residual_order)
from model.tokenizer import TextTokenizer  # noqa: E402
from model.transformer import Transformer, sinusoidal_table  # noqa: E402

SENTENCES = ["The red car is fast.", "I love you.", "Where is the station?", "Two dogs are playing in the snow.",
             "She didn't want to go to school yesterday because it was raining.", "Hello",
             "A man in a blue shirt is riding a bike down the street.", "What time is it?",
             "My brother's friends bought three old books, didn't they?", "Tom est là ; 42 chats, 7 % — ok !",
             "  spaces\tand\u00a0odd\u200bwhite   space  "]
ODD_TEXT = ["ﬁne Ｆｕｌｌ ½ café", "e\u0301t\u00e9 na\u00efve", "日本語 🙂 emoji", "tab\there\nnew\u2028line\u3000x",
            "zero\u200bwidth\ufeffjoin\u2060er", "\x00control\x1f\x85chars", "   ", "", "<s> literal </s> <unk>"]


def marian_generate(m, st_tok, text: str, max_new: int | None) -> list[int]:
    enc = st_tok(text, return_tensors="pt")
    extra = {} if max_new is None else {"max_new_tokens": max_new}
    with torch.no_grad():
        return m.generate(**enc, num_beams=1, **extra)[0, 1:].tolist()


def our_greedy(lm, text: str, max_new: int | None = None) -> list[int]:
    src = encode_source(lm, text).ids
    return greedy(lm.model, src, _max_new(lm.model, len(src), DecodingSettings(max_new=max_new)))


class Converted:
    def __init__(self, lm, folder):
        self.lm, self.folder = lm, folder
        self.done = convert(lm, folder)
        self.model = tf.MarianMTModel.from_pretrained(str(folder)).eval()
        self.src_tok = tf.AutoTokenizer.from_pretrained(str(folder))
        self.tgt_tok = tf.AutoTokenizer.from_pretrained(str(folder / "target_tokenizer"))


_CONVERTED: dict = {}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread: on the shared 2-core machine two threads made these runs several times slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(params=["en-fr", "en-de"])
def bundled(request, tmp_path_factory):
    if request.param not in _CONVERTED:
        _CONVERTED[request.param] = Converted(load(request.param), tmp_path_factory.mktemp("hf") / request.param)
    return _CONVERTED[request.param]


# --- the positions --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d_model", [3, 7, 16, 256])
def test_reordering_the_residual_stream_turns_our_sinusoids_into_marians_exactly(d_model):
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding
    marian = MarianSinusoidalPositionalEmbedding(64, d_model).create_weight()
    ours = sinusoidal_table(64, d_model)
    assert torch.equal(ours[:, residual_order(d_model)], marian)
    assert not torch.equal(ours, marian)          # the two layouts do differ: without the reordering nothing matches


# --- the bundled models ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_marian_generate_chooses_the_apps_greedy_ids_and_words(bundled):
    c = bundled
    assert c.done.difference <= 1e-4
    ended = 0
    for text in SENTENCES:
        src = encode_source(c.lm, text).ids
        ours = our_greedy(c.lm, text)
        assert c.src_tok(text)["input_ids"] == src
        assert marian_generate(c.model, c.src_tok, text, 2 * len(src) + 10) == ours, text
        assert c.tgt_tok.decode(ours, skip_special_tokens=True) == c.lm.tgt_tok.decode(ours), text
        if ours[-1] == EOS:                        # the generation config alone (no max_new_tokens) stops there too
            ended += 1
            assert marian_generate(c.model, c.src_tok, text, None) == ours, text
    assert ended >= 8


@pytest.mark.slow
def test_teacher_forced_logits_are_the_apps(bundled):
    c = bundled
    for text in SENTENCES[:6]:
        src = encode_source(c.lm, text).ids
        fed = [BOS] + our_greedy(c.lm, text)[:-1]
        with torch.no_grad():
            ours = c.lm.model(torch.tensor([src]), torch.tensor([fed]))
            theirs = c.model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([fed])).logits
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(theirs.numpy(), ours.numpy(), atol=1e-4, rtol=0)


@pytest.mark.slow
def test_the_config_says_what_the_app_does(bundled):
    c = bundled
    cfg, config = c.lm.cfg, json.loads((c.folder / "config.json").read_text())
    gen = json.loads((c.folder / "generation_config.json").read_text())
    assert config["model_type"] == "marian" and config["activation_function"] == "relu"
    assert (config["vocab_size"], config["decoder_vocab_size"]) == (cfg.src_vocab_size, cfg.tgt_vocab_size)
    assert config["tie_word_embeddings"] is cfg.tie_output
    assert config["share_encoder_decoder_embeddings"] is cfg.share_embeddings
    assert (config["decoder_start_token_id"], config["eos_token_id"], config["pad_token_id"]) == (BOS, EOS, PAD)
    assert config["forced_eos_token_id"] is None and config["max_position_embeddings"] == cfg.max_len
    assert gen["bad_words_ids"] == [[PAD]] and gen["max_length"] == cfg.max_len and gen["num_beams"] == 1
    for folder in (c.folder, c.folder / "target_tokenizer"):    # what transformers 4.x needs too (tried with 4.46.3)
        tok_config = json.loads((folder / "tokenizer_config.json").read_text())
        assert tok_config["tokenizer_class"] == "PreTrainedTokenizerFast"
        assert tok_config["model_input_names"] == ["input_ids", "attention_mask"]
    assert set(c.src_tok("a car")) == {"input_ids", "attention_mask"}    # generate refuses token_type_ids
    out = c.model.get_output_embeddings().weight
    assert (out.data_ptr() == c.model.model.decoder.embed_tokens.weight.data_ptr()) is cfg.tie_output
    bias = c.lm.model.generator.bias
    expected = torch.zeros(cfg.tgt_vocab_size) if bias is None else bias.detach()
    assert torch.equal(c.model.final_logits_bias[0], expected)


@pytest.mark.slow
def test_the_apps_marian_family_opens_the_folder_and_translates_the_same(bundled):
    c = bundled
    hf = load(c.folder)
    assert hf.family == "hf.marian" and hf.tgt_tok.vocab_size == c.lm.cfg.tgt_vocab_size
    for text in SENTENCES[:5]:
        ours, theirs = translate(c.lm, text), translate(hf, text)
        assert theirs.out_ids == ours.out_ids and theirs.text == ours.text, text
        a, b = ours.trace, theirs.trace
        for which in ("src_tokens", "tgt_tokens", "out_tokens"):
            # the same pieces, written alike by both families: '##aime' continues a word, a lone space is '␣'
            assert getattr(a, which) == getattr(b, which), which
        for kind in a.schema.kind_names:       # attention weights do not depend on the residual stream's order
            for layer in range(a.schema.stacks[0].n_layers):
                np.testing.assert_allclose(b.attention(kind, layer=layer), a.attention(kind, layer=layer), atol=1e-5)
        np.testing.assert_allclose(b["logits"], a["logits"], atol=1e-4, rtol=0)
    forced = "Une voiture."
    assert translate(hf, SENTENCES[0], target=forced).out_ids == translate(c.lm, SENTENCES[0], target=forced).out_ids


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.sampled_from(list("aAzZéÉçœßﬁ½Ｆ日🙂 .,!?'’-\t\n\u00a0\u2028\u3000\u200b\ufeff\u00ad\u200c\u200d\u2060\u200e\ufe0f\u0301\x00\x85é")),
                    max_size=30))
def test_the_tokenizers_give_the_apps_ids_for_any_text(bundled, text):
    c = bundled
    assert c.src_tok(text)["input_ids"] == c.lm.src_tok.encode(text) + [EOS]
    assert c.tgt_tok(text)["input_ids"] == c.lm.tgt_tok.encode(text) + [EOS]


@pytest.mark.slow
def test_the_tokenizers_give_the_apps_ids_and_words_for_odd_unicode(bundled):
    c = bundled
    for text in SENTENCES + ODD_TEXT:
        for hf_tok, our_tok in ((c.src_tok, c.lm.src_tok), (c.tgt_tok, c.lm.tgt_tok)):
            ids = our_tok.encode(text) + [EOS]
            assert hf_tok(text)["input_ids"] == ids, text
            assert hf_tok.decode(ids, skip_special_tokens=True).strip() == our_tok.decode(ids), text
    unknown = [c.lm.tgt_tok.encode("la")[0], 1, c.lm.tgt_tok.encode("gare")[0], EOS]     # <unk> reads "�", as ours
    assert c.tgt_tok.decode(unknown, skip_special_tokens=True) == c.lm.tgt_tok.decode(unknown)
    assert "\ufffd" in c.lm.tgt_tok.decode(unknown)


# --- a tiny model of every kind the seed config allows ---------------------------------------------------------------
EN = ["the cat sat on the mat", "a red car is fast", "i love you", "where is the station", "the dog runs",
      "she reads a book", "we eat bread", "the house is big"]
FR = ["le chat était assis sur le tapis", "une voiture rouge est rapide", "je t'aime", "où est la gare",
      "le chien court", "elle lit un livre", "nous mangeons du pain", "la maison est grande"]


def tiny(folder, d_model=16, h=2, tie_output=False, share=False, scale_scores=True, scale_embedding=True, seed=0):
    """A random seed model with two vocabularies of different sizes (one when share), biases, γ and β away from
    1 and 0, and an output layer that would choose <pad> if it could."""
    src_tok = TextTokenizer.train(EN * 3, vocab_size=90, min_frequency=1)
    tgt_tok = src_tok if share else TextTokenizer.train(FR * 3, vocab_size=130, min_frequency=1)
    assert share or src_tok.vocab_size != tgt_tok.vocab_size
    cfg = ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=d_model, h=h,
                      d_ff=2 * d_model, N_enc=2, N_dec=2, max_len=40, dropout=0.0, tie_output=tie_output or share,
                      share_embeddings=share, scale_scores=scale_scores, scale_embedding=scale_embedding)
    torch.manual_seed(seed)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("gamma", "beta", "bias")):
                p.add_(0.3 * torch.randn_like(p))
            elif name.endswith("weight"):
                p.mul_(2.0)                       # sharper: outputs that differ from sentence to sentence
        if model.generator.bias is not None:
            model.generator.bias[PAD] = 50.0      # the top logit everywhere: greedy must skip it
            model.generator.bias[EOS] = 1.5
    return save_model(folder, model, src_tok, tgt_tok)


KINDS = {"untied, two vocabularies": {}, "tied, scores unscaled, no embedding scale, odd d_model":
         dict(d_model=15, h=3, tie_output=True, scale_scores=False, scale_embedding=False),
         "one shared table": dict(share=True, seed=1)}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_tiny_model_of_each_kind_round_trips(kind, tmp_path):
    lm = load(tiny(tmp_path / "seed", **KINDS[kind]))
    c = Converted(lm, tmp_path / "hf")
    config = json.loads((c.folder / "config.json").read_text())
    assert config["share_encoder_decoder_embeddings"] is lm.cfg.share_embeddings
    assert config["decoder_vocab_size"] == lm.cfg.tgt_vocab_size
    assert c.done.difference <= 1e-4
    if not lm.cfg.tie_output:
        assert torch.equal(c.model.final_logits_bias[0], lm.model.generator.bias.detach())
        assert float(c.model.final_logits_bias[0, PAD]) == 50.0
    texts = EN + ["the red dog is big", "where is the cat", "bread"]
    for text in texts:
        src = encode_source(lm, text).ids
        assert c.src_tok(text)["input_ids"] == src
        for max_new in (5, None):                 # the app's 2n + 10 rule, or the model's length limit
            ours = our_greedy(lm, text, max_new)
            n = max_new if max_new is not None else 2 * len(src) + 10
            assert PAD not in ours
            assert marian_generate(c.model, c.src_tok, text, n) == ours, (text, max_new)
        # generate's own limit (max_length = max_len) is the app's longest output, max_len - 1 tokens
        assert marian_generate(c.model, c.src_tok, text, None) == our_greedy(lm, text, lm.cfg.max_len), text
        fed = [BOS] + our_greedy(lm, text)[:-1]
        with torch.no_grad():
            ours = lm.model(torch.tensor([src]), torch.tensor([fed]))
            theirs = c.model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([fed])).logits
        np.testing.assert_allclose(theirs.numpy(), ours.numpy(), atol=1e-4, rtol=0)
    hf = load(c.folder)
    for text in texts[:3]:
        a, b = translate(lm, text), translate(hf, text)
        assert (b.out_ids, b.text, b.trace.src_tokens) == (a.out_ids, a.text, a.trace.src_tokens)


def test_the_check_refuses_a_conversion_whose_logits_differ(tmp_path, monkeypatch):
    """The conversion checks itself: a wrong tensor (here the first encoder layer's W_Q left in our order) stops it
    before anything is written."""
    from model.families.hf import to_marian
    lm = load(tiny(tmp_path / "seed"))
    original = to_marian.marian_tensors

    def wrong(model):
        tensors = original(model)
        tensors["model.encoder.layers.0.self_attn.q_proj.weight"] = model.encoder[0].self_attn.W_Q.weight.detach()
        return tensors
    monkeypatch.setattr(to_marian, "marian_tensors", wrong)
    with pytest.raises(to_marian.ConvertFailed, match="differ"):
        convert(lm, tmp_path / "hf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seed"]
    assert TOLERANCE <= 1e-3


@pytest.mark.parametrize("change, words", [(dict(pe="learned"), "learned positional"),
                                           (dict(pe="none"), "no positional"), (dict(ln_eps=1e-6), "LayerNorm ε")])
def test_models_marian_cannot_express_are_refused_in_one_line(change, words, tmp_path):
    src_tok = TextTokenizer.train(EN, vocab_size=60, min_frequency=1)
    cfg = ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=src_tok.vocab_size, d_model=8, h=2, d_ff=16,
                      N_enc=1, N_dec=1, max_len=16, **change)
    lm = load(save_model(tmp_path / "seed", Transformer(cfg), src_tok, src_tok))
    with pytest.raises(ConvertError, match=words) as e:
        convert(lm, tmp_path / "hf")
    assert "\n" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seed"]


def test_marian_config_follows_the_seed_config():
    cfg = ModelConfig(src_vocab_size=50, tgt_vocab_size=70, d_model=24, h=3, d_ff=40, N_enc=2, N_dec=3, max_len=33,
                      dropout=0.2, scale_embedding=False)
    c = marian_config(cfg)
    assert (c["encoder_layers"], c["decoder_layers"], c["encoder_attention_heads"]) == (2, 3, 3)
    assert c["encoder_ffn_dim"] == c["decoder_ffn_dim"] == 40
    assert (c["vocab_size"], c["decoder_vocab_size"], c["max_position_embeddings"]) == (50, 70, 33)
    assert c["scale_embedding"] is False and c["dropout"] == 0.2 and c["decoder_start_token_id"] == BOS


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path):
    """A file-size limit stands in for a full disk (safetensors raises its own error, not an OSError, for it)."""
    import os
    import resource
    import signal
    import subprocess
    import sys

    folder = tiny(tmp_path / "seed")
    size = (folder / "model.safetensors").stat().st_size

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, size // 2))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-m", "visualizer", "convert", str(folder), "--to-hf", str(tmp_path / "hf")],
                          capture_output=True, text=True, timeout=300, preexec_fn=limit, env=env)
    assert proc.returncode != 0 and "unexpected" not in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"error: {tmp_path / 'hf'}: cannot write there (File too large (os error 27)); "
                                   "nothing was written")
    assert [p.name for p in tmp_path.iterdir() if p.name not in ("seed", "state")] == []    # no half-written folder
