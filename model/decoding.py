"""Turning a sentence into a translation: greedy, beam search, sampling, teacher forcing, stepwise traces."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import torch

from .ablation import NONE, by_module, check, spec
from .beam_tree import GNMT, META_KEY, BeamRecorder, Penalty
from .checkpoint import LoadedModel
from .config import METHODS, DecodingSettings  # noqa: F401 (re-exported)
from .trace import Trace, flatten_record
from .training_words import rare_words_meta
from .transformer import BOS, EOS, PAD, Transformer

BEAM_ALPHA = 0.6          # beam search's GNMT length penalty α


@dataclass
class SourceIds:
    ids: list[int]               # source piece ids followed by </s>
    truncated: int = 0           # pieces cut off because the model's maximum length was reached
    unknown: list[str] = field(default_factory=list)   # the parts of the text read as <unk> (the notes name them)


def encode_source(lm: LoadedModel, text: str) -> SourceIds:
    """The source ids the encoder reads for text (cut to the model's length), with what was cut."""
    return source_ids(lm.src_tok, lm.cfg.max_len, text)


def source_ids(src_tok, max_len: int, text: str) -> SourceIds:
    """The ids the encoder reads: the pieces that fit in max_len, then </s> (for a model still in training too)."""
    ids, unknown = src_tok.encode_with_unknown(text)
    room = max_len - 1
    return SourceIds(ids[:room] + [EOS], max(0, len(ids) - room), unknown)


def _max_new(model: Transformer, n_src: int, settings: DecodingSettings) -> int:
    limit = model.cfg.max_len - 1
    return min(limit, settings.max_new if settings.max_new is not None else 2 * n_src + 10)


def _next_logits(model: Transformer, tgt: torch.Tensor, memory, src_mask, cache) -> torch.Tensor:
    """Logits (B, V_y) for the next token after tgt (B, t); with a cache only the newest token is run."""
    if cache is not None:
        y = model.decode(tgt[:, -1:], memory, src_mask, cache)          # (B, 1, d_model)
    else:
        y = model.decode(tgt, memory, src_mask)                         # (B, t, d_model)
    logits = model.generator(y[:, -1])                                  # (B, V_y)
    logits[:, PAD] = float("-inf")   # never generate <pad>: the uncached decoder (and the Trace) would mask it
    return logits


def _encode(model: Transformer, src_ids: list[int], encoded) -> tuple[torch.Tensor, torch.Tensor]:
    """(memory, src_mask) of the sentence: encoded when the caller already ran the encoder, else a new run."""
    return encoded if encoded is not None else model.encode(torch.tensor([src_ids]))


@torch.no_grad()
def greedy(model: Transformer, src_ids: list[int], max_new: int, use_cache: bool = True,
           draft: list[int] | None = None, encoded=None, record: dict | None = None) -> list[int]:
    """Output ids (without <s>, ending with </s> unless max_new was reached).

    draft: a guess at the output, such as the translation of the sentence one keystroke ago. One parallel decoder
    pass checks it: the draft's longest prefix that greedy decoding would choose itself is kept, with the token
    greedy picks where they first differ, and decoding goes on step by step from there. The result is the one
    of plain greedy decoding (up to floating-point ties between two tokens); a good draft saves most of the
    sequential steps.

    encoded: model.encode's (memory, src_mask) for src_ids, if it was run already.
    record: a dict that receives the traced decoder pass of the draft check when the output is the draft itself,
    ending in </s>: that pass then is the teacher-forced pass of the output, which translate need not run
    again. Left empty otherwise."""
    memory, src_mask = _encode(model, src_ids, encoded)
    cache = model.new_cache() if use_cache else None
    tgt = torch.tensor([[BOS]])
    if draft and use_cache and max_new > 0 and 0 <= min(draft) and max(draft) < model.cfg.tgt_vocab_size:
        draft = list(draft[:max_new])
        tgt = _accept_draft(model, draft, memory, src_mask, cache, record)
        out = tgt[0, 1:].tolist()
        if record is not None and not (out == draft and draft[-1] == EOS):
            record.clear()
        if out[-1] == EOS or len(out) >= max_new:
            return out[:max_new]
    for _ in range(max_new - (tgt.shape[1] - 1)):
        nxt = int(_next_logits(model, tgt, memory, src_mask, cache).argmax(-1))
        tgt = torch.cat([tgt, torch.tensor([[nxt]])], dim=1)
        if nxt == EOS:
            break
    return tgt[0, 1:].tolist()


def _accept_draft(model: Transformer, draft: list[int], memory, src_mask, cache: list[dict],
                  record: dict | None = None) -> torch.Tensor:
    """<s> + the part of draft greedy decoding agrees with + greedy's own next token, (1, 1 + n); cache then
    holds the keys and values of every position but the last, as step-by-step decoding would. record, if
    given, receives the traced pass (decoder, dec.out, logits)."""
    fed = [BOS] + (draft[:-1] if draft[-1] == EOS else draft)    # a final </s> is only predicted, not fed
    y = model.decode(torch.tensor([fed]), memory, src_mask, cache, record)   # (1, len(fed), d_model)
    logits = model.generator(y)                                          # (1, len(fed), V_y)
    if record is not None:
        record["dec.out"], record["logits"] = y, logits
    never_pad = logits[0].index_fill(-1, torch.tensor([PAD]), float("-inf"))
    chosen = never_pad.argmax(-1).tolist()                               # greedy's pick after each prefix
    n = 0
    while n < len(draft) and chosen[n] == draft[n] and draft[n] != EOS:
        n += 1
    if n < len(draft) and chosen[n] == draft[n]:                         # agreed up to and including </s>
        n += 1
        out = draft[:n]
    else:
        out = draft[:n] + [chosen[n]]                                    # greedy's token where they part
    for layer_cache in cache:                                            # keep positions <s>, out[:-1]
        layer_cache["self_k"] = layer_cache["self_k"][:, :, : len(out)]
        layer_cache["self_v"] = layer_cache["self_v"][:, :, : len(out)]
    return torch.tensor([[BOS] + out])


@torch.no_grad()
def sample(model: Transformer, src_ids: list[int], max_new: int, temperature: float = 1.0,
           top_k: int = 0, seed: int = 0, use_cache: bool = True, encoded=None) -> list[int]:
    """Output ids sampled from softmax(logits / temperature), cut to the top_k most likely when top_k > 0, with
    a generator seeded by seed: the same seed gives the same output."""
    gen = torch.Generator().manual_seed(int(seed))
    memory, src_mask = _encode(model, src_ids, encoded)
    cache = model.new_cache() if use_cache else None
    tgt = torch.tensor([[BOS]])
    for _ in range(max_new):
        logits = _next_logits(model, tgt, memory, src_mask, cache)[0] / temperature   # (V_y,)
        logits[PAD] = float("-inf")
        if top_k:
            cut = torch.topk(logits, min(top_k, logits.numel())).values[-1]
            logits = logits.masked_fill(logits < cut, float("-inf"))
        nxt = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=gen))
        tgt = torch.cat([tgt, torch.tensor([[nxt]])], dim=1)
        if nxt == EOS:
            break
    return tgt[0, 1:].tolist()


@torch.no_grad()
def beam_search(model: Transformer, src_ids: list[int], max_new: int, k: int = 4,
                use_cache: bool = True, alpha: float = BEAM_ALPHA, encoded=None,
                tree: BeamRecorder | None = None) -> list[int]:
    """Best hypothesis under log-probability / length^alpha (GNMT length penalty).
    tree: receives every hypothesis that enters the beam or finishes (model/beam_tree.py); the search is the same."""
    memory, src_mask = _encode(model, src_ids, encoded)
    cache = model.new_cache() if use_cache else None
    beams = torch.tensor([[BOS]])                                       # (b, t)
    scores = torch.zeros(1)                                             # (b,)
    finished: list[tuple[float, list[int]]] = []
    penalised = Penalty(GNMT, alpha)

    for step in range(max_new):
        b = beams.shape[0]
        logp = torch.log_softmax(_next_logits(model, beams, memory.expand(b, -1, -1),
                                              src_mask.expand(b, *src_mask.shape[1:]), cache), -1)  # (b, V_y)
        logp[:, PAD] = float("-inf")
        total = (scores[:, None] + logp).view(-1)                       # (b * V_y,)
        top = torch.topk(total, min(2 * k, total.numel()))
        V = logp.shape[-1]
        keep_rows, keep_tok, keep_score = [], [], []
        prefixes = beams[:, 1:].tolist() if tree is not None else None
        for rank, (s, idx) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            row, tok = divmod(idx, V)
            if tok == EOS and rank >= k:     # an end below the beam's k best is no hypothesis of it (fairseq,
                continue                     # transformers): five such ends stopped the search before the greedy
            if tree is not None:             # path, alive at log p −0.4, could end (QA: worse than greedy)
                tree.add(prefixes[row], tok, float(logp[row, tok]), step, ended=tok == EOS)
            if tok == EOS:
                finished.append((penalised(s, step + 1), beams[row, 1:].tolist() + [EOS]))
            else:
                keep_rows.append(row); keep_tok.append(tok); keep_score.append(s)
            if len(keep_rows) == k:
                break
        if len(finished) >= k or not keep_rows:   # k finished hypotheses: stop, as fairseq does
            break
        rows = torch.tensor(keep_rows)
        beams = torch.cat([beams[rows], torch.tensor(keep_tok)[:, None]], dim=1)
        scores = torch.tensor(keep_score)
        if cache is not None:
            for layer_cache in cache:
                for name in ("self_k", "self_v", "cross_k", "cross_v"):
                    layer_cache[name] = layer_cache[name][rows]
    if not finished:
        best = int(scores.argmax())
        return beams[best, 1:].tolist()
    return max(finished, key=lambda f: f[0])[1]


def decode_ids(lm: LoadedModel, src_ids: list[int], settings: DecodingSettings, use_cache: bool = True,
               draft: list[int] | None = None, encoded=None, record: dict | None = None,
               tree: BeamRecorder | None = None) -> list[int]:
    """The output ids under settings; draft and record (greedy only): see greedy; tree (beam only): see
    beam_search."""
    n = _max_new(lm.model, len(src_ids), settings)
    if settings.method == "beam":
        return beam_search(lm.model, src_ids, n, settings.beam, use_cache, encoded=encoded, tree=tree)
    if settings.method == "sample":
        return sample(lm.model, src_ids, n, settings.temperature, settings.top_k, settings.seed, use_cache,
                      encoded=encoded)
    return greedy(lm.model, src_ids, n, use_cache, draft=draft, encoded=encoded, record=record)


@torch.no_grad()
def trace_run(lm: LoadedModel, src_ids: list[int], out_ids: list[int], meta: dict | None = None,
              encoded: tuple | None = None) -> Trace:
    """One traced teacher-forced pass: the decoder reads <s> + out_ids[:-1]; row t is where out_ids[t] was chosen.
    encoded: ((memory, src_mask), record) of a traced model.encode of src_ids that already ran."""
    out_ids = list(out_ids[: lm.cfg.max_len]) or [EOS]
    record: dict = dict(encoded[1]) if encoded is not None else {}
    lm.model(torch.tensor([src_ids]), torch.tensor([[BOS] + out_ids[:-1]]), record=record,
             encoded=encoded[0] if encoded is not None else None)          # logits (1, Tt, V_y) in record
    return _trace(lm, src_ids, out_ids, record, meta)


def _trace(lm: LoadedModel, src_ids: list[int], out_ids: list[int], record: dict, meta: dict | None) -> Trace:
    """The Trace of a complete record of the teacher-forced pass whose decoder read <s> + out_ids[:-1]."""
    record["probs"] = torch.softmax(record["logits"].index_fill(-1, torch.tensor([PAD]), float("-inf")), -1)
    arrays = flatten_record(record)
    arrays["out_ids"] = np.asarray(out_ids, dtype=np.int64)
    return Trace(lm.src_tok.pieces(src_ids), lm.tgt_tok.pieces([BOS] + out_ids[:-1]), lm.tgt_tok.pieces(out_ids),
                 arrays, dict(meta or {}, model=lm.name, positional=bool(lm.model.positional),
                              scale_scores=lm.cfg.scale_scores, never_drawn=[PAD],      # as decoding draws
                              norm_eps=lm.cfg.ln_eps), lm.schema)


@dataclass
class Translation:
    """What translate returns: the output text and ids, the trace of the run, and how much of the text was cut
    to the model's length (truncated, in tokens)."""
    text: str                    # the translation (or the given target, under teacher forcing)
    out_ids: list[int]
    trace: Trace
    truncated: int = 0           # source pieces cut at the model's maximum length
    run: tuple = ()              # what it read: source ids, forced target, settings, positional switch, weights


def translate(lm: LoadedModel, text: str, settings: DecodingSettings = DecodingSettings(),
              target: str | None = None, positional: bool | None = None,
              previous: Translation | None = None, ablations: frozenset = NONE,
              forced_ids: list[int] | None = None) -> Translation:
    """Translate text (or force the decoder through target) and trace the run. positional switches the
    positional encoding on or off from this run on (None: as it is); a model without one stays without.

    previous: the last translation of this same model (the last keystroke's). When this run would read the same
    source pieces, target, decoding settings, positional switch and weights (a space typed between words), its
    result is given again without running the model. Otherwise greedy decoding checks its output first (the draft),
    and when that is the new output, the draft check's traced pass is the trace: one decoder pass, not two.

    ablations: heads switched off for this run, {(kind, layer, head)} 0-based (model/ablation.py); raises
    AblationError when one is not in the model.

    forced_ids: output ids to force through the decoder as they are (a beam search hypothesis, which need not end
    with </s>), instead of target. A beam search run's trace carries its tree in meta (model/beam_tree.py)."""
    ablations = check(ablations, lm.schema)
    if positional is not None:
        lm.model.positional = bool(positional) and lm.cfg.pe != "none"
    src = encode_source(lm, text)
    forced = lm.tgt_tok.encode(target)[: lm.cfg.max_len - 1] + [EOS] if target and target.strip() else None
    if forced_ids is not None:
        forced = [int(i) for i in forced_ids][: lm.cfg.max_len - 1] or None
        outside = [i for i in forced or () if not 0 <= i < lm.cfg.tgt_vocab_size]
        if outside:                  # (torch's "index out of range in self", deep in the decoder, had said it: QA)
            raise ValueError(f"forced_ids: {outside[0]} is no token id of {lm.name} (its ids run from 0 to "
                             f"{lm.cfg.tgt_vocab_size - 1})")
    run = (tuple(src.ids), None if forced is None else tuple(forced), None if forced else settings,
           bool(lm.model.positional), lm.weights_version, ablations)
    meta = {"sentence": text, "mode": "teacher-forced" if forced else settings.method,
            "decoding": "given target" if forced else settings.describe(), "truncated": src.truncated,
            "positional": bool(lm.model.positional), "lowercases": lm.src_tok.lowercases,
            "unknown": src.unknown,
            # a given target's too: the note had counted them and named none (QA)
            **({"unknown_target": lm.tgt_tok.unknown_parts(target)} if target and forced_ids is None else {}),
            # the words the encoder read: a long paste's cut words are not the model's to know
            **rare_words_meta(lm, lm.src_tok.decode(src.ids[:-1]) if src.truncated else text),
            "ablations": [spec(a) for a in sorted(ablations)]}
    if lm.training_steps:                 # weights changed in memory: figures and run.json say so (QA)
        meta["training_steps"] = lm.training_steps
    if previous is not None and previous.run == run:
        t = previous.trace
        trace = Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays, dict(t.meta, **meta), t.schema)
        return replace(previous, trace=trace, truncated=src.truncated)
    with heads_off(lm, ablations):
        with torch.no_grad():
            enc_record: dict = {}
            encoded = lm.model.encode(torch.tensor([src.ids]), enc_record)     # once, for decoding and the trace
        record: dict = {}
        if forced:
            out_ids = forced
        else:
            draft = list(previous.out_ids) if previous is not None else None
            tree = beam_recorder(lm, settings) if settings.method == "beam" else None
            out_ids = decode_ids(lm, src.ids, settings, draft=draft, encoded=encoded, record=record, tree=tree)
            if tree is not None:
                meta[META_KEY] = tree.done(out_ids).to_dict()
        meta["translation"] = out_text = lm.tgt_tok.decode(out_ids)
        if record:       # the draft check's pass read <s> + out_ids[:-1]: it is the trace
            trace = _trace(lm, src.ids, out_ids, {**enc_record, **record, "enc.out": encoded[0]}, meta)
        else:
            trace = trace_run(lm, src.ids, out_ids, meta, encoded=(encoded, enc_record))
    return Translation(out_text, out_ids, trace, src.truncated, run)


def beam_recorder(lm: LoadedModel, settings: DecodingSettings) -> BeamRecorder:
    """A recorder of beam_search's tree: the hypotheses start at <s>; pieces and texts from the target tokenizer."""
    return BeamRecorder(settings.beam, Penalty(GNMT, BEAM_ALPHA), BOS, lm.tgt_tok.pieces([BOS])[0],
                        lambda t: lm.tgt_tok.pieces([t])[0], lm.tgt_tok.decode)


@contextmanager
def heads_off(lm: LoadedModel, ablations: frozenset = NONE):
    """Within the block, the model runs with these heads switched off (their output slices zero before W_O);
    every head is on again after it. The caller holds lm.lock where other threads use the model."""
    modules = [(lm.model.attention_module(lm.schema, *where), heads)
               for where, heads in by_module(ablations, lm.schema).items()]
    try:
        for module, heads in modules:
            module.ablated = heads
        yield
    finally:
        for module, _ in modules:
            module.ablated = ()


@torch.no_grad()
def greedy_batch(model: Transformer | Sequence[Transformer], batch_src: list[list[int]],
                 max_new: int | None = None) -> list[list[int]]:
    """Greedy decoding of many sentences at once (for evaluation); each result ends at its first </s>.

    `model` may be a list of models that share one vocabulary, an ensemble: each token is then the one with the
    highest mean of their log-probabilities (for a single model, the highest logit: the same token)."""
    if not batch_src:
        return []
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    Ts = max(map(len, batch_src))
    src = torch.full((len(batch_src), Ts), PAD, dtype=torch.long)
    for b, s in enumerate(batch_src):
        src[b, : len(s)] = torch.tensor(s)
    device = next(models[0].parameters()).device          # the CPU, or a GPU while training there
    encoded = [m.encode(src.to(device)) for m in models]
    caches = [m.new_cache() for m in models]
    tgt = torch.full((len(batch_src), 1), BOS, dtype=torch.long, device=device)
    done = torch.zeros(len(batch_src), dtype=torch.bool, device=device)
    max_len = min(m.cfg.max_len for m in models)
    # each row's own limit, as decode_ids gives it alone: a row that never ends must not run on for its batch's
    # longest source (its output would then depend on the sentences it was batched with)
    limits = torch.tensor([min(max_len - 1, max_new if max_new is not None else 2 * len(s) + 10) for s in batch_src],
                          device=device)                                                       # (B,)
    for step in range(int(limits.max())):
        if len(models) == 1:
            scores = _next_logits(models[0], tgt, *encoded[0], caches[0])                     # (B, V_y)
        else:
            scores = sum(torch.log_softmax(_next_logits(m, tgt, memory, mask, cache).float(), dim=-1)
                         for m, (memory, mask), cache in zip(models, encoded, caches)) / len(models)
        nxt = scores.argmax(-1).masked_fill(done, PAD)                                       # (B,)
        tgt = torch.cat([tgt, nxt[:, None]], dim=1)
        done |= (nxt == EOS) | (limits <= step + 1)
        if bool(done.all()):
            break
    out = []
    for row in tgt[:, 1:].tolist():
        out.append(row[: row.index(EOS) + 1] if EOS in row else [i for i in row if i != PAD])
    return out
