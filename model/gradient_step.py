"""One training step, as in the notes: teacher-forced loss, its gradient for one head, an SGD update, reset.

Works on the loaded model in memory; the files it was loaded from are never written.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .checkpoint import LoadedModel
from .decoding import encode_source
from .transformer import BOS, EOS


@dataclass
class StepResult:
    token_losses: np.ndarray          # (Tt,) cross-entropy of each reference token under teacher forcing
    loss: float                       # their mean
    grads: dict[str, np.ndarray]      # "W_Q", "W_K", "W_V": dL/dW of the chosen head, (d_model, d_k) as in x·W


class StepDiverged(ValueError):
    """A step that would have made the loss or a weight infinite or not a number: not taken."""


class GradientStepper:
    """Keeps a copy of the original weights so that any number of steps can be undone exactly."""

    def __init__(self, lm: LoadedModel):
        self.lm = lm
        self.original: dict | None = None      # copied before the first step, not when a model opens

    @property
    def steps_taken(self) -> int:
        """Steps on the weights since they were loaded or reset: the model's own count, which its runs' traces
        carry (model.decoding)."""
        return self.lm.training_steps

    def _batch(self, source: str, target: str):
        src = torch.tensor([encode_source(self.lm, source).ids])
        tgt = self.lm.tgt_tok.encode(target)[: self.lm.cfg.max_len - 1]
        if not tgt:
            raise ValueError("the reference translation is empty")
        return src, torch.tensor([[BOS] + tgt]), torch.tensor([tgt + [EOS]])

    def _attention(self, kind: str, layer: int):
        k = self.lm.schema.kind(kind)
        return self.lm.model.attention_module(self.lm.schema, k.stack, layer, k.sublayer)

    def evaluate(self, source: str, target: str, kind: str = "cross", layer: int = 0, head: int = 0) -> StepResult:
        """Per-token loss and the gradient of the mean loss with respect to the head's W_Q, W_K, W_V."""
        with self.lm.lock:
            return self._evaluate(source, target, kind, layer, head)

    def _evaluate(self, source: str, target: str, kind: str, layer: int, head: int) -> StepResult:
        model = self.lm.model
        src, tgt_in, tgt_out = self._batch(source, target)
        was_training = model.training
        model.eval()                                   # no dropout: the numbers must be repeatable
        model.zero_grad(set_to_none=True)
        with torch.enable_grad():
            logits = model(src, tgt_in)                                          # (1, Tt, V_y)
            losses = F.cross_entropy(logits[0], tgt_out[0], reduction="none")    # (Tt,)
            losses.mean().backward()
        attn = self._attention(kind, layer)
        d_k = attn.d_k
        rows = slice(head * d_k, (head + 1) * d_k)
        grads = {name: getattr(attn, name).weight.grad[rows].T.numpy().copy() for name in ("W_Q", "W_K", "W_V")}
        model.train(was_training)
        losses = losses.detach()
        return StepResult(losses.numpy(), float(losses.mean()), grads)

    def step(self, source: str, target: str, lr: float) -> tuple[float, float]:
        """One plain gradient-descent step W <- W - lr * dL/dW on every weight; (loss before, loss after)."""
        with self.lm.lock:
            return self._step(source, target, lr)

    def _step(self, source: str, target: str, lr: float) -> tuple[float, float]:
        if self.original is None:
            self.original = {k: v.detach().clone() for k, v in self.lm.model.state_dict().items()}
        before = self.evaluate(source, target).loss      # leaves the gradients of this loss in .grad
        params = [p for p in self.lm.model.parameters() if p.grad is not None]
        kept = [p.detach().clone() for p in params]      # to put back a step that diverges
        with torch.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
        self.lm.model.zero_grad(set_to_none=True)
        self.lm.weights_version += 1
        after = self.evaluate(source, target).loss        # its gradients too: the next view shows them
        finite = math.isfinite(after) and all(bool(torch.isfinite(p).all()) and
                                              (p.grad is None or bool(torch.isfinite(p.grad).all())) for p in params)
        self.lm.model.zero_grad(set_to_none=True)
        if not finite:                   # (finite weights with infinite gradients drew blank maps, "max |g| nan")
            # η = 10, a dozen steps: the weights became NaN, and every panel drew nothing or raised (QA)
            with torch.no_grad():
                for p, old in zip(params, kept):
                    p.copy_(old)
            self.lm.weights_version += 1
            raise StepDiverged(f"The step was not taken: with η = {lr:g} it made the weights infinite or not a "
                               f"number (the loss was {before:.3g} nats). Training has diverged: a smaller η, "
                               "or Reset weights.")
        self.lm.training_steps += 1
        return before, after

    def reset(self) -> None:
        """Restore the weights as loaded, exactly."""
        with self.lm.lock:
            if self.original is not None:
                self.lm.model.load_state_dict(self.original)
                self.lm.weights_version += 1
            self.lm.model.zero_grad(set_to_none=True)
            self.lm.training_steps = 0
