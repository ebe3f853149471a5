"""Train the tokenizers and a translator from a parallel corpus, with the paper's recipe.

    python -m model.train --tsv train.tsv --valid-tsv valid.tsv --out runs/en-fr --minutes 90

Adam (0.9, 0.98), warm-up then inverse-square-root learning rate, label smoothing, dropout,
length-bucketed batches sized in tokens, gradient clipping, averaging of the last checkpoints.
Checkpoints are safetensors plus JSON (nothing is pickled); an interrupted run resumes with --resume.
Runs under `torchrun --nproc_per_node=N` with DistributedDataParallel (gloo on CPU, nccl on GPU).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from .assets import CONFIG, SRC_TOK, TGT_TOK
from .baseline import WEIGHTS as BASELINE_WEIGHTS, BaselineTransformer
from .checkpoint import ModelLoadError, load_model, save_model, step_counts
from .command_line import ArgumentParser, UsageError, command, device_kind, writable_folder
from .checks import count_right, read_checks
from .config import ModelConfig
from .data import CorpusError, PieceDropout, collate, read_aligned, read_tsv, report_problems, token_batches
from .files import atomic_write
from .losses import training_loss
from .tokenizer import TextTokenizer
from .training_words import WordCounts
from .transformer import EOS, PAD, Transformer


def parse_args(argv=None):
    p = ArgumentParser(prog="attention-visualizer train", description=__doc__.split("\n")[0] + " (also "
                       "`python -m model.train`, as torchrun runs it)")
    data = p.add_argument_group("data")
    data.add_argument("--tsv", help="training pairs, source<TAB>target")
    data.add_argument("--src", help="training source file (line-aligned with --tgt)")
    data.add_argument("--tgt", help="training target file")
    data.add_argument("--valid-tsv", help="validation pairs, source<TAB>target (several lines of one source: its "
                                          "references); its BLEU is logged at every --eval-every")
    data.add_argument("--valid-src", help="validation source file (line-aligned with --valid-tgt)")
    data.add_argument("--valid-tgt", help="validation target file")
    data.add_argument("--check", metavar="FILE", help="a list of English<TAB>accepted|translations lines (as "
                      "check-translations reads): the log counts how many come out right, greedy, at every validation")
    data.add_argument("--strict", action="store_true", help="a malformed line is an error (else it is skipped and "
                                                            "counted)")
    data.add_argument("--lowercase", action="store_true", help="lowercase both sides (as in Multi30k papers)")
    p.add_argument("--out", required=True, help="run folder: checkpoints, log and the final model")
    p.add_argument("--vocab-size", type=int, default=8000, help="per side (with --share-embeddings: in all)")
    p.add_argument("--tokenizers-from", help="reuse tokenizer_src.json and tokenizer_tgt.json of this folder")
    p.add_argument("--digit-by-digit", action="store_true",
                   help="cut every number into single digits (\"125\" → \"▁1\" \"2\" \"5\"): the tokenizers' merges "
                        "that join two digits are left out; a reused vocabulary keeps its ids, so it works with "
                        "--init-from")
    p.add_argument("--init-from", metavar="MODEL_DIR",
                   help="continue training a model folder's weights (its config and tokenizers are used; the "
                        "learning-rate schedule goes on from the steps it was trained)")
    p.add_argument("--init-steps", type=int, default=None,
                   help="with --init-from: the updates its weights had (default: the folder's metadata, else 0)")
    m = p.add_argument_group("model")
    m.add_argument("--d-model", type=int, default=256, help="width of every token's vector (default %(default)s)")
    m.add_argument("--heads", type=int, default=4, help="attention heads per layer; must divide --d-model")
    m.add_argument("--d-ff", type=int, default=1024, help="inner width of the feed-forward sublayers")
    m.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    m.add_argument("--dropout", type=float, default=0.1, help="dropout probability (default %(default)s)")
    m.add_argument("--max-len", type=int, default=128, help="longest sentence in tokens; longer pairs are skipped")
    m.add_argument("--pe", default="sinusoidal", choices=["sinusoidal", "learned", "none"],
                   help="positional encodings (default: the paper's sinusoids)")
    m.add_argument("--tie-output", action="store_true", help="share target embedding and output projection")
    m.add_argument("--share-embeddings", action="store_true",
                   help="one BPE vocabulary for both languages and one embedding matrix for source, target and "
                        "output (fairseq's --share-all-embeddings); implies --tie-output")
    m.add_argument("--baseline", action="store_true", help="train a plain torch.nn.Transformer of the same shape")
    t = p.add_argument_group("training")
    t.add_argument("--max-tokens", type=int, default=4096, help="padded tokens per batch (per process)")
    t.add_argument("--steps", type=int, default=0, help="stop after this many updates (0 = use --minutes)")
    t.add_argument("--minutes", type=float, default=0, help="stop after this much training time")
    t.add_argument("--warmup", type=int, default=4000, help="updates over which the learning rate rises")
    t.add_argument("--lr-scale", type=float, default=1.0, help="factor on d_model^-0.5 * min(s^-0.5, s*w^-1.5)")
    t.add_argument("--cooldown", type=int, default=0,
                   help="the last N of --steps updates take the learning rate linearly down to zero")
    t.add_argument("--cooldown-minutes", type=float, default=0, metavar="M",
                   help="the last M of --minutes of training time take the learning rate linearly down to zero "
                        "(for a run on a lent machine, whose updates per minute are not known beforehand)")
    t.add_argument("--label-smoothing", type=float, default=0.1, help="the paper's ε_ls (default %(default)s)")
    t.add_argument("--rdrop", type=float, default=0.0, metavar="ALPHA",
                   help="R-Drop: each batch runs twice and the symmetric KL between the two outputs is added with "
                        "this weight (5 in the paper's small translation tasks; 0 = off; doubles the work per update)")
    t.add_argument("--bpe-dropout", type=float, default=0.0, metavar="P",
                   help="BPE-dropout: split each batch's sentences anew, leaving out each merge of the tokenizers "
                        "with this probability (0.1 in the paper; 0 = off). A resumed run draws other splits")
    t.add_argument("--clip", type=float, default=1.0, help="largest gradient norm (default %(default)s)")
    t.add_argument("--average", type=int, default=5, help="average the last N checkpoints at the end")
    t.add_argument("--ckpt-minutes", type=float, default=5.0, help="save a checkpoint this often")
    t.add_argument("--eval-every", type=int, default=1000, help="validate every N updates")
    t.add_argument("--eval-sentences", type=int, default=300, help="validation sentences each validation scores")
    t.add_argument("--seed", type=int, default=1, help="random seed: the same seed and data give the same run")
    t.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    t.add_argument("--device", default="cpu", help="where to train: cpu (default), or cuda for a GPU (checkpoints and "
                                                   "the model are stored for the CPU either way)")
    t.add_argument("--resume", action="store_true", help="continue from the run folder's last checkpoint")
    t.add_argument("--half", action="store_true", help="store the final weights as float16")
    a = p.parse_args(argv)
    if not (a.tsv or (a.src and a.tgt)):
        p.error("give --tsv FILE or --src FILE --tgt FILE")
    if not (a.steps or a.minutes):
        p.error("give --steps N or --minutes M")
    if a.cooldown and not a.steps:
        p.error("--cooldown needs --steps (the updates it ends at)")
    if a.cooldown_minutes and (a.steps or not a.minutes or a.cooldown):
        p.error("--cooldown-minutes needs --minutes and neither --steps nor --cooldown (the time it ends at)")
    if a.share_embeddings and a.baseline:
        p.error("--share-embeddings is not available for the --baseline model")
    a.tie_output = a.tie_output or a.share_embeddings
    if a.init_from:
        if a.tokenizers_from and Path(a.tokenizers_from).resolve() != Path(a.init_from).resolve():
            p.error("--init-from uses the model folder's tokenizers; leave out --tokenizers-from")
        a.tokenizers_from = a.init_from
    for name in ("vocab_size", "d_model", "heads", "d_ff", "layers", "max_len", "max_tokens", "warmup", "average",
                 "eval_every"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("steps", "minutes", "eval_sentences", "threads", "ckpt_minutes", "cooldown",
                 "cooldown_minutes"):
        if not getattr(a, name) >= 0:
            p.error(f"--{name.replace('_', '-')} must not be negative")
    if not a.rdrop >= 0:
        p.error("--rdrop must not be negative")
    if a.rdrop and not a.dropout:
        p.error("--rdrop needs --dropout above 0: without dropout both passes are the same")
    if not 0 <= a.dropout < 1 or not 0 <= a.label_smoothing < 1 or not 0 <= a.bpe_dropout < 1:
        p.error("--dropout, --label-smoothing and --bpe-dropout must be in [0, 1)")
    a.device = device_kind(p, a.device, "train with --device cpu")
    writable_folder(a.out)
    return a


def read_corpus(tsv, src, tgt, strict, lowercase):
    corpus = read_tsv(tsv, strict) if tsv else read_aligned(src, tgt, strict)
    report_problems(corpus)
    if lowercase:
        corpus.src = [s.lower() for s in corpus.src]
        corpus.tgt = [t.lower() for t in corpus.tgt]
    return corpus


def lr_at(step: int, d_model: int, warmup: int, scale: float) -> float:
    step = max(step, 1)
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def cooldown_factor(done: int, steps: int, cooldown: int) -> float:
    """The factor on the learning rate of the update after `done` updates of `steps`: 1 until the last `cooldown`
    updates, then falling linearly, 1/cooldown on the last one (a trapezoid schedule's decay)."""
    if cooldown <= 0:
        return 1.0
    return min(1.0, max(steps - done, 0) / cooldown)


def time_cooldown_factor(elapsed_s: float, budget_s: float | None, cooldown_s: float) -> float:
    """The factor on the learning rate of an update that starts after `elapsed_s` seconds of training in a run of
    `budget_s`: 1 until the last `cooldown_s`, then falling linearly with the time left (the same trapezoid as
    `cooldown_factor`, measured in time)."""
    if cooldown_s <= 0 or budget_s is None:
        return 1.0
    return min(1.0, max(budget_s - elapsed_s, 0.0) / cooldown_s)


class Run:
    """The state of one training run and its files in the run folder."""

    def __init__(self, a):
        self.a = a
        self.out = Path(a.out)
        self.ddp = int(os.environ.get("WORLD_SIZE", "1")) > 1
        if self.ddp:
            dist.init_process_group("nccl" if a.device == "cuda" else "gloo")
        self.rank = dist.get_rank() if self.ddp else 0
        self.world = dist.get_world_size() if self.ddp else 1
        self.main = self.rank == 0
        if a.threads:
            torch.set_num_threads(a.threads)
        self.device = torch.device("cpu")
        if a.device == "cuda":   # one GPU per process, as torchrun numbers them
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(self.device)
            torch.backends.cuda.matmul.allow_tf32 = True
        self.ckpt_dir = self.out / "checkpoints"
        if self.main:
            try:
                self.ckpt_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:              # a place no folder can be made in (under /proc, say)
                raise UsageError(f"--out {self.out}: cannot create the folder ({e.strerror})") from None
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
    src_path, tgt_path = out / SRC_TOK, out / TGT_TOK
    if run.main and a.tokenizers_from:
        for path in (src_path, tgt_path):
            source = Path(a.tokenizers_from) / path.name
            if not source.is_file():                 # (a Hugging Face folder: "[Errno 2] No such file…", QA)
                raise CorpusError(f"--tokenizers-from {a.tokenizers_from}: no {path.name} (only this app's own "
                                  "model folders hold its tokenizers)")
            shutil.copy(source, path)
    elif run.main and not (a.resume and src_path.exists() and tgt_path.exists()):
        if a.share_embeddings:   # one joint vocabulary, stored under both names
            TextTokenizer.train(corpus.src + corpus.tgt, a.vocab_size, lowercase=a.lowercase).save(src_path)
            shutil.copy(src_path, tgt_path)
        else:
            TextTokenizer.train(corpus.src, a.vocab_size, lowercase=a.lowercase).save(src_path)
            TextTokenizer.train(corpus.tgt, a.vocab_size, lowercase=a.lowercase).save(tgt_path)
    if run.main and a.digit_by_digit:
        for path in (src_path, tgt_path):
            load_tokenizer(a, path).digit_by_digit().save(path)
    run.barrier()
    src_tok, tgt_tok = load_tokenizer(a, src_path), load_tokenizer(a, tgt_path)
    if a.share_embeddings and src_tok.to_str() != tgt_tok.to_str():
        raise CorpusError(f"--share-embeddings needs one vocabulary for both sides; {src_path.name} and "
                          f"{tgt_path.name} differ")
    return src_tok, tgt_tok


def load_tokenizer(a, path: Path) -> TextTokenizer:
    try:
        return TextTokenizer.load(path)
    except OSError:
        raise
    except Exception as e:      # the tokenizers library's own: "EOF while parsing a value" named no file (QA)
        where = f"--tokenizers-from {a.tokenizers_from}" if a.tokenizers_from else str(path.parent)
        raise CorpusError(f"{where}: not a valid tokenizer file ({str(e).splitlines()[0][:120]})") from None


def encode_pairs(corpus, src_tok, tgt_tok, max_len):
    """(pairs of piece ids, how many were too long, the texts of the pairs kept)."""
    pairs, texts, too_long = [], [], 0
    for s, t in zip(corpus.src, corpus.tgt):
        si, ti = src_tok.encode(s), tgt_tok.encode(t)
        if len(si) + 1 > max_len or len(ti) + 1 > max_len:
            too_long += 1
            continue
        pairs.append((si, ti))
        texts.append((s, t))
    return pairs, too_long, texts


def save_state(run: Run, model, opt, step: int, epoch: int, batch_pos: int, elapsed: float,
               off_schedule: bool = False):
    """A resumable checkpoint: weights and Adam state in safetensors, counters in JSON. `off_schedule`: saved by a
    stop or the run's end between two periodic saves (see checkpoints_to_average)."""
    tensors = {f"model.{k}": v.detach().to("cpu", copy=True).contiguous() for k, v in model.state_dict().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p, {})
            for key in ("exp_avg", "exp_avg_sq"):
                if key in st:
                    tensors[f"adam.{key}.{names[id(p)]}"] = st[key].detach().to("cpu", copy=True).contiguous()
    for key in model.cfg.shared_keys:
        tensors.pop(f"model.{key}", None)
    path = run.ckpt_dir / f"step{step:07d}.safetensors"
    info = {"step": step, "epoch": epoch, "batch_pos": batch_pos, "elapsed": elapsed,
            "file": path.name, "rng": random.getstate()[1][0], "config": shape_config(model.cfg),
            "off_schedule": off_schedule}
    # the counters also go in the checkpoint itself: a damaged newer one falls back on it (see load_state)
    atomic_write(path, lambda tmp: save_file(tensors, tmp, metadata={"info": json.dumps(info)}))
    atomic_write(run.ckpt_dir / "last.json", lambda tmp: Path(tmp).write_text(json.dumps(info), encoding="utf-8"))
    # kept: those the final average takes, and the newest two whatever they are (the one before the newest is
    # where a run resumes if the newest is damaged; see load_state)
    kept = set(checkpoints_to_average(run.ckpt_dir)[-max(run.a.average, 2):])
    kept |= set(sorted(run.ckpt_dir.glob("step*.safetensors"))[-2:])
    for old in run.ckpt_dir.glob("step*.safetensors"):
        if old not in kept:
            old.unlink()


def stored_info(path: Path) -> dict:
    """The counters a checkpoint keeps in its own metadata, read without its tensors (SafetensorError, OSError,
    ValueError, KeyError or TypeError for one that cannot be read)."""
    from safetensors import safe_open
    with safe_open(str(path), framework="pt") as f:
        info = json.loads((f.metadata() or {})["info"])
    if not isinstance(info, dict):
        raise TypeError("the checkpoint's counters are no record")
    return info


def checkpoints_to_average(ckpt_dir: Path) -> list[Path]:
    """The checkpoints, oldest first, less each one saved off the periodic schedule (by a signal's stop or the end
    of --steps or --minutes) that a newer one follows: the run resumed from it, and it may be a step or two past
    the periodic one before it (averaged, both weighted that moment twice). A stop on the step of a periodic save
    is that save, and stays. The newest is always kept: a run resumes from it. ("stopped": a signal's checkpoint
    saved before this rule had its name.)"""
    from safetensors import SafetensorError
    files = sorted(ckpt_dir.glob("step*.safetensors"))

    def off_schedule(path: Path) -> bool:
        try:
            info = stored_info(path)
        except (SafetensorError, OSError, ValueError, KeyError, TypeError):
            return False
        return info.get("off_schedule", info.get("stopped")) is True
    return [f for f in files[:-1] if not off_schedule(f)] + files[-1:]


def shape_config(cfg: ModelConfig) -> dict:
    """The config fields a checkpoint's tensors depend on (dropout may change on resume)."""
    return {k: v for k, v in cfg.__dict__.items() if k != "dropout"}


def run_files(out: Path) -> list[str]:
    """What of a training run a folder holds (its tokenizers, checkpoints, final model), as names to show."""
    found = [name for name in (SRC_TOK, TGT_TOK) if (out / name).is_file()]
    if any(p.is_file() and p.suffix in (".safetensors", ".json") for p in (out / "checkpoints").glob("*")):
        found.append("checkpoints/")
    found += [f"model/{p.name}" for p in sorted((out / "model").glob("*.safetensors"))]
    return found


def keep_earlier_log(out: Path) -> Path | None:
    """A new run's folder that holds an earlier run's train.log alone (its other files removed): the log is renamed
    train.log.1 (or the next number free), so that this run's log, which the model card reads its curve from, is
    not appended to it."""
    log = out / "train.log"
    if not log.is_file():
        return None
    n = 1
    while (out / f"train.log.{n}").exists():
        n += 1
    log.rename(out / f"train.log.{n}")
    return out / f"train.log.{n}"


def clean_stale_parts(run: Run) -> list[Path]:
    """Remove the temporary .part files a run killed mid-write left (never read: every write renames its own)."""
    stale = []
    for folder in (run.out, run.ckpt_dir, run.out / "model"):
        if folder.is_dir():
            stale += [p for p in folder.glob("*.part") if p.is_file()]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def _checkpoint_candidates(ckpt_dir: Path) -> list[tuple[Path, dict | None]]:
    """(file, counters) newest first: last.json's file with its counters, then the others (counters read from
    their own metadata)."""
    named = None
    try:
        info = json.loads((ckpt_dir / "last.json").read_text(encoding="utf-8"))
        named = (ckpt_dir / str(info["file"]), info) if isinstance(info, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        pass
    others = [(f, None) for f in sorted(ckpt_dir.glob("step*.safetensors"), reverse=True)
              if named is None or f.name != named[0].name]
    return ([named] if named else []) + others


def check_steps_left(run: Run, step: int) -> None:
    """UsageError when a --resume's run is at --steps or past it already (it trained one step more, to 601 of
    --steps 40: QA)."""
    if run.a.steps and step >= run.a.steps:
        raise UsageError(f"--resume: the run in {run.out} is at step {step:,} already; give --steps above it to "
                         "train on")


def newest_step(ckpt_dir: Path) -> int | None:
    """The step of the newest checkpoint whose counters can be read, without reading its tensors (None: none)."""
    from safetensors import SafetensorError
    for path, info in _checkpoint_candidates(ckpt_dir):
        try:
            return int((info if info is not None else stored_info(path))["step"])
        except (SafetensorError, OSError, ValueError, KeyError, TypeError):
            continue
    return None


def load_state(run: Run, model, opt):
    """Load the newest readable checkpoint; a damaged one is skipped with a notice (the previous good one is
    used). UsageError when the checkpoints were made by a model of another shape."""
    from safetensors import SafetensorError
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items() if k not in model.cfg.shared_keys}
    for path, info in _checkpoint_candidates(run.ckpt_dir):
        try:
            if info is None:
                info = stored_info(path)
            tensors = load_file(str(path))
            step = int(info["step"])
            counters = {k: info[k] for k in ("step", "epoch", "batch_pos", "elapsed")}
        except (SafetensorError, OSError, ValueError, KeyError, TypeError) as e:
            run.log(f"notice: checkpoint {path.name} cannot be read ({type(e).__name__}: "
                    f"{str(e).splitlines()[0][:100] if str(e) else ''}); trying the previous one")
            continue
        stored = info.get("config")
        if stored is not None and stored != shape_config(model.cfg):
            diff = [f"{k} {stored.get(k)!r} (now {v!r})" for k, v in shape_config(model.cfg).items()
                    if stored.get(k) != v]
            raise UsageError(f"--resume: the run in {run.out} was trained with {', '.join(diff)}; give the "
                             "same model options or another --out")
        got = {k[6:]: tuple(v.shape) for k, v in tensors.items() if k.startswith("model.")}
        if got != expected:
            wrong = sorted(k for k in expected if got.get(k) != expected[k])[:3]
            raise UsageError(f"--resume: the checkpoints in {run.ckpt_dir} belong to a model of another shape "
                             f"({', '.join(wrong) or 'other tensors'}); give the same model options or another --out")
        model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")},
                              strict=not model.cfg.shared_keys)
        params = dict(model.named_parameters())
        for n, p in params.items():
            if f"adam.exp_avg.{n}" in tensors:
                opt.state[p] = {"step": torch.tensor(float(step)),
                                "exp_avg": tensors[f"adam.exp_avg.{n}"].to(p.device),
                                "exp_avg_sq": tensors[f"adam.exp_avg_sq.{n}"].to(p.device)}
        if path.name != _checkpoint_candidates(run.ckpt_dir)[0][0].name:
            run.log(f"notice: resuming from the previous good checkpoint {path.name}")
        return counters
    return None


def average_checkpoints(run: Run, model, n: int):
    files = checkpoints_to_average(run.ckpt_dir)[-n:]
    if not files:
        return 0
    from safetensors import SafetensorError
    acc, used = None, 0
    for f in files:
        try:
            st = {k[6:]: v.float() for k, v in load_file(str(f)).items() if k.startswith("model.")}
        except (SafetensorError, OSError) as e:
            run.log(f"notice: checkpoint {f.name} cannot be read ({str(e).splitlines()[0][:100]}); left out of the average")
            continue
        acc = st if acc is None else {k: acc[k] + st[k] for k in acc}
        used += 1
    if acc is None:
        return 0
    model.load_state_dict({k: v / used for k, v in acc.items()}, strict=not model.cfg.shared_keys)
    return used


@torch.no_grad()
def validate(run: Run, model, valid_pairs, valid_refs, src_tok, tgt_tok):
    from .evaluate import score
    from .decoding import greedy_batch
    model.eval()
    total, count = 0.0, 0
    for idx in token_batches(valid_pairs, 4096, 0, shuffle=False):
        src, tin, tout = (t.to(run.device) for t in collate(valid_pairs, idx))
        logits = model(src, tin)
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                 ignore_index=PAD, reduction="sum").item()
        count += int((tout != PAD).sum())
    n = min(run.a.eval_sentences, len(valid_refs))
    hyps = []
    for start in range(0, n, 64):
        srcs = [valid_pairs[i][0] + [EOS] for i in range(start, min(n, start + 64))]
        hyps += [tgt_tok.decode(o) for o in greedy_batch(model, srcs)]
    bleu, chrf = score(hyps, [[r] for r in valid_refs[:n]])
    model.train()
    return total / max(count, 1), bleu, chrf, hyps[:3]


def check_line(model, checks: list[tuple[str, list[str]]], src_tok, tgt_tok, path: str) -> str:
    """The log's words on a --check list: how many of its sentences the model translates right, greedy."""
    from .decoding import greedy_batch, source_ids
    model.eval()
    with torch.no_grad():
        outputs = [tgt_tok.decode(o) for o in greedy_batch(
            model, [source_ids(src_tok, model.cfg.max_len, s).ids for s, _ in checks])]
    model.train()
    return f"check {count_right(outputs, checks)} of {len(checks)} right ({Path(path).name})"


class Stop:
    """SIGTERM, SIGINT and SIGHUP ask the run to stop after the current step (it saves a checkpoint first)."""
    SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n))

    def __init__(self):
        self.signum = 0
        self.previous = {}

    def __enter__(self):
        for sig in self.SIGNALS:
            try:
                self.previous[sig] = signal.signal(sig, self._handle)
            except ValueError:          # not the main thread (train called from a thread): signals stay as they are
                break
        return self

    def _handle(self, signum, _frame):
        if self.signum:                 # a second signal: stop now (the last checkpoint stays)
            raise KeyboardInterrupt
        self.signum = signum

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


@command
def main(argv=None) -> int:
    a = parse_args(argv)
    with Stop() as stop:            # a signal from now on stops the run after its step, with a checkpoint
        return train(a, stop)


def train(a, stop: Stop) -> int:
    """The run (see main); a run that fails before its first step leaves no folder it made (QA: a broken
    --tokenizers-from left checkpoints/, a copied tokenizer and a 0-byte one)."""
    made = not Path(a.out).exists()
    started = []
    try:
        return _train(a, stop, started)
    except BaseException:
        if made and not started and int(os.environ.get("RANK", "0")) == 0:
            shutil.rmtree(a.out, ignore_errors=True)
        raise


def _train(a, stop: Stop, started: list) -> int:
    random.seed(a.seed)
    torch.manual_seed(a.seed)
    try:
        corpus = read_corpus(a.tsv, a.src, a.tgt, a.strict, a.lowercase)
        valid = None
        if a.valid_tsv or (a.valid_src and a.valid_tgt):
            valid = read_corpus(a.valid_tsv, a.valid_src, a.valid_tgt, a.strict, a.lowercase)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    checks = read_checks(a.check) if a.check else []
    if not len(corpus):
        raise UsageError("the training corpus holds no usable pairs")
    if a.init_from and not Path(a.init_from).is_dir():
        raise UsageError(f"--init-from {a.init_from}: not a model folder")
    start = None
    if a.init_from:              # read whole before --out is written: a damaged one had already replaced the run's
        try:                     # tokenizers with its own, and that run could not --resume again (QA)
            start = load_model(a.init_from)
        except ModelLoadError as e:
            raise UsageError(f"--init-from: {e}") from None
    held = [] if a.resume or int(os.environ.get("RANK", "0")) else run_files(Path(a.out))
    if held:                     # a new run there replaced the finished model and the checkpoints without a word (QA)
        raise UsageError(f"--out {a.out} already holds a training run ({', '.join(held)}): continue it with "
                         "--resume, give another --out, or remove the folder to start again there")
    run = Run(a)
    if a.resume and (reached := newest_step(run.ckpt_dir)) is not None:
        check_steps_left(run, reached)          # before the log says a word of this run
    if run.main and not a.resume:
        kept = keep_earlier_log(run.out)
        if kept:
            run.log(f"an earlier run's train.log was kept as {kept.name}: this log is this run's alone")
    if run.main:
        stale = clean_stale_parts(run)
        if stale:
            run.log(f"removed {len(stale)} unfinished file(s) of an earlier run: {', '.join(p.name for p in stale[:3])}")
    try:
        src_tok, tgt_tok = build_tokenizers(run, corpus)
    except (CorpusError, OSError) as e:
        raise UsageError(str(e)) from None
    pairs, too_long, texts = encode_pairs(corpus, src_tok, tgt_tok, a.max_len)
    dropout = PieceDropout(texts, pairs, src_tok, tgt_tok, a.bpe_dropout, a.max_len) if a.bpe_dropout else None
    if not pairs:
        raise UsageError(f"every training pair is longer than --max-len {a.max_len} tokens")
    n_batches = len(token_batches(pairs, a.max_tokens, 0, shuffle=False))
    if n_batches < run.world:
        raise UsageError(f"the corpus makes {n_batches} batch(es) of --max-tokens {a.max_tokens}, fewer than the "
                         f"{run.world} processes: give a smaller --max-tokens (about "
                         f"{max(1, a.max_tokens * n_batches // run.world)}) or fewer processes")
    if too_long:
        print(f"warning: skipped {too_long} pair(s) longer than --max-len {a.max_len} tokens", file=sys.stderr)
    run.log(f"corpus: {len(corpus) + len(corpus.problems)} lines read, {len(corpus.problems)} malformed skipped, "
            f"{too_long} longer than {a.max_len} tokens skipped, {len(pairs)} used")
    if valid is not None:
        valid_pairs, _, _ = encode_pairs(valid, src_tok, tgt_tok, a.max_len)
        kept = [t for s, t in zip(valid.src, valid.tgt)
                if len(src_tok.encode(s)) + 1 <= a.max_len and len(tgt_tok.encode(t)) + 1 <= a.max_len]
        valid_refs = kept
    try:
        cfg = ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=a.d_model,
                          h=a.heads, d_ff=a.d_ff, N_enc=a.layers, N_dec=a.layers, max_len=a.max_len,
                          dropout=a.dropout, pe=a.pe, tie_output=a.tie_output, share_embeddings=a.share_embeddings)
    except ValueError as e:
        raise UsageError(str(e)) from None
    init_steps = prior_updates = 0
    if start is not None:
        cfg = ModelConfig.from_dict({**start.cfg.__dict__, "dropout": a.dropout})
        schedule, prior_updates = step_counts(a.init_from)
        init_steps = a.init_steps if a.init_steps is not None else schedule
    model = (BaselineTransformer if a.baseline else Transformer)(cfg)
    if a.init_from:
        model.load_state_dict(start.model.state_dict())
        run.log(f"initialised from {a.init_from} ({prior_updates} updates in all; "
                f"the schedule goes on from {init_steps})")
    model.to(run.device)
    run.log(f"processes: {run.world}; model: {'torch.nn.Transformer baseline' if a.baseline else 'Transformer'} "
            f"{model.num_parameters():,} parameters, config {json.dumps(cfg.__dict__)}")
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    step, epoch, batch_pos, elapsed = 0, 0, 0, 0.0
    if a.resume:
        info = load_state(run, model, opt)
        if info is None:
            run.log(f"--resume: no readable checkpoint in {run.ckpt_dir}; starting from step 0")
        else:
            step, epoch, batch_pos, elapsed = info["step"], info["epoch"], info["batch_pos"], info["elapsed"]
            check_steps_left(run, step)
            run.log(f"resumed at step {step} (epoch {epoch}, {elapsed / 60:.1f} min trained)")
    train_model = model
    if run.ddp:
        train_model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[run.device] if run.device.type == "cuda" else None)
    model.train()
    budget_s = a.minutes * 60 if a.minutes else None
    bar = tqdm(total=a.steps or None, initial=step, disable=not run.main, unit="step", dynamic_ncols=True,
               mininterval=2.0)
    last_ckpt = time.monotonic()
    tokens_seen, t_window = 0, time.monotonic()
    smoothed = "smoothed " if a.label_smoothing else ""     # the training loss's, not the validation's (QA)
    done = False
    started.append(True)            # from here on the folder is the run's, whatever happens
    try:
        if stop.signum:             # asked to stop while the run was being set up: nothing new to save
            raise KeyboardInterrupt
        while not done:
            batches = token_batches(pairs, a.max_tokens, a.seed + epoch)
            batches = batches[run.rank::run.world]
            if run.ddp:   # every process takes the same number of steps
                n = torch.tensor(len(batches)); dist.all_reduce(n, op=dist.ReduceOp.MIN); batches = batches[: int(n)]
            if not batches:       # checked before training; never loop without a step
                raise UsageError("no batch for this process: give a smaller --max-tokens or fewer processes")
            while batch_pos < len(batches):
                t0 = time.monotonic()
                idx = batches[batch_pos]
                src, tin, tout = collate(dropout.pairs(idx) if dropout else pairs, idx)
                n_tokens = int((tout != PAD).sum())
                src, tin, tout = src.to(run.device), tin.to(run.device), tout.to(run.device)
                for g in opt.param_groups:
                    g["lr"] = (lr_at(init_steps + step + 1, cfg.d_model, a.warmup, a.lr_scale)
                               * cooldown_factor(step, a.steps, a.cooldown)
                               * time_cooldown_factor(elapsed, budget_s, a.cooldown_minutes * 60))
                loss = training_loss(train_model, src, tin, tout, a.label_smoothing, a.rdrop)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
                opt.step()
                loss_value = loss.item()    # waits for the GPU's queued work: a step's time is its work's, not
                step += 1                   # its launches' (a 7.5-minute --minutes ran 9 and more on an H200)
                batch_pos += 1
                elapsed += time.monotonic() - t0
                tokens_seen += n_tokens * run.world
                now = time.monotonic()
                tok_s = tokens_seen / max(now - t_window, 1e-9)
                if run.main:
                    left = ""
                    if budget_s:
                        left = f"{max(0.0, budget_s - elapsed) / 60:.1f}min"
                    bar.set_postfix_str(f"{smoothed}loss {loss_value:.3f} tok/s {tok_s:,.0f} "
                                        f"lr {opt.param_groups[0]['lr']:.2e}"
                                        + (f" left {left}" if left else ""), refresh=False)
                    bar.update(1)
                if now - t_window > 60:
                    tokens_seen, t_window = 0, now
                    run.log(f"step {step} epoch {epoch} {smoothed}loss {loss_value:.3f} tok/s {tok_s:,.0f} "
                            f"trained {elapsed / 60:.1f} min")
                if run.main and step % a.eval_every == 0:
                    if valid is not None:
                        vloss, bleu, chrf, sample = validate(run, model, valid_pairs, valid_refs, src_tok, tgt_tok)
                        run.log(f"step {step} valid loss {vloss:.3f} BLEU {bleu:.2f} chrF {chrf:.2f} | {sample[0]}")
                    if checks:
                        run.log(f"step {step} {check_line(model, checks, src_tok, tgt_tok, a.check)}")
                out_of_time = bool((a.steps and step >= a.steps) or (budget_s and elapsed >= budget_s))
                stopping = stop.signum
                if run.ddp:   # the processes' clocks differ: rank 0 decides for all
                    flag = torch.tensor([int(out_of_time), stop.signum]); dist.broadcast(flag, 0)
                    out_of_time, stopping = bool(flag[0]), int(flag[1])
                periodic = now - last_ckpt > a.ckpt_minutes * 60
                if run.main and (periodic or out_of_time or stopping):
                    save_state(run, model, opt, step, epoch, batch_pos, elapsed, off_schedule=not periodic)
                    last_ckpt = now
                if stopping:
                    stop.signum = stopping
                    raise KeyboardInterrupt
                if out_of_time:
                    done = True
                    break
            if not done:
                epoch, batch_pos = epoch + 1, 0
    except KeyboardInterrupt:
        # a signal between steps saved its checkpoint above; a second one (or Ctrl+C outside the loop) keeps the
        # last saved checkpoint: a step cut in the middle may have changed only some weights
        name = stop.name if stop.signum else "SIGINT"
        bar.close()
        if run.main:
            last = _checkpoint_candidates(run.ckpt_dir)
            run.log(f"stopped by {name} at step {step}; "
                    + (f"checkpoint {last[0][0].name} saved, continue with --resume" if last else "no checkpoint"))
        print(f"stopped by {name}; continue with --resume", file=sys.stderr)
        return 128 + (stop.signum or signal.SIGINT)
    finally:
        bar.close()
    if run.main:
        n = average_checkpoints(run, model, a.average)
        if 0 < n < a.average:            # (it said "average of 1" and no more: QA)
            run.log(f"notice: {n} checkpoint{'s' if n != 1 else ''} to average of --average {a.average}: the run "
                    "saved no more (--ckpt-minutes sets how often it saves)")
        final = run.out / "model"
        if a.baseline:
            final.mkdir(parents=True, exist_ok=True)
            state = {k: v.cpu().contiguous() for k, v in model.state_dict().items()}
            atomic_write(final / BASELINE_WEIGHTS, lambda tmp: save_file(state, tmp))
            atomic_write(final / CONFIG, lambda tmp: Path(tmp).write_text(cfg.to_json(), encoding="utf-8"))
        else:
            save_model(final, model, src_tok, tgt_tok, half=a.half,
                       metadata={"steps": init_steps + step, "updates": prior_updates + step})
        for name in (SRC_TOK, TGT_TOK):
            shutil.copy(run.out / name, final / name)
        WordCounts.of(corpus.src).save(final)      # the words it read, for the note on rare ones
        if valid is not None:
            vloss, bleu, chrf, _ = validate(run, model, valid_pairs, valid_refs, src_tok, tgt_tok)
            run.log(f"final (average of {n}): valid loss {vloss:.3f} BLEU {bleu:.2f} chrF {chrf:.2f}")
        if checks:
            run.log(f"final (average of {n}): {check_line(model, checks, src_tok, tgt_tok, a.check)}")
        run.log(f"finished: {step} steps, {elapsed / 60:.1f} min of training; model in {final}")
    if run.ddp:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
