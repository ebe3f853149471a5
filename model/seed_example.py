"""The built-in `seed-example` model: the worked example of the note "Math Underlying Transformers".

d_model = 2, one head, one layer per stack, no embedding scaling, unscaled scores, a fixed position table.
x = e + p for "The cat sat on the mat"; with the W_Q, W_K, W_V below, "cat" gets Q = [0.6, 0.8],
K = [1.4, 1.6], V = [2.2, 2.4] and score(cat -> cat) = 2.12; "sat" gets K = [1.7, 2.0], V = [2.9, 3.2],
so score(cat -> sat) = 2.62 (the note's 3.92 comes from its slip K_sat = [2.8, 2.8]). See docs/seed-example.md.
"""
from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

from .checkpoint import LoadedModel
from .config import ModelConfig
from .tokenizer import SPECIALS, WORD_START, TextTokenizer
from .transformer import Transformer

SENTENCE = "The cat sat on the mat"
WORDS = ["The", "cat", "sat", "on", "the", "mat"]
# token embeddings e (2-d) and the position table p; x = e + p
EMBEDDINGS = {"The": [0.5, 0.2], "cat": [0.9, 0.9], "sat": [1.3, 0.8], "on": [0.3, 0.6],
              "the": [0.5, 0.2], "mat": [0.8, 1.0]}
POSITIONS = [[0.1 * pos, 0.1 * pos] for pos in range(8)]
# the note's convention: q = x . W_Q with x a row vector, so W is (d_in, d_out)
W_Q = [[0.2, 0.4], [0.4, 0.4]]
W_K = [[0.6, 0.8], [0.8, 0.8]]
W_V = [[1.4, 1.6], [0.8, 0.8]]
# what the note itself wrote for "sat" (arithmetic slips), kept to show where they differ
NOTE_SAT = {"K": [2.8, 2.8], "V": [2.2, 2.4], "score_cat_sat": 3.92}


def _word_tokenizer() -> TextTokenizer:
    vocab = {tok: i for i, tok in enumerate(SPECIALS + [WORD_START + w for w in WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    return TextTokenizer(tok)


def build_seed_example() -> LoadedModel:
    tok = _word_tokenizer()
    V = tok.vocab_size
    cfg = ModelConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=2, h=1, d_ff=2, N_enc=1, N_dec=1,
                      max_len=len(POSITIONS), dropout=0.0, pe="learned", scale_embedding=False, scale_scores=False)
    torch.manual_seed(0)
    model = Transformer(cfg)
    eye = torch.eye(2)
    with torch.no_grad():
        emb = torch.zeros(V, 2)
        for w, e in EMBEDDINGS.items():
            emb[tok.tok.token_to_id(WORD_START + w)] = torch.tensor(e)
        model.src_embed.weight.copy_(emb)
        model.tgt_embed.weight.copy_(emb)
        model.pe.copy_(torch.tensor(POSITIONS))
        for attn in (model.encoder[0].self_attn, model.decoder[0].self_attn, model.decoder[0].cross_attn):
            for lin, W in ((attn.W_Q, W_Q), (attn.W_K, W_K), (attn.W_V, W_V), (attn.W_O, eye.tolist())):
                lin.weight.copy_(torch.tensor(W).T)      # nn.Linear computes x W^T + b
                lin.bias.zero_()
        for layer in (*model.encoder, *model.decoder):
            layer.ffn.W_1.weight.copy_(eye); layer.ffn.W_1.bias.zero_()
            layer.ffn.W_2.weight.copy_(eye); layer.ffn.W_2.bias.zero_()
        model.generator.weight.copy_(emb)
        model.generator.bias.zero_()
    model.eval()
    return LoadedModel("seed-example", None, model, tok, tok)
