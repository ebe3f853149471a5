"""One traced pass of a Hugging Face model, and the run around it (generation, then a teacher-forced pass).

Attention weights are the model's own (`output_attentions` under `attn_implementation="eager"`). q, k and v are the
outputs of the model's own projections, split into heads (and rotated where the model uses rotary positions);
scores are q·kᵀ times the model's scale before the mask; head outputs are weights · v. Norm statistics and the
residual stream come from forward hooks on the norms, removed in a finally. Where each part sits is the family's
map (ModelMap); the Trace's names are those of model/trace.py:

  post-norm (BERT, Marian): residual = the norm's input x + Sublayer(x); ln_* = that norm's statistics and output
  pre-norm (GPT-2, Llama): residual = the stream after the sublayer is added; ln_in, ln_mean, ln_sigma, ln_out =
      the norm applied to the sublayer's input (ln_in is that input)
"""
from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from ...beam_tree import META_KEY
from ...config import DecodingSettings
from ...schema import ATTENTION_CAUSAL, DECODER_ONLY, ENCODER_DECODER, LAYER_NORM, NORM_AFTER, Schema
from ...trace import Trace
from .tokenizer import unknown_parts


@dataclass
class Part:
    """Where one sublayer of one layer sits in the model."""
    norm: Any                                  # the norm after (post-norm) or before (pre-norm) the sublayer
    proj: dict = field(default_factory=dict)   # attention: "q", "k", "v" -> projection, or "qkv" -> a fused one
    down: Any = None                           # feed-forward: the projection whose input is the hidden layer
    scale: float = 0.0                         # attention: the factor of q·kᵀ (0: 1/√d_k)
    out: Any = None                            # attention: W_O, whose input is the heads' outputs side by side
    off: tuple = ()                            # attention: the heads switched off in this run (see HeadsOff)
    by_head: bool = False                      # a fused "qkv" projection's columns are per head [q_h k_h v_h]
                                               # (GPT-NeoX), not [q k v] side by side (GPT-2)
    softcap: float = 0.0                       # attention: scores capped as c · tanh(s / c) (Gemma 2); 0: none
    heads_first: bool = False                  # q and k are read as (heads, tokens, d_k) (Gemma 3's q_norm output)
    rotary_type: str | None = None             # attention: which of the rotary module's calls it uses (Gemma 3's
                                               # local and global layers turn by two bases); None: the one call


def separate_qkv(norm, attention, out: str, normed: bool = False, **part) -> Part:
    """The Part of an attention module with q_proj, k_proj and v_proj (Llama, Phi), its W_O named out, and its
    scaling as the factor of q·kᵀ. normed: q and k are read after the module's q_norm and k_norm (Qwen3), whose
    outputs are (tokens, heads, d_k)."""
    q, k = (attention.q_norm, attention.k_norm) if normed else (attention.q_proj, attention.k_proj)
    return Part(norm, {"q": q, "k": k, "v": attention.v_proj}, scale=attention.scaling, out=getattr(attention, out),
                **part)


def rotary_function(attention):
    """apply_rotary_pos_emb of the module an attention class is defined in (each family has its own)."""
    return sys.modules[type(attention).__module__].apply_rotary_pos_emb


@dataclass
class StackMap:
    key: str                                   # the schema's stack key
    layers: list                               # per layer: {sublayer key: Part}, in the schema's order
    first: Any                                 # the first layer module (its input is {tokens}.x)
    word: Any                                  # the token embedding
    scale: float = 1.0                         # the model multiplies the embedding by this
    pos: Any = None                            # a learned or sinusoidal position module (its output is {tokens}.pe)
    final_norm: Any = None                     # pre-norm models: the norm after the last layer
    rel_bias: dict = field(default_factory=dict)   # T5: {sublayer key: the embedding of relative position buckets
                                                   #      whose output (Tq, Tk, H) every layer adds to its scores}


@dataclass
class ModelMap:
    stacks: list
    rotary: Any = None                         # a module whose output is (cos, sin)
    apply_rotary: Callable | None = None       # apply_rotary_pos_emb(q, k, cos, sin) of the model's module
    scale_scores: bool = True
    parallel: bool = False                     # the FFN reads the layer's input beside the attention (GPT-NeoX): the
                                               # attention's output is recorded at W_O, not read off the next norm
    gamma_offset: float = 0.0                  # the norms multiply by offset + weight (Gemma: 1 + w, weights at 0)


class Hooks:
    """Forward hooks on a model's mapped modules, put on by install() on entry and removed on exit, whatever
    happens (hooks are global state: a failing run must not leave one behind)."""

    def __init__(self, mm: ModelMap):
        self.mm = mm
        self.handles: list = []

    def install(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        try:
            self.install()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for h in self.handles:
            h.remove()
        self.handles.clear()


def _batched(t):
    """(B·T, width) rows as (1, T, width): the batch is always one text here."""
    return t[None] if isinstance(t, torch.Tensor) and t.dim() == 2 else t


class Recorder(Hooks):
    """Forward hooks that keep what each mapped module was given and gave back."""

    def __init__(self, mm: ModelMap):
        super().__init__(mm)
        self.calls: dict[int, list] = {}

    def _watch(self, module, pre: bool = False, rotary: bool = False, tokens: bool = False) -> None:
        """tokens: the module reads and gives (tokens, width) rows; a model that flattens them to (B·T, width) (OPT's
        feed-forward sublayer) has them recorded as (1, T, width), as the others' are."""
        if module is None or id(module) in self.calls:
            return
        calls = self.calls.setdefault(id(module), [])
        batched = _batched if tokens else (lambda t: t)
        if rotary:         # the positions it was given, the frequencies it used (a dynamic RoPE changes them),
            def hook(mod, args, kwargs, output):        # (cos, sin), the layer type asked for (Gemma 3) or None
                positions = args[1] if len(args) > 1 else kwargs["position_ids"]
                kind = args[2] if len(args) > 2 else kwargs.get("layer_type")
                theta = getattr(mod, f"{kind}_inv_freq" if kind else "inv_freq")
                calls.append((positions, theta.detach().clone(), output, kind))
            self.handles.append(module.register_forward_hook(hook, with_kwargs=True))
        elif pre:
            def hook(mod, args, kwargs):
                calls.append(batched(args[0] if args else kwargs["hidden_states"]))
            self.handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
        else:
            def hook(mod, args, output):
                calls.append((batched(args[0]) if args else None, batched(output)))
            self.handles.append(module.register_forward_hook(hook))

    def install(self) -> None:
        for sm in self.mm.stacks:
            self._watch(sm.first, pre=True)
            for m in (sm.word, sm.pos, sm.final_norm, *sm.rel_bias.values()):
                self._watch(m)
            for parts in sm.layers:
                for part in parts.values():
                    self._watch(part.norm, tokens=True)
                    for m in part.proj.values():
                        self._watch(m)
                    if part.down is not None:
                        self._watch(part.down, pre=True, tokens=True)
                    if self.mm.parallel and part.out is not None:
                        self._watch(part.out, tokens=True)
        self._watch(self.mm.rotary, rotary=True)

    def take(self, module):
        """The next recorded call of a module (modules shared by two stacks are called once for each, in order)."""
        return self.calls[id(module)].pop(0)


class PositionsOff(Hooks):
    """While entered (and `off`), the model runs without positions, as the seed models' switch does: learned or
    sinusoidal position embeddings give zeros, the rotary module gives cos = 1 and sin = 0 (q and k are not
    rotated), T5's relative position bias gives zeros. Its hooks come before a Recorder's, which then records
    what the model used."""

    def __init__(self, mm: ModelMap, off: bool):
        super().__init__(mm)
        self.off = off

    def install(self) -> None:
        if not self.off:
            return
        zero = lambda mod, args, output: torch.zeros_like(output)                        # noqa: E731
        still = lambda mod, args, output: (torch.ones_like(output[0]), torch.zeros_like(output[1]))   # noqa: E731
        seen = set()
        for module, hook in [(m, zero) for sm in self.mm.stacks for m in (sm.pos, *sm.rel_bias.values())] + \
                            [(self.mm.rotary, still)]:
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                self.handles.append(module.register_forward_hook(hook))


class HeadsOff(Hooks):
    """While entered, heads are switched off as in the seed models (model/ablation.py): each one's slice of the
    heads' outputs side by side is zero before W_O (a pre-hook on the output projection). where: {(stack key,
    layer, sublayer key): heads}, from ablation.by_module. The Parts know which heads are off, so that the trace's
    head outputs say so too."""

    def __init__(self, mm: ModelMap, where: dict, n_heads: int):
        super().__init__(mm)
        self.where, self.n_heads = where, n_heads
        self.parts: list = []

    def install(self) -> None:
        stacks = {sm.key: sm for sm in self.mm.stacks}
        for (stack, layer, sub), heads in self.where.items():
            part = stacks[stack].layers[layer][sub]
            part.off = tuple(sorted(heads))
            self.parts.append(part)
            self.handles.append(part.out.register_forward_pre_hook(self._zero(part.off)))

    def _zero(self, heads: tuple):
        def hook(module, args):
            x = args[0].clone()
            width = x.shape[-1] // self.n_heads
            for h in heads:
                x[..., h * width:(h + 1) * width] = 0
            return (x, *args[1:])
        return hook

    def __exit__(self, *exc) -> None:
        for part in self.parts:
            part.off = ()
        self.parts.clear()
        super().__exit__(*exc)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float32).cpu().numpy().copy()


def _heads(t: torch.Tensor, d_k: int) -> torch.Tensor:
    """(T, n·d_k) -> (n, T, d_k)."""
    return t.reshape(t.shape[0], -1, d_k).transpose(0, 1)


def _norm_stats(norm, v: torch.Tensor, kind: str, gamma_offset: float = 0.0) -> dict:
    eps = float(getattr(norm, "eps", None) or getattr(norm, "variance_epsilon", None) or 1e-6)
    v64 = v.double()
    mean = v64.mean(-1)
    sigma = (v64.var(-1, unbiased=False) + eps).sqrt() if kind == LAYER_NORM else ((v64 ** 2).mean(-1) + eps).sqrt()
    out = {"ln_mean": _np(mean), "ln_sigma": _np(sigma), "gamma": _np(norm.weight.double() + gamma_offset)}
    bias = getattr(norm, "bias", None)
    if kind == LAYER_NORM:
        out["beta"] = _np(bias) if bias is not None else np.zeros(v.shape[-1], np.float32)
    return out


def record_arrays(mm: ModelMap, schema: Schema, rec: Recorder, attentions: dict) -> dict[str, np.ndarray]:
    """The Trace's arrays of one pass (batch of one) from what the hooks recorded and the model's attentions
    (attentions: {(stack key, sublayer key): per layer (1, H, Tq, Tk)})."""
    arrays: dict[str, np.ndarray] = {}
    d_k, post = schema.d_k, schema.norm_place == NORM_AFTER
    for sm in mm.stacks:
        st = schema.stack(sm.key)
        word = rec.take(sm.word)[1][0] * sm.scale
        x = rec.take(sm.first)[0]
        pe = rec.take(sm.pos)[1] if sm.pos is not None else torch.zeros_like(word)
        pe = pe[0] if pe.dim() == 3 else pe
        arrays |= {f"{st.tokens}.embedding": _np(word), f"{st.tokens}.pe": _np(pe), f"{st.tokens}.x": _np(x)}
        rotary = {}                                      # layer type (None: the one call) -> (cos, sin)
        if mm.rotary is not None:
            calls = [rec.take(mm.rotary) for _ in range(len({p.rotary_type for ps in sm.layers for p in ps.values()
                                                               if p.proj}))]
            for positions, theta, cos_sin, kind in calls:
                rotary[kind] = cos_sin
            shown = next((c for c in calls if c[3] in (None, "full_attention")), calls[0])   # the global layers'
            keys = schema.rotary_keys(sm.key)
            arrays |= _rotary_arrays(keys, *shown[:3], d_k)
            arrays |= {keys.theta_local: _np(c[1]) for c in calls if c is not shown}   # Gemma 3's local base
        bias = {}
        for k, m in sm.rel_bias.items():
            buckets, values = rec.take(m)                                        # (Tq, Tk), (Tq, Tk, H)
            bias[k] = values.permute(2, 0, 1)                                    # (H, Tq, Tk)
            keys = schema.bias_keys(schema.kind_at(sm.key, k).name)
            arrays |= {keys.bias: _np(bias[k]), keys.buckets: buckets.detach().cpu().numpy().astype(np.int64)}
        order = [(layer, sub.key, sm.layers[layer][sub.key]) for layer in range(st.n_layers) for sub in st.sublayers]
        norms = []                                                               # (input (1,T,d), output (1,T,d))
        for i, (layer, _, part) in enumerate(order):      # a norm both sublayers of a layer read (Phi) ran once
            shared = i > 0 and order[i - 1][0] == layer and order[i - 1][2].norm is part.norm
            norms.append(norms[-1] if shared else rec.take(part.norm))
        final = rec.take(sm.final_norm) if sm.final_norm is not None else None
        stream = x                                                               # the sublayer's input
        for i, (layer, key, part) in enumerate(order):
            name = f"{sm.key}.{layer}.{key}"
            n_in, n_out = norms[i][0][0], norms[i][1][0]
            if post:
                residual = n_in
            elif mm.parallel and part.proj:          # the next norm reads the layer's input too: x + W_O's output
                residual = stream + rec.take(part.out)[1][0]
                arrays[f"{name}.ln_in"] = _np(n_in)
            else:
                residual = norms[i + 1][0][0] if i + 1 < len(norms) else (final[0][0] if final else None)
                arrays[f"{name}.ln_in"] = _np(n_in)
            arrays |= {f"{name}.residual": _np(residual), f"{name}.out": _np(residual - stream),
                       f"{name}.ln_out": _np(n_out), **{f"{name}.{k}": v for k, v in
                                                        _norm_stats(part.norm, n_in, schema.norm,
                                                                    mm.gamma_offset).items()}}
            if part.proj:
                arrays |= _attention(mm, part, rec, attentions[(sm.key, key)][layer][0], d_k,
                                     rotary.get(part.rotary_type),
                                     st.sublayer(key).kind == ATTENTION_CAUSAL, name, bias.get(key))
            else:
                arrays[f"{name}.hidden"] = _np(rec.take(part.down)[0])
            stream = n_out if post else residual
        arrays[f"{sm.key}.out"] = _np(final[1][0] if final is not None else stream)
    return arrays


def _rotary_arrays(keys, positions: torch.Tensor, theta: torch.Tensor, cos_sin, d_k: int) -> dict:
    """θ_i, and the cos and sin the module gave for each position and dimension pair (its output repeats them for
    the two halves that rotate_half pairs: dimension i with i + r/2, r the dimensions turned: d_k, or the share of
    it a GPT-NeoX or Phi turns)."""
    cos, sin = (t[0] if t.dim() == 3 else t for t in cos_sin)                   # (T, d_k), or fewer (partial)
    half = cos.shape[-1] // 2
    return {keys.theta: _np(theta), keys.cos: _np(cos[:, :half]), keys.sin: _np(sin[:, :half]),
            keys.positions: positions.reshape(-1).detach().cpu().numpy().astype(np.int64)}


def _attention(mm: ModelMap, part: Part, rec: Recorder, weights: torch.Tensor, d_k: int, rotary, causal: bool,
               name: str, bias: torch.Tensor | None = None) -> dict:
    if "qkv" in part.proj and part.by_head:      # (T, H·3·d_k): head h's q, k and v side by side
        fused = rec.take(part.proj["qkv"])[1][0]
        q, k, v = (t.reshape(fused.shape[0], -1) for t in fused.reshape(fused.shape[0], -1, 3 * d_k).chunk(3, -1))
    elif "qkv" in part.proj:                     # [q k v] side by side; k and v fewer heads' (Phi-3's grouped)
        fused = rec.take(part.proj["qkv"])[1][0]
        n_q = weights.shape[0] * d_k
        q, k, v = fused.split([n_q, (fused.shape[-1] - n_q) // 2, (fused.shape[-1] - n_q) // 2], dim=-1)
    else:
        q, k, v = (rec.take(part.proj[n])[1][0] for n in "qkv")
    if part.heads_first:                         # (H, T, d_k) already: as (T, H·d_k)
        q, k = (t.transpose(0, 1).reshape(t.shape[1], -1) for t in (q, k))
    q, k, v = _heads(q, d_k), _heads(k, d_k), _heads(v, d_k)                     # (H, Tq, d_k), (H_kv, Tk, d_k)
    if rotary is not None and mm.apply_rotary is not None:
        cos, sin = rotary
        r = cos.shape[-1]                            # the dimensions turned: all, or each head's first r
        turned = mm.apply_rotary(q[None, ..., :r], k[None, ..., :r], cos, sin)
        q, k = (torch.cat([t[0], rest[..., r:]], -1) for t, rest in zip(turned, (q, k)))
    group = q.shape[0] // k.shape[0]
    kk, vv = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)      # grouped-query: shared k, v
    scale = part.scale or d_k ** -0.5
    scores = q @ kk.transpose(1, 2) * scale                                      # (H, Tq, Tk)
    if bias is not None:
        scores = scores + bias                                                   # T5's relative position bias
    if part.softcap:
        scores = part.softcap * torch.tanh(scores / part.softcap)               # Gemma 2: capped softly
    Tq, Tk = scores.shape[1:]
    mask = np.tril(np.ones((Tq, Tk), bool), Tk - Tq) if causal else np.ones((Tq, Tk), bool)
    head_out = weights @ vv
    if part.off:                                   # a head switched off gave W_O zeros (HeadsOff)
        head_out[list(part.off)] = 0
    return {f"{name}.q": _np(q), f"{name}.k": _np(k), f"{name}.v": _np(v), f"{name}.scores": _np(scores),
            f"{name}.weights": _np(weights), f"{name}.mask": mask, f"{name}.head_out": _np(head_out)}


@torch.no_grad()
def traced_pass(lm, mm: ModelMap, **inputs) -> tuple[dict[str, np.ndarray], Any]:
    """Run the model once with its attentions; (arrays, outputs). The hooks are gone when this returns."""
    schema = lm.schema
    with PositionsOff(mm, not lm.positional), Recorder(mm) as rec:
        outputs = lm.model(**inputs, output_attentions=True, use_cache=False, return_dict=True)
        if schema.layout == ENCODER_DECODER:
            attentions = {("enc", "self"): outputs.encoder_attentions, ("dec", "self"): outputs.decoder_attentions,
                          ("dec", "cross"): outputs.cross_attentions}
        else:
            attentions = {(schema.stacks[0].key, "self"): outputs.attentions}
        arrays = record_arrays(mm, schema, rec, attentions)
    logits = getattr(outputs, "logits", None)
    if logits is not None and schema.has_output:
        arrays["logits"] = _np(logits[0])
        arrays["probs"] = _np(torch.softmax(logits[0].double(), -1))
    return arrays, outputs


def generation_kwargs(settings: DecodingSettings, max_new: int, lm) -> dict:
    """What the window's decoding settings decide: the method (greedy, beam of settings.beam, or sampling with its
    temperature and top-k, no top-p) and the number of new tokens. The rest of the folder's generation_config
    (bad_words_ids, forced_eos_token_id, repetition and length penalties, ...) stays as the folder sets it, and its
    num_beams, do_sample, temperature, top_k and top_p give way to the window's."""
    kw = dict(max_new_tokens=max(1, max_new), num_beams=1, do_sample=False)
    if lm.model.generation_config.pad_token_id is None:
        tok = lm.tokenizer
        kw["pad_token_id"] = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    if settings.method == "beam":
        kw["num_beams"] = settings.beam
    elif settings.method == "sample":
        kw |= dict(do_sample=True, temperature=settings.temperature, top_k=settings.top_k or None, top_p=1.0)
    return kw


def new_tokens(lm, settings: DecodingSettings, default: int, room: int, used: int) -> int:
    """How many tokens to generate at most: the settings' max_new when given, else the app's default bounded by the
    folder's own generation_config (max_new_tokens, or max_length less the `used` tokens already in the sequence:
    the decoder's start token or the prompt); always within the positions left (room)."""
    if settings.max_new is not None:
        return min(settings.max_new, room)
    own = lm.model.generation_config.to_diff_dict()         # what the folder set, not the library's defaults
    bound = own.get("max_new_tokens") or (own["max_length"] - used if own.get("max_length") else None)
    return max(1, min(default, room, bound if bound is not None else room))


def decoder_start(model) -> int:
    """The token an encoder-decoder's decoder starts from (Marian: pad), as generate reads it."""
    start = model.generation_config.decoder_start_token_id
    return int(start if start is not None else model.config.decoder_start_token_id)


def ends_forced(lm, out_ids: list[int]) -> bool:
    """Whether the last of out_ids is the end token the folder forces at the length limit (forced_eos_token_id,
    as BART and Marian set it): generate puts it there whatever the model's own distribution says."""
    forced = lm.model.generation_config.forced_eos_token_id
    forced = [forced] if isinstance(forced, int) else list(forced or [])
    return bool(out_ids) and out_ids[-1] in forced


def cut_at(ids: list[int], eos: int | None) -> list[int]:
    """ids up to and including the first end-of-sequence token."""
    return ids[: ids.index(eos) + 1] if eos is not None and eos in ids else ids


@torch.no_grad()
def generate(lm, settings: DecodingSettings, max_new: int, observer=None, **inputs) -> list[int]:
    """The ids `generate` chooses under the settings (sampling repeatable by its seed); an encoder-decoder's begin
    with the decoder's start token, a decoder-only model's with the prompt. observer: a beam.BeamObserver
    that watches a beam search (it gets generate's raw logits as .logits); the ids are the same."""
    kw = generation_kwargs(settings, max_new, lm)
    if observer is not None:
        from .beam import observer_kwargs
        kw |= observer_kwargs(observer)
    with torch.random.fork_rng(devices=[]), PositionsOff(lm.map, not lm.positional):
        torch.manual_seed(int(settings.seed))
        out = lm.model.generate(**inputs, **kw)
    if observer is not None:
        observer.logits, out = out.logits, out.sequences
    return out[0].tolist()


def beam_observer(lm, settings: DecodingSettings, max_new: int):
    """(observer, recorder) of a beam search of lm (None, None for other methods): the tree starts at root."""
    if settings.method != "beam":
        return None, None
    from .beam import BeamObserver, length_penalty
    eos = lm.model.generation_config.eos_token_id
    eos = lm.tokenizer.eos_token_id if eos is None else eos          # what generate stops at
    eos = set(eos if isinstance(eos, (list, tuple)) else [] if eos is None else [eos])
    return BeamObserver(settings.beam, eos, max(1, max_new)), length_penalty(lm.model)


def beam_tree(lm, observer, penalty, root: int, out_ids: list[int]) -> dict:
    """The recorded search as a Trace's meta entry (model/beam_tree.py)."""
    from ...beam_tree import BeamRecorder
    piece = lm.tgt_tok.pieces
    recorder = BeamRecorder(observer.width, penalty, root, piece([root])[0], lambda t: piece([t])[0],
                            lm.tgt_tok.decode)
    return observer.tree(recorder, out_ids, observer.logits).to_dict()


def make_trace(lm, mm: ModelMap, arrays: dict, src: list[str], tgt: list[str], out_ids: list[int],
               meta: dict, before: int | None = None) -> Trace:
    """out_ids: the token each output row stands for, kept as ids beside their readable pieces. before: the token
    read before out_ids[0] (the decoder's start, the prompt's first): the pieces are then read as a text, as the
    rows are ("red" after a lone-space piece was "##red" in the chips and "red" on the heatmap's axis); None (an
    encoder's guess at each position): each piece alone."""
    positional = lm.positional and lm.schema.positions != "none"
    arrays["out_ids"] = np.asarray(out_ids, dtype=np.int64)
    out = lm.tgt_tok.pieces(out_ids) if before is None else lm.tgt_tok.text_pieces([before] + list(out_ids))[1:]
    return Trace(src, tgt, out, arrays, dict(meta, model=lm.name, positional=positional,
                                              scale_scores=mm.scale_scores), lm.schema)


def _preview(lm, mm: ModelMap, meta: dict, src_ids: list[int], fed: list[int]):
    """The Translation of one traced pass before generation (src_ids: the encoder's input, [] for decoder-only; fed:
    what the decoder reads: its start token, or the prompt): every attention of the input, and the distribution of
    the first token to come. Marked partial: the generated tokens are still to come."""
    from ...decoding import Translation
    pieces = lm.tgt_tok.text_pieces
    inputs = {"input_ids": torch.tensor([src_ids]), "decoder_input_ids": torch.tensor([fed])} if src_ids \
        else {"input_ids": torch.tensor([fed])}
    arrays, _ = traced_pass(lm, mm, **inputs)
    nxt = int(arrays["logits"][-1].argmax())
    trace = make_trace(lm, mm, arrays, lm.src_tok.text_pieces(src_ids), pieces(fed), fed[1:] + [nxt],
                       dict(meta, translation="", partial=True), before=fed[0])
    return Translation("", [], trace, meta.get("truncated", 0), ())


def check_ids_fit(lm, ids: list[int], forced: list[int] | None) -> None:
    """ValueError naming the token when the tokenizer gives an id past the model's embedding table: a token added
    to the tokenizer (tokenizer.add_tokens) without resizing the model's embeddings; the model cannot read it."""
    sides = (("input", ids, lm.model.get_input_embeddings().weight.shape[0]),
             ("target", forced or (), lm.tgt_tok.vocab_size))     # the decoder's rows: its output layer's
    for side, side_ids, rows in sides:
        beyond = [i for i in side_ids if i >= rows]
        if beyond:
            piece = (lm.tokenizer if side == "input" else lm.target_tokenizer).convert_ids_to_tokens(beyond[0])
            raise ValueError(f"the {side} has the token “{piece}” (id {beyond[0]:,}), which the tokenizer added after "
                             f"the model's {rows:,} embedding rows: the model cannot read it; leave it out")


def wide(char: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese): no space is put after it."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def filled_text(text: str, mask: str | None, pieces: list[str]) -> str | None:
    """A masked-word model's text: the text as typed, its first masks each replaced by the piece the model put
    there ("##ing" stays a piece: it continues the word before it); None when the text holds fewer masks as typed
    than the model filled. Decoding the filled ids instead dropped every word the tokenizer did not know and glued a
    continuation piece to the word before the unknown one ("I love 🍕 [MASK]" read "i loveing", QA)."""
    if not mask or text.count(mask) < len(pieces):
        return None
    out = text
    for piece in pieces:
        at = out.index(mask)
        # a word typed against the mask ("Hello<mask>!") is still a word of its own when the model puts a word
        # there (RoBERTa's "ĠParis"): it read "HelloParis!" (QA); a continuation piece ("##ing") stays glued
        before = out[at - 1] if at else " "
        glue = " " if before.isalnum() and piece[:1].isalnum() and not wide(before) else ""   # ("." stays glued)
        out = out[:at] + glue + piece + out[at + len(mask):]
    return out


def continuation_ids(tok, text: str, ids: list[int], target: str) -> list[int]:
    """A decoder-only model's given continuation, read as the running text goes on: "The red car" and "is fast."
    are "The red car is fast.", whose GPT-2 pieces are "Ġis Ġfast ." (read alone, "is" was a piece glued to "car",
    and the attention shown was of "caris fast.", QA). The ids of the whole text after the prompt's, where the
    prompt's come first in them; else the target's own."""
    glue = " " if text and not text[-1].isspace() and target[:1].isalnum() else ""
    whole = list(tok(text + glue + target)["input_ids"]) if ids else []
    if len(whole) > len(ids) and whole[:len(ids)] == list(ids):
        return whole[len(ids):]
    return list(tok(glue + target, add_special_tokens=False)["input_ids"])


EPS_KEYS = ("layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps", "norm_eps")   # the families' names for ε


def norm_eps(config) -> float | None:
    """The ε a model's norms add to the variance, where its config gives it (Marian's and BART's take torch's
    default and name none: None)."""
    for key in EPS_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def run(lm, mm: ModelMap, text: str, settings: DecodingSettings = DecodingSettings(), target: str | None = None,
        positional: bool | None = None, previous=None, forced_ids: list[int] | None = None, preview=None,
        ablations: frozenset = frozenset()):
    """The family-independent traced run of every layout: a Translation (model/decoding.py). positional switches
    the model's positions on or off from this run on (None: as they are; see PositionsOff). forced_ids: output
    ids to force through the decoder as they are (a beam search hypothesis), instead of target. A beam search's
    trace carries its tree in meta (model/beam_tree.py).

    preview: called with a partial Translation (one traced pass over the input, before generation) when the model
    generates, so that a large model's attention shows while it writes its output.

    ablations: heads switched off for this run, {(kind, layer, head)} 0-based (model/ablation.py; AblationError
    when one is not in the model): in generation and in the traced pass, as in the seed models."""
    from dataclasses import replace as _replace
    from ...ablation import by_module, check, spec
    from ...decoding import Translation
    ablations = check(ablations, lm.schema)
    tok, schema, room = lm.tokenizer, lm.schema, lm.cfg.max_len
    if positional is not None:
        lm.positional = bool(positional) and schema.positions != "none"
    if schema.layout == DECODER_ONLY and target and target.strip():
        text = text.rstrip()        # the space typed before a given continuation joins the two (it read "␣ is", QA)
    ids = list(tok(text)["input_ids"]) if text.strip() or schema.layout != DECODER_ONLY else []
    truncated = max(0, len(ids) - room)
    if truncated:             # cut by the tokenizer, which keeps the special tokens it adds (Marian's </s>)
        ids = list(tok(text, truncation=True, max_length=room)["input_ids"])
    forced = None
    if target and target.strip() and schema.layout != "encoder-only":
        forced = list(lm.target_tokenizer(text_target=target)["input_ids"]) if schema.layout == ENCODER_DECODER \
            else continuation_ids(tok, text, ids, target)
    if forced_ids is not None and schema.layout != "encoder-only":
        forced = [int(i) for i in forced_ids] or None
    check_ids_fit(lm, ids, forced)
    key = (tuple(ids), None if forced is None else tuple(forced), None if forced else settings, lm.positional,
           lm.weights_version, ablations)
    meta = {"sentence": text, "mode": "teacher-forced" if forced else settings.method,
            "decoding": "given target" if forced else settings.describe(), "positional": bool(lm.positional),
            "lowercases": lm.src_tok.lowercases, "truncated": truncated, "unknown": unknown_parts(tok, text),
            **({"unknown_target": unknown_parts(lm.target_tokenizer if schema.layout == ENCODER_DECODER else tok,
                                                target)} if forced and forced_ids is None else {}),
            **({"norm_eps": eps} if (eps := norm_eps(lm.model.config)) is not None else {}),
            "ablations": [spec(a) for a in sorted(ablations)]}
    if previous is not None and previous.run == key:
        t = previous.trace
        return _replace(previous, trace=Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays,
                                              dict(t.meta, **meta), t.schema), truncated=truncated)
    pieces, eos = lm.tgt_tok.text_pieces, tok.eos_token_id
    with lm.lock, HeadsOff(mm, by_module(ablations, schema), schema.n_heads):
        if schema.layout == ENCODER_DECODER:
            src = torch.tensor([ids])
            start = decoder_start(lm.model)
            if forced is None:
                if preview is not None:
                    preview(_preview(lm, mm, meta, ids, [start]))
                n = new_tokens(lm, settings, 2 * len(ids) + 10, room - 1, 1)
                observer, penalty = beam_observer(lm, settings, n)
                seq = generate(lm, settings, n, observer, input_ids=src, attention_mask=torch.ones_like(src))
                start, out_ids = seq[0], cut_at(seq[1:], eos)
                if len(seq) - 1 == n and ends_forced(lm, out_ids):
                    meta["forced_end"] = len(out_ids) - 1
                if observer is not None:
                    meta[META_KEY] = beam_tree(lm, observer, penalty, start, out_ids)
            else:
                out_ids = forced[: room - 1]
            out_ids = out_ids or [eos]
            arrays, _ = traced_pass(lm, mm, input_ids=src, decoder_input_ids=torch.tensor([[start] + out_ids[:-1]]))
            text_out = lm.tgt_tok.decode(out_ids)
            trace = make_trace(lm, mm, arrays, lm.src_tok.text_pieces(ids), pieces([start] + out_ids[:-1]),
                               out_ids, dict(meta, translation=text_out), before=start)
        elif schema.layout == DECODER_ONLY:
            prompt = ids or [tok.bos_token_id if tok.bos_token_id is not None else eos]
            if forced is None:
                if preview is not None:
                    preview(_preview(lm, mm, meta, [], prompt))
                n = new_tokens(lm, settings, 20, room - len(prompt), len(prompt))
                p = torch.tensor([prompt])
                observer, penalty = beam_observer(lm, settings, n)
                new = cut_at(generate(lm, settings, n, observer, input_ids=p, attention_mask=torch.ones_like(p))
                             [len(prompt):], eos)
                if observer is not None:
                    meta[META_KEY] = beam_tree(lm, observer, penalty, prompt[-1], new)
            else:
                new = forced[: room - len(prompt)]
            seq = prompt + new
            fed = seq[:-1] if len(seq) > 1 else seq
            arrays, _ = traced_pass(lm, mm, input_ids=torch.tensor([fed]))
            chosen = seq[1:] if len(seq) > 1 else [int(arrays["logits"][-1].argmax())]
            out_ids, text_out = new, lm.tgt_tok.decode(new)
            trace = make_trace(lm, mm, arrays, [], pieces(fed), chosen,
                               dict(meta, translation=text_out, prompt_tokens=len(prompt)), before=seq[0])
        else:                                                                    # encoder-only
            arrays, _ = traced_pass(lm, mm, input_ids=torch.tensor([ids]))
            if schema.has_output:
                out_ids = [int(i) for i in arrays["logits"].argmax(-1)]
                mask_id = tok.mask_token_id
                text_out = filled_text(text, tok.mask_token, [lm.tgt_tok.pieces([o])[0]
                                                               for i, o in zip(ids, out_ids) if i == mask_id])
                if text_out is None:                # the masks are not as typed: the tokenizer's own text
                    text_out = lm.tgt_tok.decode([o if i == mask_id else i for i, o in zip(ids, out_ids)])
            else:
                out_ids, text_out = [], ""
            trace = make_trace(lm, mm, arrays, lm.src_tok.text_pieces(ids), [], out_ids, dict(meta, translation=text_out))
    return Translation(text_out, out_ids, trace, truncated, key)
