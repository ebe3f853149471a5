"""Train the tokenizers and a translator from a parallel corpus, with the paper's recipe.

    python -m model.train --tsv train.tsv --valid-tsv valid.tsv --out runs/en-fr --minutes 90

Adam (0.9, 0.98), warm-up then inverse-square-root learning rate, label smoothing, dropout,
length-bucketed batches sized in tokens, gradient clipping, averaging of the last checkpoints.
Checkpoints are safetensors plus JSON (nothing is pickled); an interrupted run resumes with --resume.
Runs under `torchrun --nproc_per_node=N` with DistributedDataParallel (gloo on CPU, nccl on GPU).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from .baseline import WEIGHTS as BASELINE_WEIGHTS, BaselineTransformer
from .checkpoint import ModelLoadError, _atomic_write, load_model, save_model
from .config import ModelConfig
from .data import CorpusError, collate, read_aligned, read_tsv, report_problems, token_batches
from .tokenizer import TextTokenizer
from .transformer import PAD, Transformer


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m model.train", description=__doc__.split("\n")[0])
    data = p.add_argument_group("data")
    data.add_argument("--tsv", help="training pairs, source<TAB>target")
    data.add_argument("--src", help="training source file (line-aligned with --tgt)")
    data.add_argument("--tgt", help="training target file")
    data.add_argument("--valid-tsv")
    data.add_argument("--valid-src")
    data.add_argument("--valid-tgt")
    data.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    data.add_argument("--lowercase", action="store_true", help="lowercase both sides (as in Multi30k papers)")
    p.add_argument("--out", required=True, help="run folder: checkpoints, log and the final model")
    p.add_argument("--vocab-size", type=int, default=8000, help="per side (with --share-embeddings: in all)")
    p.add_argument("--tokenizers-from", help="reuse tokenizer_src.json and tokenizer_tgt.json of this folder")
    p.add_argument("--init-from", metavar="MODEL_DIR",
                   help="continue training a model folder's weights (its config and tokenizers are used; the "
                        "learning-rate schedule goes on from the steps it was trained)")
    p.add_argument("--init-steps", type=int, default=None,
                   help="with --init-from: the updates its weights had (default: the folder's metadata, else 0)")
    m = p.add_argument_group("model")
    m.add_argument("--d-model", type=int, default=256)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--d-ff", type=int, default=1024)
    m.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    m.add_argument("--dropout", type=float, default=0.1)
    m.add_argument("--max-len", type=int, default=128)
    m.add_argument("--pe", default="sinusoidal", choices=["sinusoidal", "learned", "none"])
    m.add_argument("--tie-output", action="store_true", help="share target embedding and output projection")
    m.add_argument("--share-embeddings", action="store_true",
                   help="one BPE vocabulary for both languages and one embedding matrix for source, target and "
                        "output (fairseq's --share-all-embeddings); implies --tie-output")
    m.add_argument("--baseline", action="store_true", help="train a plain torch.nn.Transformer of the same shape")
    t = p.add_argument_group("training")
    t.add_argument("--max-tokens", type=int, default=4096, help="padded tokens per batch (per process)")
    t.add_argument("--steps", type=int, default=0, help="stop after this many updates (0 = use --minutes)")
    t.add_argument("--minutes", type=float, default=0, help="stop after this much training time")
    t.add_argument("--warmup", type=int, default=4000)
    t.add_argument("--lr-scale", type=float, default=1.0, help="factor on d_model^-0.5 * min(s^-0.5, s*w^-1.5)")
    t.add_argument("--label-smoothing", type=float, default=0.1)
    t.add_argument("--clip", type=float, default=1.0)
    t.add_argument("--average", type=int, default=5, help="average the last N checkpoints at the end")
    t.add_argument("--ckpt-minutes", type=float, default=5.0, help="save a checkpoint this often")
    t.add_argument("--eval-every", type=int, default=1000, help="validate every N updates")
    t.add_argument("--eval-sentences", type=int, default=300)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    t.add_argument("--resume", action="store_true", help="continue from the run folder's last checkpoint")
    t.add_argument("--half", action="store_true", help="store the final weights as float16")
    a = p.parse_args(argv)
    if not (a.tsv or (a.src and a.tgt)):
        p.error("give --tsv FILE or --src FILE --tgt FILE")
    if not (a.steps or a.minutes):
        p.error("give --steps N or --minutes M")
    if a.share_embeddings and a.baseline:
        p.error("--share-embeddings is not available for the --baseline model")
    a.tie_output = a.tie_output or a.share_embeddings
    if a.init_from:
        if a.tokenizers_from and Path(a.tokenizers_from).resolve() != Path(a.init_from).resolve():
            p.error("--init-from uses the model folder's tokenizers; leave out --tokenizers-from")
        a.tokenizers_from = a.init_from
    return a


def read_corpus(tsv, src, tgt, strict, lowercase):
    corpus = read_tsv(tsv, strict) if tsv else read_aligned(src, tgt, strict)
    report_problems(corpus)
    if lowercase:
        corpus.src = [s.lower() for s in corpus.src]
        corpus.tgt = [t.lower() for t in corpus.tgt]
    return corpus


def _trained_steps(folder: Path) -> int:
    """The update count a model folder's weights were trained for (0 when its metadata does not say)."""
    from safetensors import safe_open
    with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
        meta = f.metadata() or {}
    try:
        return int(meta.get("steps", 0))
    except ValueError:
        return 0


def lr_at(step: int, d_model: int, warmup: int, scale: float) -> float:
    step = max(step, 1)
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


class Run:
    """The state of one training run and its files in the run folder."""

    def __init__(self, a):
        self.a = a
        self.out = Path(a.out)
        self.ddp = int(os.environ.get("WORLD_SIZE", "1")) > 1
        if self.ddp:
            dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        self.rank = dist.get_rank() if self.ddp else 0
        self.world = dist.get_world_size() if self.ddp else 1
        self.main = self.rank == 0
        if a.threads:
            torch.set_num_threads(a.threads)
        self.ckpt_dir = self.out / "checkpoints"
        if self.main:
            self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        self.barrier()

    def barrier(self):
        if self.ddp:
            dist.barrier()

    def log(self, msg: str):
        if self.main:
            tqdm.write(msg)
            with open(self.out / "train.log", "a", encoding="utf-8") as f:
                f.write(msg + "\n")


def build_tokenizers(run: Run, corpus):
    a, out = run.a, run.out
    src_path, tgt_path = out / "tokenizer_src.json", out / "tokenizer_tgt.json"
    if run.main and a.tokenizers_from:
        for path in (src_path, tgt_path):
            shutil.copy(Path(a.tokenizers_from) / path.name, path)
    elif run.main and not (a.resume and src_path.exists() and tgt_path.exists()):
        if a.share_embeddings:   # one joint vocabulary, stored under both names
            TextTokenizer.train(corpus.src + corpus.tgt, a.vocab_size, lowercase=a.lowercase).save(src_path)
            shutil.copy(src_path, tgt_path)
        else:
            TextTokenizer.train(corpus.src, a.vocab_size, lowercase=a.lowercase).save(src_path)
            TextTokenizer.train(corpus.tgt, a.vocab_size, lowercase=a.lowercase).save(tgt_path)
    run.barrier()
    src_tok, tgt_tok = TextTokenizer.load(src_path), TextTokenizer.load(tgt_path)
    if a.share_embeddings and src_tok.to_str() != tgt_tok.to_str():
        raise CorpusError(f"--share-embeddings needs one vocabulary for both sides; {src_path.name} and "
                          f"{tgt_path.name} differ")
    return src_tok, tgt_tok


def encode_pairs(corpus, src_tok, tgt_tok, max_len):
    pairs, too_long = [], 0
    for s, t in zip(corpus.src, corpus.tgt):
        si, ti = src_tok.encode(s), tgt_tok.encode(t)
        if len(si) + 1 > max_len or len(ti) + 1 > max_len:
            too_long += 1
            continue
        pairs.append((si, ti))
    return pairs, too_long


def save_state(run: Run, model, opt, step: int, epoch: int, batch_pos: int, elapsed: float):
    """A resumable checkpoint: weights and Adam state in safetensors, counters in JSON."""
    tensors = {f"model.{k}": v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p, {})
            for key in ("exp_avg", "exp_avg_sq"):
                if key in st:
                    tensors[f"adam.{key}.{names[id(p)]}"] = st[key].detach().clone().contiguous()
    for key in model.cfg.shared_keys:
        tensors.pop(f"model.{key}", None)
    path = run.ckpt_dir / f"step{step:07d}.safetensors"
    _atomic_write(path, lambda tmp: save_file(tensors, tmp))
    info = {"step": step, "epoch": epoch, "batch_pos": batch_pos, "elapsed": elapsed,
            "file": path.name, "rng": random.getstate()[1][0]}
    _atomic_write(run.ckpt_dir / "last.json", lambda tmp: Path(tmp).write_text(json.dumps(info), encoding="utf-8"))
    keep = sorted(run.ckpt_dir.glob("step*.safetensors"))[: -max(run.a.average, 2)]
    for old in keep:
        old.unlink()


def load_state(run: Run, model, opt):
    info = json.loads((run.ckpt_dir / "last.json").read_text(encoding="utf-8"))
    tensors = load_file(str(run.ckpt_dir / info["file"]))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")},
                          strict=not model.cfg.shared_keys)
    params = dict(model.named_parameters())
    for n, p in params.items():
        if f"adam.exp_avg.{n}" in tensors:
            opt.state[p] = {"step": torch.tensor(float(info["step"])),
                            "exp_avg": tensors[f"adam.exp_avg.{n}"], "exp_avg_sq": tensors[f"adam.exp_avg_sq.{n}"]}
    return info


def average_checkpoints(run: Run, model, n: int):
    files = sorted(run.ckpt_dir.glob("step*.safetensors"))[-n:]
    if not files:
        return 0
    acc = None
    for f in files:
        st = {k[6:]: v.float() for k, v in load_file(str(f)).items() if k.startswith("model.")}
        acc = st if acc is None else {k: acc[k] + st[k] for k in acc}
    model.load_state_dict({k: v / len(files) for k, v in acc.items()}, strict=not model.cfg.shared_keys)
    return len(files)


@torch.no_grad()
def validate(run: Run, model, valid_pairs, valid_refs, src_tok, tgt_tok):
    from .evaluate import score
    from .decoding import greedy_batch
    model.eval()
    total, count = 0.0, 0
    for idx in token_batches(valid_pairs, 4096, 0, shuffle=False):
        src, tin, tout = collate(valid_pairs, idx)
        logits = model(src, tin)
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                 ignore_index=PAD, reduction="sum").item()
        count += int((tout != PAD).sum())
    n = min(run.a.eval_sentences, len(valid_refs))
    hyps = []
    for start in range(0, n, 64):
        srcs = [valid_pairs[i][0] + [3] for i in range(start, min(n, start + 64))]
        hyps += [tgt_tok.decode(o) for o in greedy_batch(model, srcs)]
    bleu, chrf = score(hyps, [[r] for r in valid_refs[:n]])
    model.train()
    return total / max(count, 1), bleu, chrf, hyps[:3]


def main(argv=None) -> int:
    a = parse_args(argv)
    random.seed(a.seed)
    torch.manual_seed(a.seed)
    run = Run(a)
    try:
        corpus = read_corpus(a.tsv, a.src, a.tgt, a.strict, a.lowercase)
        valid = None
        if a.valid_tsv or (a.valid_src and a.valid_tgt):
            valid = read_corpus(a.valid_tsv, a.valid_src, a.valid_tgt, a.strict, a.lowercase)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not len(corpus):
        print("error: the training corpus holds no usable pairs", file=sys.stderr)
        return 2
    try:
        src_tok, tgt_tok = build_tokenizers(run, corpus)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pairs, too_long = encode_pairs(corpus, src_tok, tgt_tok, a.max_len)
    run.log(f"corpus: {len(corpus)} pairs read, {len(corpus.problems)} malformed skipped, "
            f"{too_long} longer than {a.max_len} tokens skipped, {len(pairs)} used")
    if valid is not None:
        valid_pairs, _ = encode_pairs(valid, src_tok, tgt_tok, a.max_len)
        kept = [t for s, t in zip(valid.src, valid.tgt)
                if len(src_tok.encode(s)) + 1 <= a.max_len and len(tgt_tok.encode(t)) + 1 <= a.max_len]
        valid_refs = kept
    cfg = ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=a.d_model,
                      h=a.heads, d_ff=a.d_ff, N_enc=a.layers, N_dec=a.layers, max_len=a.max_len,
                      dropout=a.dropout, pe=a.pe, tie_output=a.tie_output, share_embeddings=a.share_embeddings)
    init_steps = 0
    if a.init_from:
        try:
            start = load_model(a.init_from)
        except ModelLoadError as e:
            print(f"error: --init-from: {e}", file=sys.stderr)
            return 2
        cfg = ModelConfig.from_dict({**start.cfg.__dict__, "dropout": a.dropout})
        init_steps = a.init_steps if a.init_steps is not None else _trained_steps(Path(a.init_from))
    model = (BaselineTransformer if a.baseline else Transformer)(cfg)
    if a.init_from:
        model.load_state_dict(start.model.state_dict())
        run.log(f"initialised from {a.init_from} (trained {init_steps} steps)")
    run.log(f"processes: {run.world}; model: {'torch.nn.Transformer baseline' if a.baseline else 'Transformer'} "
            f"{model.num_parameters():,} parameters, config {json.dumps(cfg.__dict__)}")
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    step, epoch, batch_pos, elapsed = 0, 0, 0, 0.0
    if a.resume and (run.ckpt_dir / "last.json").exists():
        info = load_state(run, model, opt)
        step, epoch, batch_pos, elapsed = info["step"], info["epoch"], info["batch_pos"], info["elapsed"]
        run.log(f"resumed at step {step} (epoch {epoch}, {elapsed / 60:.1f} min trained)")
    train_model = model
    if run.ddp:
        train_model = torch.nn.parallel.DistributedDataParallel(model)
    model.train()
    budget_s = a.minutes * 60 if a.minutes else None
    bar = tqdm(total=a.steps or None, initial=step, disable=not run.main, unit="step", dynamic_ncols=True,
               mininterval=2.0)
    last_ckpt = time.monotonic()
    tokens_seen, t_window = 0, time.monotonic()
    done = False
    try:
        while not done:
            batches = token_batches(pairs, a.max_tokens, a.seed + epoch)
            batches = batches[run.rank::run.world]
            if run.ddp:   # every process takes the same number of steps
                n = torch.tensor(len(batches)); dist.all_reduce(n, op=dist.ReduceOp.MIN); batches = batches[: int(n)]
            while batch_pos < len(batches):
                t0 = time.monotonic()
                src, tin, tout = collate(pairs, batches[batch_pos])
                for g in opt.param_groups:
                    g["lr"] = lr_at(init_steps + step + 1, cfg.d_model, a.warmup, a.lr_scale)
                logits = train_model(src, tin)                                       # (B, Tt, V_y)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                       ignore_index=PAD, label_smoothing=a.label_smoothing)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
                opt.step()
                step += 1
                batch_pos += 1
                elapsed += time.monotonic() - t0
                tokens_seen += int((tout != PAD).sum()) * run.world
                now = time.monotonic()
                tok_s = tokens_seen / max(now - t_window, 1e-9)
                if run.main:
                    left = ""
                    if budget_s:
                        left = f"{max(0.0, budget_s - elapsed) / 60:.1f}min"
                    bar.set_postfix_str(f"loss {loss.item():.3f} tok/s {tok_s:,.0f} lr {opt.param_groups[0]['lr']:.2e}"
                                        + (f" left {left}" if left else ""), refresh=False)
                    bar.update(1)
                if now - t_window > 60:
                    tokens_seen, t_window = 0, now
                    run.log(f"step {step} epoch {epoch} loss {loss.item():.3f} tok/s {tok_s:,.0f} "
                            f"trained {elapsed / 60:.1f} min")
                if valid is not None and run.main and step % a.eval_every == 0:
                    vloss, bleu, chrf, sample = validate(run, model, valid_pairs, valid_refs, src_tok, tgt_tok)
                    run.log(f"step {step} valid loss {vloss:.3f} BLEU {bleu:.2f} chrF {chrf:.2f} | {sample[0]}")
                out_of_time = bool((a.steps and step >= a.steps) or (budget_s and elapsed >= budget_s))
                if run.ddp:   # the processes' clocks differ: rank 0 decides for all
                    flag = torch.tensor(int(out_of_time)); dist.broadcast(flag, 0); out_of_time = bool(flag)
                if run.main and (now - last_ckpt > a.ckpt_minutes * 60 or out_of_time):
                    save_state(run, model, opt, step, epoch, batch_pos, elapsed)
                    last_ckpt = now
                if out_of_time:
                    done = True
                    break
            if not done:
                epoch, batch_pos = epoch + 1, 0
    except KeyboardInterrupt:
        if run.main:
            save_state(run, model, opt, step, epoch, batch_pos, elapsed)
            run.log(f"interrupted at step {step}; checkpoint saved, continue with --resume")
        return 130
    finally:
        bar.close()
    if run.main:
        n = average_checkpoints(run, model, a.average)
        final = run.out / "model"
        if a.baseline:
            final.mkdir(parents=True, exist_ok=True)
            state = {k: v.contiguous() for k, v in model.state_dict().items()}
            _atomic_write(final / BASELINE_WEIGHTS, lambda tmp: save_file(state, tmp))
            _atomic_write(final / "config.json", lambda tmp: Path(tmp).write_text(cfg.to_json(), encoding="utf-8"))
        else:
            save_model(final, model, src_tok, tgt_tok, half=a.half, metadata={"steps": step})
        for name in ("tokenizer_src.json", "tokenizer_tgt.json"):
            shutil.copy(run.out / name, final / name)
        if valid is not None:
            vloss, bleu, chrf, _ = validate(run, model, valid_pairs, valid_refs, src_tok, tgt_tok)
            run.log(f"final (average of {n}): valid loss {vloss:.3f} BLEU {bleu:.2f} chrF {chrf:.2f}")
        run.log(f"finished: {step} steps, {elapsed / 60:.1f} min of training; model in {final}")
    if run.ddp:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
