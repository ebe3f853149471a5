"""The encoder-decoder transformer of "Attention Is All You Need" (post-LN), able to record its internals."""
from __future__ import annotations

import math

import torch
from torch import nn

from .config import BOS, EOS, PAD, UNK, ModelConfig  # noqa: F401 (the ids are re-exported)
from .layers import DecoderLayer, EncoderLayer



def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]                    # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]            # (1, d/2)
    angle = pos / torch.pow(10000.0, two_i / d_model)                            # (T, d/2)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.float()                                                            # (T, d_model)


def causal_mask(T: int, device=None) -> torch.Tensor:
    """(1, 1, T, T) bool: position i may attend to positions j <= i."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()[None, None]


class Transformer(nn.Module):
    """The encoder-decoder of the math notes (docs/math.md): scaled embeddings plus positions, N encoder and N
    decoder layers of attention and feed-forward sublayers, each followed by Add & Norm, and the output map."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.d_model)
        # share_embeddings: one table for both languages (a joint vocabulary), as fairseq's --share-all-embeddings
        self.tgt_embed = self.src_embed if cfg.share_embeddings else nn.Embedding(cfg.tgt_vocab_size, cfg.d_model)
        if cfg.pe == "learned":
            self.pe = nn.Parameter(torch.randn(cfg.max_len, cfg.d_model) * 0.02)
        else:
            self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.N_enc))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.N_dec))
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size, bias=not cfg.tie_output)
        if cfg.tie_output:
            self.generator.weight = self.tgt_embed.weight
        self.dropout = nn.Dropout(cfg.dropout)
        self.positional = cfg.pe != "none"   # switchable at inference time, to show what position adds
        self._init_weights()

    def _init_weights(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() > 1 and name != "pe":
                # W_Q, W_K, W_V as torch.nn.MultiheadAttention draws them: Xavier over the three stacked
                # (fan-out 3·d_model). Plain Xavier per matrix doubles the initial scores and makes early
                # attention peaky; the torch baseline then learned faster per step (see the en-fr model card).
                stacked = name.endswith(("W_Q.weight", "W_K.weight", "W_V.weight"))
                nn.init.xavier_uniform_(p, gain=0.5 ** 0.5 if stacked else 1.0)
        if self.cfg.tie_output or self.cfg.scale_embedding:
            for emb in (self.src_embed, self.tgt_embed):
                nn.init.normal_(emb.weight, std=self.cfg.d_model ** -0.5)

    # --- inputs -------------------------------------------------------------------------------
    def embed(self, ids: torch.Tensor, table: nn.Embedding, offset: int = 0, record: dict | None = None):
        """Scaled token embedding plus positional encoding, for ids (B, T) starting at position offset."""
        T = ids.shape[1]
        if offset + T > self.cfg.max_len:
            raise ValueError(f"sequence of {offset + T} tokens exceeds the model's maximum of {self.cfg.max_len}")
        e = table(ids)                                                  # (B, T, d_model)
        if self.cfg.scale_embedding:
            e = e * math.sqrt(self.cfg.d_model)
        p = self.pe[offset: offset + T][None]                           # (1, T, d_model)
        if not self.positional:
            p = torch.zeros_like(p)
        x = e + p                                                       # (B, T, d_model)
        if record is not None:
            record.update(embedding=e, pe=p.expand_as(e), x=x)
        return self.dropout(x)

    # --- the two stacks -----------------------------------------------------------------------
    def encode(self, src: torch.Tensor, record: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder output (memory) (B, Ts, d_model) and the source padding mask (B, 1, 1, Ts)."""
        src_mask = (src != PAD)[:, None, None, :]                       # (B, 1, 1, Ts)
        x = self.embed(src, self.src_embed, record=None if record is None else record.setdefault("src", {}))
        for l, layer in enumerate(self.encoder):
            x = layer(x, src_mask, None if record is None else record.setdefault(f"enc.{l}", {}))
        return x, src_mask

    def decode(
        self,
        tgt: torch.Tensor,                 # (B, Tt) target ids fed to the decoder
        memory: torch.Tensor,              # (B, Ts, d_model)
        src_mask: torch.Tensor,            # (B, 1, 1, Ts)
        cache: list[dict] | None = None,   # one dict per decoder layer; positions already cached are skipped
        record: dict | None = None,
    ) -> torch.Tensor:
        """Decoder output (B, Tt, d_model) for the given positions."""
        offset = cache[0]["self_k"].shape[2] if cache and "self_k" in cache[0] else 0
        Tt = tgt.shape[1]
        self_mask = None
        if cache is None or Tt > 1:
            full = torch.ones(Tt, offset + Tt, dtype=torch.bool, device=tgt.device).tril(offset)
            self_mask = full[None, None]                                 # (1, 1, Tt, offset+Tt)
        tgt_pad = (tgt != PAD)[:, None, None, :]                         # (B, 1, 1, Tt)
        if cache is None and bool((~tgt_pad).any()):
            self_mask = self_mask & tgt_pad                              # padded target keys get no attention
        y = self.embed(tgt, self.tgt_embed, offset, None if record is None else record.setdefault("tgt", {}))
        for l, layer in enumerate(self.decoder):
            y = layer(y, memory, self_mask, src_mask, None if cache is None else cache[l],
                      None if record is None else record.setdefault(f"dec.{l}", {}))
        return y

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, record: dict | None = None,
                encoded: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        """Logits (B, Tt, V_y) for teacher-forced target input tgt. encoded: encode(src)'s result when it was
        already run (its record, if any, is then already in record)."""
        memory, src_mask = encoded if encoded is not None else self.encode(src, record)
        y = self.decode(tgt, memory, src_mask, record=record)
        logits = self.generator(y)                                       # (B, Tt, V_y)
        if record is not None:
            record["enc.out"], record["dec.out"], record["logits"] = memory, y, logits
        return logits

    def attention_module(self, schema, stack: str, layer: int, sublayer: str) -> nn.Module:
        """The MultiHeadAttention of a schema's (stack, layer, sublayer): stacks in schema order are the encoder and
        the decoder, and a sublayer keyed "self" or "cross" is the layer's self_attn or cross_attn."""
        stacks = dict(zip((st.key for st in schema.stacks), (self.encoder, self.decoder)))
        return getattr(stacks[stack][layer], f"{sublayer}_attn")

    def new_cache(self) -> list[dict]:
        return [{} for _ in self.decoder]

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
