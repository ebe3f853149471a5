"""A caption and the equation of every stage of the pipeline, for presentation mode and the map's tooltips."""
from __future__ import annotations

from .state import Stage

EQUATIONS = {
    ("src_embed", ""): ("Each source token becomes a vector: its embedding, scaled by √d_model, plus the positional "
                        "encoding of its place in the sentence.",
                        "x_i = √d_model · E[token_i] + PE(i),   PE(pos, 2i) = sin(pos / 10000^(2i/d)),  "
                        "PE(pos, 2i+1) = cos(pos / 10000^(2i/d))"),
    ("enc", "self"): ("Every source token looks at every source token: how much each one matters is the softmax of "
                      "query·key scores; the result mixes their values. Then Add & Norm.",
                      "Attention(Q, K, V) = softmax(QKᵀ / √d_k) V,   out = LayerNorm(x + Concat(head₁…head_h) W_O)"),
    ("enc", "ffn"): ("Each position alone goes through the same two-layer network, then Add & Norm.",
                     "FFN(x) = max(0, x W₁ + b₁) W₂ + b₂,   out = LayerNorm(x + FFN(x))"),
    ("tgt_embed", ""): ("The translation so far, shifted right behind <s>, is embedded the same way.",
                        "y_t = √d_model · E_y[token_t] + PE(t)"),
    ("dec", "self"): ("Each target token looks only at itself and the tokens before it: the future is masked.",
                      "softmax(QKᵀ / √d_k + M) V,  M_ij = −∞ for j > i;   out = LayerNorm(y + MaskedMHA(y))"),
    ("dec", "cross"): ("Each target token asks the encoder's output which source words matter now: queries from the "
                       "decoder, keys and values from the encoder (memory).",
                       "softmax(Q_dec K_encᵀ / √d_k) V_enc,   out = LayerNorm(y + MHA(y, memory))"),
    ("dec", "ffn"): ("The same position-wise feed-forward network, then Add & Norm.",
                     "FFN(y) = max(0, y W₁ + b₁) W₂ + b₂,   out = LayerNorm(y + FFN(y))"),
    ("output", ""): ("A linear map to the target vocabulary and a softmax give the next token's probabilities.",
                     "P(y_{t+1} | y_≤t, x) = softmax(h_t W_out + b_out)"),
}
LAYERNORM = "LayerNorm(v) = γ ⊙ (v − μ) / σ + β"


def caption(stage: Stage) -> tuple[str, str, str]:
    """(title, one-sentence explanation, equation) of a stage."""
    text, equation = EQUATIONS[(stage.stack, stage.sublayer)]
    return stage.title, text, equation
