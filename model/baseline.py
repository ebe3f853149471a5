"""A plain torch.nn.Transformer of the same shape, for the training comparison (`--baseline`)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from torch import nn

from .config import ModelConfig
from .transformer import PAD, sinusoidal_table

WEIGHTS = "baseline.safetensors"


class BaselineTransformer(nn.Module):
    """Same embeddings, positional encoding and output layer; the stacks are torch's own (fused kernels)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.d_model)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model)
        self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        self.core = nn.Transformer(cfg.d_model, cfg.h, cfg.N_enc, cfg.N_dec, cfg.d_ff, cfg.dropout,
                                   batch_first=True, norm_first=False)
        # the nested-tensor fast path is a prototype that warns at every padded batch; the padding masks do the work
        self.core.encoder.enable_nested_tensor = self.core.encoder.use_nested_tensor = False
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        self.dropout = nn.Dropout(cfg.dropout)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        for emb in (self.src_embed, self.tgt_embed):
            nn.init.normal_(emb.weight, std=cfg.d_model ** -0.5)

    def _embed(self, ids, table):
        return self.dropout(table(ids) * math.sqrt(self.cfg.d_model) + self.pe[: ids.shape[1]][None])

    def encode(self, src):
        pad = src == PAD                                                 # (B, Ts) True = padding
        return self.core.encoder(self._embed(src, self.src_embed), src_key_padding_mask=pad), pad

    def decode(self, tgt, memory, src_pad, cache=None):
        T = tgt.shape[1]
        # a boolean mask like the padding masks (torch deprecates mixing a float one with them), on tgt's device
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt.device).triu(1)        # True = the future, masked
        return self.core.decoder(self._embed(tgt, self.tgt_embed), memory, tgt_mask=causal,
                                 tgt_key_padding_mask=tgt == PAD, memory_key_padding_mask=src_pad)

    def forward(self, src, tgt):
        memory, pad = self.encode(src)
        return self.generator(self.decode(tgt, memory, pad))

    def new_cache(self):
        return None

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def load_baseline(folder: str | Path):
    """A `--baseline` run's model folder as a LoadedModel (greedy and beam search work; tracing does not)."""
    from safetensors.torch import load_file

    from .checkpoint import CONFIG, SRC_TOK, TGT_TOK, LoadedModel, ModelLoadError
    from .tokenizer import TextTokenizer
    folder = Path(folder)
    try:
        cfg = ModelConfig.from_dict(json.loads((folder / CONFIG).read_text(encoding="utf-8")))
        model = BaselineTransformer(cfg)
        model.load_state_dict(load_file(str(folder / WEIGHTS)))
        toks = [TextTokenizer.load(folder / name) for name in (SRC_TOK, TGT_TOK)]
    except Exception as e:  # any unreadable part: one line naming the folder
        raise ModelLoadError(f"{folder}: not a readable baseline model ({str(e).splitlines()[0][:160]})") from None
    return LoadedModel(folder.name, folder, model.eval(), toks[0], toks[1])
