"""Issue 19's training examples: a run survives stops (signals save a checkpoint, stale .part files, a damaged last
checkpoint), and what cannot work is refused at the door in one line (another shape on --resume, a corpus too
small for torchrun's processes)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from command_checks import check_command_output, kept, snapshot
from test_train_pipeline import TINY, synthetic_tsv

from model.train import main as train_main

ROOT = Path(__file__).resolve().parents[2]


def train(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = train_main([*TINY, *map(str, argv)])
    err = capsys.readouterr().err
    check_command_output(code, err)
    return code, err


def test_resume_with_another_d_model_is_one_line_and_keeps_the_checkpoints(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "3")[0] == 0
    before = snapshot(out / "checkpoints")
    code, err = train(capsys, "--tsv", tsv, "--out", out, "--steps", "6", "--resume", "--d-model", "48")
    assert code == 2
    assert err.splitlines()[-1] == (f"error: --resume: the run in {out} was trained with d_model 32 (now 48); "
                                    "give the same model options or another --out")
    assert snapshot(out / "checkpoints") == before


def test_a_new_run_into_a_folder_that_holds_one_is_refused_and_the_run_kept(tmp_path, capsys):
    """A second train without --resume into the same --out replaced the finished model and the checkpoints without a
    word (QA). It is refused, naming what is there; --resume goes on."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "2")[0] == 0
    # (one checkpoint of the five --average asks by default: said, where it had said "average of 1" alone, QA)
    assert "notice: 1 checkpoint to average of --average 5: the run saved no more" in \
        (out / "train.log").read_text(encoding="utf-8")
    before = snapshot(out)
    code, err = train(capsys, "--tsv", tsv, "--out", out, "--steps", "2", "--d-model", "48")
    assert code == 2 and err.splitlines()[-1] == (
        f"error: --out {out} already holds a training run (tokenizer_src.json, tokenizer_tgt.json, checkpoints/, "
        "model/model.safetensors): continue it with --resume, give another --out, or remove the folder to start "
        "again there")
    assert snapshot(out) == before
    # a --resume to a step the run has passed changes nothing (it trained one step more: QA)
    code, err = train(capsys, "--tsv", tsv, "--out", out, "--steps", "1", "--resume")
    assert code == 2 and err.splitlines()[-1] == (f"error: --resume: the run in {out} is at step 2 already; give "
                                                  "--steps above it to train on")
    assert snapshot(out) == before                        # its log too (QA: it had added the corpus lines)
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "3", "--resume")[0] == 0


def test_a_damaged_init_from_is_refused_before_the_run_folder_is_touched(tmp_path, capsys, tiny_model_dir):
    """A train --init-from a damaged model folder into a stopped run's folder copied that folder's tokenizers over
    the run's before failing: the run could not --resume any more (QA)."""
    import shutil
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "2")[0] == 0
    (out / "model" / "model.safetensors").unlink()          # as a stopped run: checkpoints, no final model
    broken = Path(shutil.copytree(tiny_model_dir, tmp_path / "broken"))
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    before = snapshot(out)
    code, err = train(capsys, "--tsv", tsv, "--out", out, "--steps", "2", "--init-from", broken)
    assert code == 2 and "--init-from: " in err and "not a readable safetensors file" in err
    assert snapshot(out) == before
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "3", "--resume")[0] == 0


def test_stale_part_files_are_removed_at_start(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    stale = [out / "checkpoints" / "step0000004.safetensors.abc.part", out / "checkpoints" / "last.json.x.part"]
    for p in stale:
        p.write_bytes(b"half a file")
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "2")[0] == 0
    assert not any(p.exists() for p in stale) and not list(out.rglob("*.part"))
    assert "removed 2 unfinished file(s) of an earlier run" in (out / "train.log").read_text(encoding="utf-8")


def test_a_damaged_last_checkpoint_falls_back_to_the_previous_good_one(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "3")[0] == 0
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "6", "--resume")[0] == 0
    last = out / "checkpoints" / "step0000006.safetensors"
    data = last.read_bytes()
    last.write_bytes(data[: len(data) // 3])                # a disk that filled up, a copy cut short
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "8", "--resume")[0] == 0
    log = (out / "train.log").read_text(encoding="utf-8")
    assert "notice: checkpoint step0000006.safetensors cannot be read" in log
    assert "notice: resuming from the previous good checkpoint step0000003.safetensors" in log
    assert "resumed at step 3" in log and "finished: 8 steps" in log


def test_a_corpus_with_no_pair_short_enough_is_refused(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    code, err = train(capsys, "--tsv", tsv, "--out", tmp_path / "run", "--steps", "2", "--max-len", "2")
    assert code == 2 and err.splitlines()[-1] == "error: every training pair is longer than --max-len 2 tokens"


def test_bad_model_options_are_usage_errors(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    code, err = train(capsys, "--tsv", tsv, "--out", tmp_path / "run", "--steps", "2", "--heads", "3")
    assert code == 2 and "d_model (32) must be divisible by h (3)" in err.splitlines()[-1]
    assert not (tmp_path / "run").exists()          # a run that fails before its first step leaves no folder (QA)


@pytest.mark.parametrize("broken", ["empty", "hugging face"])
def test_broken_tokenizers_to_start_from_are_named_and_leave_no_run_folder(tmp_path, capsys, broken):
    """A 0-byte tokenizer read "unexpected Exception: EOF while parsing a value" and left checkpoints/, one copied
    tokenizer and an empty one; a Hugging Face folder "[Errno 2] No such file…" (QA)."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    source = tmp_path / "from"
    source.mkdir()
    if broken == "empty":
        for name in ("tokenizer_src.json", "tokenizer_tgt.json"):
            (source / name).write_text("")
    else:
        (source / "tokenizer.json").write_text("{}")
    code, err = train(capsys, "--tsv", tsv, "--out", tmp_path / "run", "--steps", "1", "--tokenizers-from", source)
    last = err.splitlines()[-1]
    assert code == 2 and last.startswith(f"error: --tokenizers-from {source}: ")
    assert ("not a valid tokenizer file" if broken == "empty" else "no tokenizer_src.json") in last
    assert not (tmp_path / "run").exists()
    (tmp_path / "kept").mkdir()                          # a folder that was there before stays, whatever happens
    train(capsys, "--tsv", tsv, "--out", tmp_path / "kept", "--steps", "1", "--tokenizers-from", source)
    assert (tmp_path / "kept").is_dir()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_saves_a_checkpoint_and_the_run_resumes(tmp_path, sig):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    args = [sys.executable, "-m", "model.train", *TINY, "--tsv", str(tsv), "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([*args, "--steps", "1000000"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env, text=True)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120

    def steps_shown() -> int:        # the progress bar on stderr: "| 12/1000000 ["
        found = re.findall(r"\| *(\d+)/1000000", "".join(err))
        return int(found[-1]) if found else 0
    while steps_shown() == 0:        # stop it in the middle of training, not while it starts
        assert proc.poll() is None and time.monotonic() < deadline, "".join(err)[-2000:]
        time.sleep(0.2)
    shown = steps_shown()
    proc.send_signal(sig)
    proc.wait(timeout=120)
    reader.join(timeout=10)
    err = "".join(err)
    log = out / "train.log"
    assert proc.returncode == 128 + sig
    assert err.strip().splitlines()[-1] == f"stopped by {sig.name}; continue with --resume" and "Traceback" not in err
    info = json.loads((out / "checkpoints" / "last.json").read_text(encoding="utf-8"))
    assert info["step"] >= shown > 0 and (out / "checkpoints" / info["file"]).is_file()
    assert f"stopped by {sig.name} at step {info['step']}; checkpoint {info['file']} saved" in log.read_text("utf-8")
    done = subprocess.run([*args, "--steps", str(info["step"] + 2), "--resume"], capture_output=True, text=True,
                          env=env, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"resumed at step {info['step']}" in log.read_text(encoding="utf-8")
    # the stop's checkpoint, a step or two past the periodic one before it in a longer run, is resumed from and
    # then left out of the average (it weighted that moment twice); its file stays while it is one of the newest two
    left = sorted(p.name for p in (out / "checkpoints").glob("step*.safetensors"))
    assert left == [info["file"], f"step{info['step'] + 2:07d}.safetensors"]
    assert last_average_notice(out) == "1 checkpoint to average of --average 5"


def test_torchrun_on_a_corpus_too_small_for_its_processes_stops_at_once(tmp_path):
    """150 short pairs make one batch of the default --max-tokens: one of two processes would get none and the
    run used to loop forever without a step."""
    tsv = synthetic_tsv(tmp_path / "train.tsv", n=150)
    before = snapshot(tmp_path)
    with tempfile.TemporaryDirectory() as scratch:          # torchrun's torchelastic_* folder, removed after
        proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                               "-m", "model.train", "--tsv", str(tsv), "--out", str(tmp_path / "run"), "--steps", "5",
                               "--vocab-size", "60", "--d-model", "32", "--heads", "2", "--d-ff", "64", "--layers",
                               "1", "--threads", "1"],
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=scratch))
    assert proc.returncode != 0
    assert ("error: the corpus makes 1 batch(es) of --max-tokens 4096, fewer than the 2 processes: give a smaller "
            "--max-tokens (about 2048) or fewer processes") in proc.stderr
    assert kept(before, snapshot(tmp_path)) and not (tmp_path / "run" / "model").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where no folder can be made")
def test_an_out_folder_that_cannot_be_made_is_a_usage_error(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "c.tsv", 20)
    assert train_main(["--tsv", str(tsv), "--out", "/proc/av-run", "--steps", "1", *TINY]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --out /proc/av-run: /proc is not writable"           # tried: os.access says yes to root


def test_a_new_run_beside_an_earlier_runs_log_alone_keeps_it_apart(tmp_path, capsys):
    """A folder holding only an earlier run's train.log took a new run, which appended to it, and the model card
    then read both runs' validation lines as one curve. The earlier log is kept as train.log.1, untouched."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    out = tmp_path / "run"
    out.mkdir()
    earlier = "step 1000 valid loss 2.000 BLEU 30.00 chrF 50.00 | an earlier run\n"
    (out / "train.log").write_text(earlier, encoding="utf-8")
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "2")[0] == 0
    assert (out / "train.log.1").read_text(encoding="utf-8") == earlier
    log = (out / "train.log").read_text(encoding="utf-8")
    assert "| an earlier run" not in log and "kept as train.log.1" in log and "finished: 2 steps" in log
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "3", "--resume")[0] == 0     # a resume appends
    assert "finished: 2 steps" in (out / "train.log").read_text(encoding="utf-8")
    assert not (out / "train.log.2").exists()


def checkpoint_steps(out: Path) -> list[int]:
    return sorted(int(p.stem.removeprefix("step")) for p in (out / "checkpoints").glob("step*.safetensors"))


def last_average_notice(out: Path) -> str:
    """The last run's word on how many checkpoints it averaged (train.log holds every run's)."""
    log = (out / "train.log").read_text(encoding="utf-8")
    return re.findall(r"notice: (\d+ checkpoints? to average of --average \d+)", log)[-1]


def test_a_runs_end_between_periodic_saves_is_left_out_once_resumed_from(tmp_path, capsys):
    """--steps ends a run between two periodic saves, as a stop does: resumed, its checkpoint leaves the average."""
    tsv, out = synthetic_tsv(tmp_path / "train.tsv"), tmp_path / "run"
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "3", "--ckpt-minutes", "1000")[0] == 0
    assert checkpoint_steps(out) == [3]                     # the run's end saved it, off the periodic schedule
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "5", "--ckpt-minutes", "1000", "--resume")[0] == 0
    assert checkpoint_steps(out) == [3, 5]                  # kept to resume from if step 5's is damaged
    assert last_average_notice(out) == "1 checkpoint to average of --average 5"


def test_a_stop_on_the_step_of_a_periodic_save_keeps_that_save(tmp_path, capsys, monkeypatch):
    """A signal on a step whose periodic save is due: that checkpoint is on the schedule and stays averaged."""
    import model.train as train_module
    tsv, out = synthetic_tsv(tmp_path / "train.tsv"), tmp_path / "run"
    calls = []

    def loss_then_stop(*args):                  # SIGTERM arrives during step 2
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return real_loss(*args)
    real_loss = train_module.training_loss
    monkeypatch.setattr(train_module, "training_loss", loss_then_stop)
    code = train_main([*TINY, "--tsv", str(tsv), "--out", str(out), "--steps", "100", "--ckpt-minutes", "0"])
    assert code == 128 + signal.SIGTERM and checkpoint_steps(out) == [1, 2]
    monkeypatch.setattr(train_module, "training_loss", real_loss)
    assert train(capsys, "--tsv", tsv, "--out", out, "--steps", "4", "--ckpt-minutes", "0", "--resume")[0] == 0
    assert checkpoint_steps(out) == [1, 2, 3, 4]            # every one a periodic save: all averaged
    assert last_average_notice(out) == "4 checkpoints to average of --average 5"
