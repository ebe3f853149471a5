"""Schemas of the three model layouts, with their labels, captions and equations written once for every family.

    encoder_decoder(...)   the paper's model (and Marian, BART, T5): stacks "enc" and "dec", kinds enc_self,
                           dec_self and cross
    decoder_only(...)      GPT-2, Llama: one causal stack "dec" on the target side, kind "self"
    encoder_only(...)      BERT: one bidirectional stack "enc" on the source side, kind "self"

Norm place and kind, positions and grouped-query heads change the texts, so that the caption and the math
always describe the model that is open. Nothing here imports torch.
"""
from __future__ import annotations

from ..schema import (ATTENTION_BIDIRECTIONAL, ATTENTION_CAUSAL, ATTENTION_CROSS, DECODER_ONLY, DECODER_STREAM,
                      ENCODER_DECODER, ENCODER_ONLY, FEED_FORWARD, GATED_MLP, LAYER_NORM, NORM_AFTER, RMS_NORM, Schema,
                      Stack, Sublayer)

NORM_EQUATIONS = {LAYER_NORM: "LayerNorm(v) = γ ⊙ (v − μ) / σ + β",
                  RMS_NORM: "RMSNorm(v) = γ ⊙ v / √(mean(v²) + ε)"}


class Shape:
    """What the texts depend on: the norm, the positions, the heads."""

    def __init__(self, norm: str = LAYER_NORM, norm_place: str = NORM_AFTER, positions: str = "sinusoidal",
                 n_heads: int = 4, n_kv_heads: int | None = None, scale_embedding: bool = True,
                 ffn: str = FEED_FORWARD, activation: str | None = None, scale_scores: bool = True,
                 biases: bool = True, tied: bool = False, output_bias: bool = True, embed_norm: bool = False,
                 segments: bool = False, position_offset: int = 0, ffn_biases: bool | None = None,
                 parallel: bool = False, shared_norm: bool = False, rotary_share: float = 1.0,
                 qk_norm: bool = False, sandwich: bool = False, score_cap: float = 0.0, logit_cap: float = 0.0,
                 score_scalar: float = 0.0):
        self.norm, self.place, self.positions = norm, norm_place, positions
        self.biases = biases                 # the attention projections and the FFN's linear maps add a bias
        self.ffn_biases = biases if ffn_biases is None else ffn_biases      # the FFN's alone (GPT-Neo: q, k, v none)
        self.tied, self.output_bias = tied, output_bias     # the output layer: the embedding table transposed?
        # T5 does not divide q·kᵀ by √d_k; Gemma 2 27B divides it by √s, s its query_pre_attn_scalar
        self.scale = (" / √s" if score_scalar else " / √d_k") if scale_scores else ""
        self.score_scalar = score_scalar
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads or n_heads
        self.scale_embedding, self.ffn = scale_embedding, ffn
        self.activation = activation or ("SiLU" if ffn == GATED_MLP else "ReLU")
        # x = LayerNorm(e + p + s) (BERT and its kin; BART without s): the sum is normalised, and BERT adds its
        # segment's vector; p = P[i + offset] where the table's rows start after the pad token's (RoBERTa, BART)
        self.embed_norm, self.segments, self.position_offset = embed_norm, segments, position_offset
        # pre-norm only: the FFN reads the layer's input beside the attention (Schema.parallel_residual)
        self.parallel = parallel
        self.shared_norm = shared_norm        # a parallel layer's one norm, read by both sublayers (Phi)
        self.rotary_share = rotary_share      # the share of each head's dimensions rotary positions turn
        self.qk_norm = qk_norm                # each head's q and k normalised before the rotation (Qwen3)
        self.sandwich = sandwich              # pre-norm with a second norm on each sublayer's output (Gemma 2)
        self.score_cap, self.logit_cap = score_cap, logit_cap     # soft caps c · tanh(s / c) (Gemma 2); 0: none

    @property
    def schema_args(self) -> dict:
        """The Schema's fields that say how the embedding is computed."""
        return dict(scale_embedding=self.scale_embedding, embedding_norm=self.embed_norm, segment=self.segments,
                    position_offset=self.position_offset, parallel_residual=self.parallel, qk_norm=self.qk_norm,
                    score_cap=self.score_cap, score_scalar=self.score_scalar)

    def summed(self, terms: str) -> str:
        """The embedding's sum as the model computes it: "LayerNorm(E[token] + P[i] + S[0])" for BERT."""
        terms += " + S[0]" if self.segments else ""
        return f"LayerNorm({terms})" if self.embed_norm else terms

    @property
    def after_sum(self) -> str:
        """The caption's words for what follows the sum ("" where nothing does)."""
        segment = " and its segment's (every token is in segment 0)" if self.segments else ""
        return segment + (", then a LayerNorm of the sum" if self.embed_norm else "")

    @property
    def post(self) -> bool:
        return self.place == NORM_AFTER

    def around(self, inner: str, x: str = "x") -> str:
        """The residual and the norm around a sublayer: LayerNorm(x + f(x)) after, x + f(Norm(x)) before."""
        if self.post:
            return f"out = {self.norm}({x} + {inner.format(x=x)})"
        if self.sandwich:
            return f"out = {x} + {self.norm}({inner.format(x=f'{self.norm}({x})')})   (a norm before, one after)"
        return f"out = {x} + {inner.format(x=f'{self.norm}({x})')}"

    @property
    def concat_heads(self) -> str:
        """The heads' outputs joined and projected, with the projection's bias where the model has one (the seed
        model's b_O reaches 0.62, and the caption had left it out beside the FFN's b₁, b₂: QA as a lecturer)."""
        return "Concat(head₁…head_h) W_O" + (" + b_O" if self.biases else "")

    def beside(self, inner: str) -> str:
        """A parallel layer's feed-forward sublayer: it adds f(Norm₂(x)) to h = x + Attention(Norm₁(x)), both read
        from the layer's input x."""
        if self.shared_norm:
            return (f"out = h + {inner.format(x=f'{self.norm}(x)')},   h = x + Attention({self.norm}(x))   "
                    f"(x: the layer's input; one {self.norm} for both)")
        return (f"out = h + {inner.format(x=f'{self.norm}₂(x)')},   h = x + Attention({self.norm}₁(x))   "
                "(x: the layer's input)")

    @property
    def then(self) -> str:
        if self.post:
            return "Then Add & Norm."
        if self.parallel:        # (the attention's caption said nothing of the FFN beside it, QA)
            return (f"Its input was normalised first ({self.norm}); the feed-forward network reads the same input "
                    "beside it, and both results are added to the residual stream.")
        if self.sandwich:
            return (f"Its input was normalised first ({self.norm}), and its output by a second {self.norm}; the "
                    "result is added to the residual stream.")
        return f"Its input was normalised first ({self.norm}); the result is added to the residual stream."

    @property
    def rotated(self) -> str:
        """Which dimensions of a query or key rotary positions turn: all, or the first share of each head's."""
        if self.rotary_share >= 1:
            return "every query and key"
        return f"the first {self.rotary_share:.0%} of each query's and key's dimensions (the rest are not turned)"

    @property
    def scores(self) -> str:
        q, k = ("N_q(Q)", "N_k(K)") if self.qk_norm else ("Q", "K")
        q, k = (f"R({q})", f"R({k})") if self.positions == "rotary" else (q, k)
        bias = " + B_rel" if self.positions == "relative" else ""
        if self.score_cap:
            return f"softmax(c·tanh({q}{k}ᵀ{self.scale}{bias} / c)"
        return f"softmax({q}{k}ᵀ{self.scale}{bias}"

    def output(self, given: str, h: str, table: str) -> str:
        """The output layer's equation: P(… | given) = softmax(h W_out + b_out), or with the embedding table
        transposed when the output is tied to it (the paper's weight sharing)."""
        weights = f"{table}ᵀ" if self.tied else "W_out"
        logits = f"{h} {weights}{' + b_out' if self.output_bias else ''}"
        if self.logit_cap:
            return (f"P({given}) = softmax(c·tanh({logits} / c)),   c = {self.logit_cap:g}: the logits capped "
                    "softly")
        return f"P({given}) = softmax({logits})"

    @property
    def equation_notes(self) -> str:
        """What the attention's equation adds: shared key/value heads, q and k normalised per head, scores capped."""
        g = self.n_heads // self.n_kv_heads
        shared = f"; {g} query heads share each key/value head" if g > 1 else ""
        return shared + (f"; N_q, N_k: an {self.norm} of each head's query and key (γ of their own)"
                         if self.qk_norm else "") + \
            (f"; c = {self.score_cap:g}: the scores capped softly" if self.score_cap else "") + \
            (f"; s = {self.score_scalar:g}: the model's scale for q·kᵀ, not d_k" if self.score_scalar else "") + \
            ("; the scores not divided by √d_k" if not self.scale else "")   # (read as a typo of the paper's: QA)

    def embedding(self, noun: str, symbol: str, table: str, pos: str) -> tuple[str, str]:
        """(caption, equation) of a stack's embedding."""
        scale = "√d_model · " if self.scale_embedding else ""
        scaled = ", scaled by √d_model," if self.scale_embedding else ""
        if self.positions == "sinusoidal":
            return (f"Each {noun} becomes a vector: its embedding{scaled} plus the positional encoding of its place "
                    f"in the sentence{self.after_sum}.",
                    # k, not i, counts the dimensions' pairs: the source's position is i (a class read PE(i) as
                    # PE(pos, i), QA)
                    f"{symbol}_{pos} = {self.summed(f'{scale}{table}[token_{pos}] + PE({pos})')},   PE(pos, 2k) = "
                    "sin(pos / 10000^(2k/d_model)),  PE(pos, 2k+1) = cos(pos / 10000^(2k/d_model))")
        if self.positions == "learned":
            # (the seed example's table is set by hand, not learned: "a table of the model" says both)
            row = f"{pos} + {self.position_offset}" if self.position_offset else pos
            rows = f"; its rows start at {self.position_offset}" if self.position_offset else ""
            return (f"Each {noun} becomes a vector: its embedding{scaled} plus the vector of its place, from a table "
                    f"of the model's weights{self.after_sum}.",
                    f"{symbol}_{pos} = {self.summed(f'{scale}{table}[token_{pos}] + P[{row}]')}   (P: one vector per "
                    f"place, a table of the weights{rows})")
        where = {"rotary": f"positions enter later, as rotations R of {self.rotated} (RoPE)",
                 "relative": "positions enter later, as a learned bias per head on the attention scores",
                 "none": "the model is given no positions"}[self.positions]
        return (f"Each {noun} becomes a vector: its embedding; {where}.", f"{symbol}_{pos} = {scale}{table}[token_{pos}]")

    def embedding_off(self, noun: str, symbol: str, table: str, pos: str) -> tuple[str, str]:
        """(caption, equation) of a stack's embedding in a run with its positions switched off; ("", "") where the
        model adds none to the embedding (rotary and relative positions are switched off further on)."""
        if self.positions not in ("sinusoidal", "learned"):
            return "", ""
        scale = "√d_model · " if self.scale_embedding else ""
        scaled = " scaled by √d_model" if self.scale_embedding else ""
        added = "positional encoding" if self.positions == "sinusoidal" else "place's vector"
        return (f"Each {noun} becomes a vector: its embedding{scaled}{self.after_sum}. The {added} is switched off in "
                "this run: nothing in the vector says where the token stands.",
                f"{symbol}_{pos} = {self.summed(f'{scale}{table}[token_{pos}]')}   (positions switched off)")

    def feed_forward(self, key: str, title: str, first: bool, x: str = "x") -> Sublayer:
        if self.ffn == GATED_MLP:
            inner, eq_name = f"({self.activation}({{x}} W_gate) ⊙ {{x}} W_up) W_down", "MLP"
        else:
            inner, eq_name = "FFN({x})", "FFN"
        caption = ("Each position alone goes through the same two-layer network, then Add & Norm." if first and self.post
                   else "The same position-wise feed-forward network, then Add & Norm." if self.post
                   else "Beside the attention, not after it: each position of the layer's input, normalised by "
                        f"{'the same norm as for the attention' if self.shared_norm else 'a norm of its own'}, goes "
                        "through the same network; both results are added to the stream."
                   if self.parallel
                   else f"Each position alone goes through the same {'gated ' if self.ffn == GATED_MLP else ''}"
                        f"network. {self.then}")
        b1, b2 = (" + b₁", " + b₂") if self.ffn_biases else ("", "")
        act = f"max(0, {x} W₁{b1})" if self.activation == "ReLU" else f"{self.activation}({x} W₁{b1})"
        ffn_def = f"FFN({x}) = {act} W₂{b2},   " if self.ffn == FEED_FORWARD else ""
        short = ("Feed-forward → Add & Norm" if self.post else f"{eq_name} (the same {self.norm})" if self.shared_norm
                 else f"{self.norm} → {eq_name}")       # Phi's map drew a second norm its layers do not have (QA)
        short += f" → {self.norm}" if self.sandwich else ""
        return Sublayer(key, self.ffn, title, short,
                        "feed-forward", caption,
                        ffn_def + (self.beside(inner) if self.parallel else self.around(inner, x)))


def _embed_texts(shape: Shape, tokens: str) -> dict:
    words = ("source token", "x", "E", "i") if tokens == "src" else ("target token", DECODER_STREAM, "E_y", "t")
    (cap, eq), (cap_off, eq_off) = shape.embedding(*words), shape.embedding_off(*words)
    return dict(embed_stage=f"{tokens}_embed",
                embed_title=f"{'Source' if tokens == 'src' else 'Target'} embedding + positional encoding",
                embed_caption=cap, embed_equation=eq, embed_caption_off=cap_off, embed_equation_off=eq_off)


def _attention_sublayer(shape: Shape, key: str, kind: str, name: str, title: str, label: str, file: str,
                        caption: str, equation: str, stage_title: str = "") -> Sublayer:
    short = f"{title.split(' ', 1)[1] if title.startswith(('Encoder', 'Decoder')) else title}"
    short = short[0].upper() + short[1:]
    short = f"{short} → Add & Norm" if shape.post else f"{shape.norm} → {short}"
    short += f" → {shape.norm}" if shape.sandwich else ""
    return Sublayer(key, kind, title, short, title.lower() if not title.startswith(("Encoder", "Decoder"))
                    else title.split(" ", 1)[1], caption, equation + shape.equation_notes, name, label, file,
                    stage_title, position_bias=shape.positions == "relative" and kind != ATTENTION_CROSS)


def encoder_decoder(family: str, n_enc: int, n_dec: int, d_model: int, n_heads: int, d_ff: int,
                    special: dict | None = None, **shape_args) -> Schema:
    """The paper's layout: an encoder over the source and a decoder (masked self, cross, feed-forward)."""
    s = Shape(n_heads=n_heads, **shape_args)
    enc_self = _attention_sublayer(
        s, "self", ATTENTION_BIDIRECTIONAL, "enc_self", "Encoder self-attention", "Encoder self", "encoder_self",
        "Every source token looks at every source token: how much each one matters is the softmax of query·key "
        f"scores; the result mixes their values. {s.then}",
        f"Attention(Q, K, V) = {s.scores}) V,   " + s.around(s.concat_heads))
    dec_self = _attention_sublayer(
        s, "self", ATTENTION_CAUSAL, "dec_self", "Decoder masked self-attention", "Decoder masked self",
        "decoder_self", "Each target token looks only at itself and the tokens before it: the future is masked.",
        f"{s.scores} + M) V,  M_ij = −∞ for j > i;   " + s.around("MaskedMHA({x})", DECODER_STREAM))
    cross = _attention_sublayer(
        s, "cross", ATTENTION_CROSS, "cross", "Cross-attention", "Cross (decoder → encoder)", "cross",
        "Each target token asks the encoder's output which source words matter now: queries from the decoder, "
        "keys and values from the encoder (memory).",
        f"softmax(Q_dec K_encᵀ{s.scale}) V_enc,   " + s.around("MHA({x}, memory)", DECODER_STREAM),
        stage_title="Decoder cross-attention")
    enc = Stack("enc", "Encoder", n_enc, (enc_self, s.feed_forward("ffn", "Encoder feed-forward", True)),
                "src", "source token", **_embed_texts(s, "src"))
    dec_cap, dec_eq = s.embedding("target token", DECODER_STREAM, "E_y", "t")
    dec_off = s.embedding_off("target token", DECODER_STREAM, "E_y", "t")[1]
    dec_ffn = s.feed_forward("ffn", "Decoder feed-forward", False, DECODER_STREAM)
    dec = Stack("dec", "Decoder", n_dec, (dec_self, cross, dec_ffn),
                "tgt", "decoder input token", "tgt_embed", "Target embedding + positional encoding",
                "The translation so far, shifted right behind <s>, is embedded the same way.",
                dec_eq.split(",   PE(")[0], by_step=True,
                embed_caption_off="The translation so far, shifted right behind <s>, is embedded the same way, its "
                                  "positions switched off too." if dec_off else "", embed_equation_off=dec_off,
                stream=DECODER_STREAM)
    return Schema(family, ENCODER_DECODER, (enc, dec), d_model, n_heads, s.n_kv_heads, d_model // n_heads, d_ff,
                  s.norm, s.place, s.positions, dict(special or {}),
                  output_caption="A linear map to the target vocabulary and a softmax give the next token's "
                                 "probabilities.",
                  output_equation=s.output("y_{t+1} | y_≤t, x", "h_t", "E_y"),
                  norm_equation=NORM_EQUATIONS[s.norm], projection_bias=s.biases, **s.schema_args)


def decoder_only(family: str, n_layers: int, d_model: int, n_heads: int, d_ff: int, special: dict | None = None,
                 **shape_args) -> Schema:
    """A language model: one causal stack; row t predicts token t+1."""
    s = Shape(n_heads=n_heads, **shape_args)
    attn = _attention_sublayer(
        s, "self", ATTENTION_CAUSAL, "self", "Masked self-attention", "Masked self", "self",
        f"Each token looks only at itself and the tokens before it: the future is masked. {s.then}",
        f"{s.scores} + M) V,  M_ij = −∞ for j > i;   " + s.around("MaskedMHA({x})"))
    cap, eq = s.embedding("token", "x", "E", "t")
    cap_off, eq_off = s.embedding_off("token", "x", "E", "t")
    stack = Stack("dec", "Decoder", n_layers, (attn, s.feed_forward("ffn", "Feed-forward", True)), "tgt", "token",
                  "tgt_embed", "Token embedding" + (" + positional encoding" if s.positions in ("sinusoidal", "learned")
                                                    else ""), cap, eq, by_step=True, embed_caption_off=cap_off,
                  embed_equation_off=eq_off)
    return Schema(family, DECODER_ONLY, (stack,), d_model, n_heads, s.n_kv_heads, d_model // n_heads, d_ff, s.norm,
                  s.place, s.positions, dict(special or {}), output_equation=s.output("x_{t+1} | x_≤t", "h_t", "E"),
                  norm_equation=NORM_EQUATIONS[s.norm], projection_bias=s.biases, **s.schema_args)


def encoder_only(family: str, n_layers: int, d_model: int, n_heads: int, d_ff: int, special: dict | None = None,
                 masked_lm: bool = True, **shape_args) -> Schema:
    """A bidirectional encoder (BERT); with a masked-LM head, the output layer predicts every position's token."""
    s = Shape(n_heads=n_heads, **shape_args)
    attn = _attention_sublayer(
        s, "self", ATTENTION_BIDIRECTIONAL, "self", "Self-attention", "Self", "self",
        "Every token looks at every token: how much each one matters is the softmax of query·key scores; the result "
        f"mixes their values. {s.then}",
        f"Attention(Q, K, V) = {s.scores}) V,   " + s.around(s.concat_heads))
    cap, eq = s.embedding("token", "x", "E", "i")
    cap_off, eq_off = s.embedding_off("token", "x", "E", "i")
    stack = Stack("enc", "Encoder", n_layers, (attn, s.feed_forward("ffn", "Feed-forward", True)), "src", "token",
                  "src_embed", "Token embedding + positional encoding", cap, eq, embed_caption_off=cap_off,
                  embed_equation_off=eq_off)
    return Schema(family, ENCODER_ONLY, (stack,), d_model, n_heads, s.n_kv_heads, d_model // n_heads, d_ff, s.norm,
                  s.place, s.positions, dict(special or {}), has_output=masked_lm,
                  output_title="Linear + softmax (masked-token predictions)",
                  # the masked-LM head's transform (a dense layer, the activation and a norm) before the map to
                  # the vocabulary: BERT's, RoBERTa's and DistilBERT's alike (the equation had left it out)
                  output_caption="A dense layer, " + s.activation + " and " + s.norm + " on each position's vector, "
                                 "then a linear map to the vocabulary and a softmax, give each position's token "
                                 "probabilities: what the model would put there.",
                  output_equation=s.output("x_i | x", f"{s.norm}({s.activation}(h_i W_T + b_T))", "E"),
                  norm_equation=NORM_EQUATIONS[s.norm],
                  projection_bias=s.biases, **s.schema_args)
