"""Tiny random Hugging Face models of each family, built from a config with a word-level tokenizer and saved with
`save_pretrained`, as a user's folder would be (nothing is downloaded). The *-spm variants ship sentencepiece models
trained here instead of tokenizer.json, as the hub's folders do: OPUS-MT's source.spm, target.spm and vocab.json (one
vocabulary for both sides, or separate ones), T5's spiece.model alone, Llama's tokenizer.model."""
from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

WORDS = ("the cat sat on mat a red car is fast i love you where station dog runs she reads book we eat bread house "
         "big . , le chat était assis sur tapis une voiture rouge est rapide").split()
FAMILIES = ("gpt2", "gpt_neo", "gpt_neox", "phi", "opt", "bert", "roberta", "distilbert", "marian", "bart", "mbart",
            "t5", "llama", "qwen2", "qwen3", "mistral", "phi3", "gemma", "gemma2", "gemma3")
ENCODER_ONLY = ("bert", "roberta", "distilbert")
SENTENCEPIECE = ("marian-spm", "marian-separate", "t5-spm", "llama-spm")
BASE = {"marian-spm": "marian", "marian-separate": "marian", "t5-spm": "t5", "llama-spm": "llama"}
ENCODER_DECODER = ("marian", "bart", "mbart", "t5", "marian-spm", "marian-separate", "t5-spm")
# 50 English and 50 French sentences to train the sentencepiece models on
ENGLISH = [" ".join(w) + " ." for w in itertools.islice(itertools.product(
    ("the cat", "a dog", "my brother", "the children", "she"), ("sat on", "sees", "likes", "is reading", "finds"),
    ("the mat", "a red car", "the big house", "some bread")), 0, 100, 2)]
FRENCH = [" ".join(w) + " ." for w in itertools.islice(itertools.product(
    ("le chat", "un chien", "mon frère", "les enfants", "elle"), ("était assis sur", "voit", "aime", "lit", "trouve"),
    ("le tapis", "une voiture rouge", "la grande maison", "du pain")), 0, 100, 2)]


def _tokenizer(specials: list[str], template: str | None):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast
    vocab = {w: i for i, w in enumerate(list(specials) + [w for w in dict.fromkeys(WORDS)])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if template:
        tok.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=[(t, vocab[t]) for t in specials if t in template])
    return tok, vocab


def build(family: str, folder: Path, seed: int = 0, **config) -> Path:
    """A model folder of the family (d_model 32, 2 layers, 4 heads); weights sharper than the default init, so
    that heads differ and a wrong head or layer would show. config: more settings of the T5 or Llama-family config
    (rope_parameters, relative_attention_max_distance, ...)."""
    import torch
    import transformers as tf
    torch.manual_seed(seed)
    if family in SENTENCEPIECE:
        return _build_sentencepiece(family, folder)
    if family == "gpt2":
        tok, vocab = _tokenizer(["<|endoftext|>", "<unk>"], None)
        names = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
        model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(vocab), n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                                 bos_token_id=0, eos_token_id=0, initializer_range=0.3))
    elif family == "gpt_neo":              # global and local layers; a window the tests' texts fit in
        tok, vocab = _tokenizer(["<|endoftext|>", "<unk>"], None)
        names = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
        model = tf.GPTNeoForCausalLM(tf.GPTNeoConfig(
            vocab_size=len(vocab), max_position_embeddings=64, hidden_size=32, num_layers=2, num_heads=4,
            attention_types=[[["global", "local"], 1]], window_size=config.get("window_size", 24),
            intermediate_size=64, bos_token_id=0, eos_token_id=0, initializer_range=0.3))
    elif family == "gpt_neox":             # Pythia's way: a parallel residual, a quarter of each head rotated
        tok, vocab = _tokenizer(["<|endoftext|>", "<unk>"], None)
        names = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
        model = tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(**{
            "vocab_size": len(vocab), "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 64, "max_position_embeddings": 64, "rotary_pct": 0.5, "bos_token_id": 0,
            "eos_token_id": 0, "initializer_range": 0.3, "use_parallel_residual": True, **config}))
    elif family == "phi":                  # one LayerNorm a layer for both sublayers, half of each head rotated
        tok, vocab = _tokenizer(["<|endoftext|>", "<unk>"], None)
        names = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
        model = tf.PhiForCausalLM(tf.PhiConfig(**{
            "vocab_size": len(vocab), "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 64, "max_position_embeddings": 64, "partial_rotary_factor": 0.5, "bos_token_id": 0,
            "eos_token_id": 0, "initializer_range": 0.3, **config}))
    elif family == "opt":                  # OPT's ids: <pad> 1, </s> 2 (its start token too)
        tok, vocab = _tokenizer(["<s>", "<pad>", "</s>", "<unk>"], "</s> $A")
        names = dict(bos_token="</s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
        model = tf.OPTForCausalLM(tf.OPTConfig(**{
            "vocab_size": len(vocab), "hidden_size": 32, "word_embed_proj_dim": 32, "num_hidden_layers": 2,
            "ffn_dim": 64, "num_attention_heads": 4, "max_position_embeddings": 64, "pad_token_id": 1,
            "bos_token_id": 2, "eos_token_id": 2, "init_std": 0.3, **config}))
    elif family in ("bert", "bert-angle"):     # bert-angle: a BERT whose tokenizer names its tokens <s>, <mask>…
        specials = ["[PAD]", "<unk>", "[CLS]", "[SEP]", "[MASK]"] if family == "bert" else \
            ["<pad>", "<unk>", "<s>", "</s>", "<mask>"]
        tok, vocab = _tokenizer(specials, f"{specials[2]} $A {specials[3]}")
        names = dict(zip(("pad_token", "unk_token", "cls_token", "sep_token", "mask_token"), specials))
        model = tf.BertForMaskedLM(tf.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                                 num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                                                 pad_token_id=0, initializer_range=0.3))
    elif family == "roberta":                # RoBERTa's ids: <s> 0, <pad> 1, </s> 2; positions start at 2
        tok, vocab = _tokenizer(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], "<s> $A </s>")
        names = dict(bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>", cls_token="<s>",
                     sep_token="</s>", mask_token="<mask>")
        model = tf.RobertaForMaskedLM(tf.RobertaConfig(
            vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=66, pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1,
            initializer_range=0.3))
    elif family == "distilbert":             # the paper's sinusoids as its position table (sinusoidal_pos_embds)
        specials = ["[PAD]", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
        tok, vocab = _tokenizer(specials, "[CLS] $A [SEP]")
        names = dict(zip(("pad_token", "unk_token", "cls_token", "sep_token", "mask_token"), specials))
        model = tf.DistilBertForMaskedLM(tf.DistilBertConfig(
            vocab_size=len(vocab), dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64,
            pad_token_id=0, sinusoidal_pos_embds=True, initializer_range=0.3))
    elif family == "marian":
        tok, vocab = _tokenizer(["<pad>", "</s>", "<unk>"], "$A </s>")
        names = dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
        model = _marian(len(vocab), len(vocab), pad=0, eos=1, positions=64)
    elif family in ("bart", "mbart"):
        tok, vocab = _tokenizer(["<pad>", "<s>", "</s>", "<unk>"], "<s> $A </s>")
        names = dict(pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>")
        cls = (tf.BartConfig, tf.BartForConditionalGeneration) if family == "bart" else \
            (tf.MBartConfig, tf.MBartForConditionalGeneration)
        model = cls[1](cls[0](vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2,
                              encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                              decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
                              eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2, init_std=0.3,
                              scale_embedding=family == "mbart"))
    elif family == "t5":
        tok, vocab = _tokenizer(["<pad>", "</s>", "<unk>"], "$A </s>")
        names = dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
        model = _t5(len(vocab), **config)
    else:
        tok, vocab = _tokenizer(["<s>", "</s>", "<unk>"], "<s> $A")
        names = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>")
        model = _llama(family, len(vocab), bos=0, eos=1, **config)
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tf.PreTrainedTokenizerFast(tokenizer_object=tok, **names).save_pretrained(folder)
    return folder


def _marian(vocab: int, decoder_vocab: int, pad: int, eos: int, positions: int, shared: bool = True):
    import transformers as tf
    return tf.MarianMTModel(tf.MarianConfig(
        vocab_size=vocab, decoder_vocab_size=decoder_vocab, share_encoder_decoder_embeddings=shared,
        d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=positions, pad_token_id=pad, eos_token_id=eos,
        decoder_start_token_id=pad, forced_eos_token_id=eos, init_std=0.3))


def _t5(vocab: int, **config):
    import transformers as tf
    return tf.T5ForConditionalGeneration(tf.T5Config(
        vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
        relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
        initializer_factor=3.0, **config))


def _llama(family: str, vocab: int, bos: int, eos: int, **config):
    import transformers as tf
    import torch
    cls = {"llama": (tf.LlamaConfig, tf.LlamaForCausalLM), "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
           "qwen3": (tf.Qwen3Config, tf.Qwen3ForCausalLM), "mistral": (tf.MistralConfig, tf.MistralForCausalLM),
           "gemma": (tf.GemmaConfig, tf.GemmaForCausalLM), "gemma2": (tf.Gemma2Config, tf.Gemma2ForCausalLM),
           "phi3": (tf.Phi3Config, tf.Phi3ForCausalLM), "gemma3": (tf.Gemma3TextConfig, tf.Gemma3ForCausalLM)}[family]
    if family == "qwen3":       # heads wider than d_model / heads, as Qwen3's (0.6B: 16 × 128 of 1024)
        config = {"head_dim": 16, **config}
    elif family == "phi3":      # q, k and v fused, k and v of 2 heads; three quarters of each head turned
        config = {"pad_token_id": None, "sliding_window": None,
                  "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.75},
                  **config}
    elif family == "gemma3":    # a local layer, then a global one, turned by two bases
        config = {"head_dim": 8, "query_pre_attn_scalar": 8, "sliding_window": 64, "pad_token_id": None,
                  "layer_types": ["sliding_attention", "full_attention"],
                  "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                      "sliding_attention": {"rope_type": "default", "rope_theta": 10.0}}, **config}
    elif family == "gemma":     # (its default head_dim is 256)
        config = {"head_dim": 8, "pad_token_id": None, **config}
    elif family == "gemma2":    # caps low enough to change the scores and logits; a window wider than the positions
        config = {"head_dim": 8, "query_pre_attn_scalar": 8, "attn_logit_softcapping": 2.0,
                  "final_logit_softcapping": 3.0, "sliding_window": 64, "pad_token_id": None, **config}
    model = cls[1](cls[0](**{"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                             "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
                             "bos_token_id": bos, "eos_token_id": eos, "initializer_range": 0.3, **config}))
    with torch.no_grad():       # the norms' γ start at 1: made to differ, so that one left out would show
        for name, p in model.named_parameters():
            if name.endswith(("norm.weight", "layernorm.weight")):   # (Gemma's multiply by 1 + w)
                p.uniform_(0.5, 2.0).sub_(1.0 if family.startswith("gemma") else 0.0)
    return model


def train_sentencepiece(lines: list[str], path: Path, vocab_size: int = 100, **ids) -> list[str]:
    """A unigram sentencepiece model trained on lines, written to path; its pieces, by id (ids: unk_id, pad_id, ...;
    -1 leaves a special out)."""
    import io

    import sentencepiece as spm
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=vocab_size,
                                   character_coverage=1.0, hard_vocab_limit=False, num_threads=1, minloglevel=2,
                                   **({"bos_id": -1, "eos_id": -1, "pad_id": -1, "unk_id": 0} | ids))
    path.write_bytes(model.getvalue())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def _build_sentencepiece(family: str, folder: Path) -> Path:
    """A folder as the hub ships it: weights and config from save_pretrained, the tokenizer as sentencepiece files."""
    folder.mkdir(parents=True, exist_ok=True)
    if family.startswith("marian"):
        src = [p for p in train_sentencepiece(ENGLISH, folder / "source.spm") if p != "<unk>"]
        tgt = [p for p in train_sentencepiece(FRENCH, folder / "target.spm") if p != "<unk>"]
        separate = family == "marian-separate"
        if separate:        # two vocabularies, the specials at the same ids in both
            vocab = {p: i for i, p in enumerate(["</s>", "<unk>", "<pad>"] + src)}
            target = {p: i for i, p in enumerate(["</s>", "<unk>", "<pad>"] + tgt)}
            (folder / "target_vocab.json").write_text(json.dumps(target), encoding="utf-8")
        else:               # OPUS-MT's layout: </s> 0, <unk> 1, the pieces of both languages, <pad> last
            vocab = {p: i for i, p in enumerate(["</s>", "<unk>", *dict.fromkeys(src + tgt), "<pad>"])}
            target = vocab
        (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
        (folder / "tokenizer_config.json").write_text(json.dumps(
            {"source_lang": "en", "target_lang": "fr", "model_max_length": 512, "separate_vocabs": separate}))
        pad = vocab["<pad>"]
        model = _marian(len(vocab), len(target), pad=pad, eos=0, positions=512, shared=not separate)
        # OPUS-MT's generation settings: the window's decoding settings replace num_beams, the rest applies
        model.generation_config.update(bad_words_ids=[[pad]], max_length=512, num_beams=4, bos_token_id=0)
    elif family == "t5-spm":                 # spiece.model alone; the tokenizer adds 100 sentinel tokens after it
        pieces = train_sentencepiece(ENGLISH + FRENCH, folder / "spiece.model", pad_id=0, eos_id=1, unk_id=2)
        model = _t5(len(pieces) + 100)
    else:                                    # Llama: tokenizer.model with byte fallback, and its tokenizer_config
        pieces = train_sentencepiece(ENGLISH + FRENCH, folder / "tokenizer.model", vocab_size=320, model_type="bpe",
                                     byte_fallback=True, unk_id=0, bos_id=1, eos_id=2)
        (folder / "tokenizer_config.json").write_text(json.dumps(
            {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
             "add_bos_token": True}))
        model = _llama("llama", len(pieces), bos=1, eos=2)
    model.eval().save_pretrained(folder)
    return folder


AUTO = {"gpt2": "AutoModelForCausalLM", "gpt_neo": "AutoModelForCausalLM", "gpt_neox": "AutoModelForCausalLM",
        "phi": "AutoModelForCausalLM", "opt": "AutoModelForCausalLM", "llama": "AutoModelForCausalLM",
        "qwen2": "AutoModelForCausalLM", "qwen3": "AutoModelForCausalLM", "mistral": "AutoModelForCausalLM",
        "gemma": "AutoModelForCausalLM", "gemma2": "AutoModelForCausalLM", "phi3": "AutoModelForCausalLM",
        "gemma3": "AutoModelForCausalLM",
        "bert": "BertForMaskedLM", "roberta": "RobertaForMaskedLM", "distilbert": "DistilBertForMaskedLM",
        "marian": "MarianMTModel", "bart": "AutoModelForSeq2SeqLM", "mbart": "AutoModelForSeq2SeqLM", "t5": "T5ForConditionalGeneration"}


def differ(a, b, atol: float = 1e-4) -> bool:
    """Whether two runs' attention (heads, rows, columns) differ where both have rows and columns: two outputs of a
    model (positions on and off) may end at different lengths."""
    import numpy as np
    rows, cols = (min(x, y) for x, y in zip(a.shape[1:], b.shape[1:]))
    return not np.allclose(a[:, :rows, :cols], b[:, :rows, :cols], atol=atol)


def reference_model(family: str, folder: Path):
    """The model as transformers itself opens it (eager attention), independent of the app's loaded copy."""
    import transformers as tf
    m = getattr(tf, AUTO[BASE.get(family, family)]).from_pretrained(str(folder), attn_implementation="eager")
    return m.eval()


def tokenizer(folder: Path):
    """The folder's tokenizer as transformers opens it (MarianTokenizer's warning about sacremoses silenced)."""
    import warnings

    import transformers as tf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tf.AutoTokenizer.from_pretrained(str(folder))


def reference(family: str, folder: Path, result) -> tuple[dict, "object"]:
    """({attention kind: per layer (H, Tq, Tk) numpy}, logits (T, V) numpy) of transformers' own output_attentions
    on the same ids the app's traced pass read."""
    import torch
    tok = tokenizer(folder)
    m = reference_model(family, folder)
    text, meta = result.trace.meta["sentence"], result.trace.meta
    ids = tok(text)["input_ids"]
    with torch.no_grad():
        if family in ENCODER_DECODER:
            start = m.config.decoder_start_token_id
            out = m(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[start] + result.out_ids[:-1]]),
                    output_attentions=True)
            att = {"enc_self": out.encoder_attentions, "dec_self": out.decoder_attentions,
                   "cross": out.cross_attentions}
        elif family in ENCODER_ONLY:
            out = m(input_ids=torch.tensor([ids]), output_attentions=True)
            att = {"self": out.attentions}
        else:
            seq = ids + result.out_ids
            out = m(input_ids=torch.tensor([seq[:-1]]), output_attentions=True)
            att = {"self": out.attentions}
    return {k: [a[0].numpy() for a in v] for k, v in att.items()}, out.logits[0].numpy()


def hub_cache(root: Path, repo_id: str, folder: Path) -> Path:
    """A copy of folder in the hub's cache layout: root/models--org--name/{refs/main, snapshots/<commit>/files}."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = root / f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(folder, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return root


def build_byte_level_gpt2(folder: Path) -> Path:
    """A GPT-2 folder with GPT-2's kind of tokenizer: byte-level BPE, a word's piece carrying the space before it
    ("Ġis"), trained here on ENGLISH."""
    import torch
    import transformers as tf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    torch.manual_seed(0)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(ENGLISH, trainers.BpeTrainer(vocab_size=320, special_tokens=["<|endoftext|>"],
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=64, n_embd=32, n_layer=2,
                                             n_head=4, bos_token_id=0, eos_token_id=0, initializer_range=0.3))
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tf.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                               eos_token="<|endoftext|>").save_pretrained(folder)
    return folder
