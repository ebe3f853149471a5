"""Tiny random Hugging Face models of each family, built from a config with a word-level tokenizer and saved with
`save_pretrained`, as a user's folder would be (nothing is downloaded)."""
from __future__ import annotations

from pathlib import Path

WORDS = ("the cat sat on mat a red car is fast i love you where station dog runs she reads book we eat bread house "
         "big . , le chat était assis sur tapis une voiture rouge est rapide").split()
FAMILIES = ("gpt2", "bert", "marian", "bart", "mbart", "t5", "llama", "qwen2", "mistral")
ENCODER_DECODER = ("marian", "bart", "mbart", "t5")


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
    if family == "gpt2":
        tok, vocab = _tokenizer(["<|endoftext|>", "<unk>"], None)
        names = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
        model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(vocab), n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                                 bos_token_id=0, eos_token_id=0, initializer_range=0.3))
    elif family == "bert":
        tok, vocab = _tokenizer(["[PAD]", "<unk>", "[CLS]", "[SEP]", "[MASK]"], "[CLS] $A [SEP]")
        names = dict(pad_token="[PAD]", unk_token="<unk>", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
        model = tf.BertForMaskedLM(tf.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                                 num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                                                 pad_token_id=0, initializer_range=0.3))
    elif family == "marian":
        tok, vocab = _tokenizer(["<pad>", "</s>", "<unk>"], "$A </s>")
        names = dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
        model = tf.MarianMTModel(tf.MarianConfig(
            vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
            max_position_embeddings=64, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
            forced_eos_token_id=1, init_std=0.3))
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
        model = tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=len(vocab), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
            relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
            initializer_factor=3.0, **config))
    else:
        tok, vocab = _tokenizer(["<s>", "</s>", "<unk>"], "<s> $A")
        names = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>")
        cls = {"llama": (tf.LlamaConfig, tf.LlamaForCausalLM), "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
               "mistral": (tf.MistralConfig, tf.MistralForCausalLM)}[family]
        model = cls[1](cls[0](vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                              bos_token_id=0, eos_token_id=1, initializer_range=0.3, **config))
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tf.PreTrainedTokenizerFast(tokenizer_object=tok, **names).save_pretrained(folder)
    return folder


AUTO = {"gpt2": "AutoModelForCausalLM", "llama": "AutoModelForCausalLM", "qwen2": "AutoModelForCausalLM",
        "mistral": "AutoModelForCausalLM", "bert": "BertForMaskedLM", "marian": "MarianMTModel",
        "bart": "AutoModelForSeq2SeqLM", "mbart": "AutoModelForSeq2SeqLM", "t5": "T5ForConditionalGeneration"}


def reference_model(family: str, folder: Path):
    """The model as transformers itself opens it (eager attention), independent of the app's loaded copy."""
    import transformers as tf
    m = getattr(tf, AUTO[family]).from_pretrained(str(folder), attn_implementation="eager")
    return m.eval()


def reference(family: str, folder: Path, result) -> tuple[dict, "object"]:
    """({attention kind: per layer (H, Tq, Tk) numpy}, logits (T, V) numpy) of transformers' own output_attentions
    on the same ids the app's traced pass read."""
    import torch
    import transformers as tf
    tok = tf.AutoTokenizer.from_pretrained(str(folder))
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
        elif family == "bert":
            out = m(input_ids=torch.tensor([ids]), output_attentions=True)
            att = {"self": out.attentions}
        else:
            seq = ids + result.out_ids
            out = m(input_ids=torch.tensor([seq[:-1]]), output_attentions=True)
            att = {"self": out.attentions}
    return {k: [a[0].numpy() for a in v] for k, v in att.items()}, out.logits[0].numpy()
