"""The training loss: label-smoothed cross-entropy, optionally with R-Drop's consistency term.

R-Drop (Liang et al., NeurIPS 2021, "R-Drop: Regularized Dropout for Neural Networks") runs every sentence
through the model twice, so that dropout makes two different sub-models, and adds the symmetric KL divergence
between their two output distributions to the two cross-entropies:

    L = NLL(P1) + NLL(P2) + alpha/2 * (KL(P1 || P2) + KL(P2 || P1))      summed over target tokens

Here L is divided by the number of target tokens in the doubled batch, so alpha = 0 gives the plain mean
cross-entropy and alpha means what it means in the paper (5 for its small translation tasks).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .transformer import PAD


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, label_smoothing: float) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the non-padding targets; logits (B, T, V), targets (B, T)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD,
                           label_smoothing=label_smoothing)


def symmetric_kl(logits_a: torch.Tensor, logits_b: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over non-padding positions of KL(P_a || P_b) + KL(P_b || P_a), the distributions being the softmax of
    each logits (B, T, V)."""
    log_a, log_b = F.log_softmax(logits_a, -1), F.log_softmax(logits_b, -1)
    # kl_div(input, target) is KL(target || input), both given as log-probabilities here
    both = (F.kl_div(log_b, log_a, reduction="none", log_target=True)
            + F.kl_div(log_a, log_b, reduction="none", log_target=True)).sum(-1)        # (B, T)
    keep = targets != PAD
    return both[keep].sum() / keep.sum().clamp(min=1)


def training_loss(model, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor, label_smoothing: float,
                  rdrop: float = 0.0) -> torch.Tensor:
    """The loss one update minimises. With rdrop > 0 the batch goes through the model twice in one call (the
    copies get independent dropout masks) and R-Drop's term is added with weight rdrop."""
    if not rdrop:
        return cross_entropy(model(src, tgt_in), tgt_out, label_smoothing)
    logits = model(torch.cat([src, src]), torch.cat([tgt_in, tgt_in]))
    first, second = logits.chunk(2)
    ce = cross_entropy(logits, torch.cat([tgt_out, tgt_out]), label_smoothing)
    # per target token of the doubled batch: (alpha/2 * sum KL) / (2 * tokens) = alpha/4 * mean symmetric KL
    return ce + rdrop / 4 * symmetric_kl(first, second, tgt_out)
