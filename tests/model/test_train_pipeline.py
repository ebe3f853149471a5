"""The training pipeline end to end on a tiny synthetic corpus: train, save, load, translate, evaluate, resume."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from model import load
from model.decoding import translate
from model.evaluate import main as evaluate_main
from model.checkpoint import step_counts
from model.train import cooldown_factor, time_cooldown_factor
from model.training_words import read_word_counts
from model.train import main as train_main

WORDS_EN = "red blue green big small cat dog car house tree bird fish".split()
WORDS_FR = "rouge bleu vert grand petit chat chien voiture maison arbre oiseau poisson".split()


def synthetic_tsv(path: Path, n: int = 300, seed: int = 0) -> Path:
    """Word-by-word 'translations' with a fixed dictionary: a tiny task a model can fit in seconds."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        idx = [rng.randrange(len(WORDS_EN)) for _ in range(rng.randint(2, 5))]
        lines.append(" ".join(WORDS_EN[i] for i in idx) + "\t" + " ".join(WORDS_FR[i] for i in idx))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


TINY = ["--vocab-size", "60", "--d-model", "32", "--heads", "2", "--d-ff", "64", "--layers", "1",
        "--max-tokens", "256", "--warmup", "20", "--dropout", "0", "--threads", "1", "--eval-every", "1000"]


def test_train_save_load_translate_evaluate(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    test = synthetic_tsv(tmp_path / "test.tsv", n=30, seed=1)
    assert train_main(["--tsv", str(tsv), "--valid-tsv", str(test), "--out", str(tmp_path / "run"),
                       "--steps", "40", "--average", "2", *TINY]) == 0
    folder = tmp_path / "run" / "model"
    lm = load(folder)
    assert lm.cfg.d_model == 32 and lm.cfg.N_enc == 1
    out = translate(lm, "red cat")
    assert out.trace.src_tokens[-1] == "</s>" and out.trace.out_tokens
    capsys.readouterr()
    assert evaluate_main(["--model", str(folder), "--tsv", str(test)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    parts = last.split()
    assert parts[0] == "BLEU" and parts[2] == "chrF" and len(parts) == 4
    assert 0.0 <= float(parts[1]) <= 100.0 and 0.0 <= float(parts[3]) <= 100.0
    log = (tmp_path / "run" / "train.log").read_text()
    assert "finished: 40 steps" in log
    counts = read_word_counts(folder)                      # the words it read, for the note on rare ones
    english = list(dict.fromkeys(line.split("\t")[0] for line in tsv.read_text(encoding="utf-8").splitlines()))
    assert counts.sentences == len(english)
    assert counts.counts == {w: sum(w in s.split() for s in english) for w in WORDS_EN if any(w in s.split() for s in english)}
    assert translate(lm, "red zebra").trace.meta["rare_words"] == [["zebra", 0]]


def test_resume_continues_with_the_same_step_count_and_weights(tmp_path):
    """Stopping after 6 steps and resuming to 12 gives the weights of an uninterrupted 12-step run."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    common = ["--tsv", str(tsv), "--average", "1", "--ckpt-minutes", "0", *TINY]
    assert train_main([*common, "--out", str(tmp_path / "a"), "--steps", "12"]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--steps", "6"]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--steps", "12", "--resume"]) == 0
    log = (tmp_path / "b" / "train.log").read_text()
    assert "resumed at step 6" in log and "finished: 12 steps" in log
    wa = load_file(str(tmp_path / "a" / "model" / "model.safetensors"))
    wb = load_file(str(tmp_path / "b" / "model" / "model.safetensors"))
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=0, atol=1e-6)


def test_malformed_lines_are_named_and_counted(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("red cat\trouge chat\nno tab here\nblue dog\tbleu chien\n\t\n" * 20, encoding="utf-8")
    assert train_main(["--tsv", str(bad), "--out", str(tmp_path / "r"), "--steps", "2", *TINY]) == 0
    err = capsys.readouterr().err
    assert f"{bad}:2: no TAB between source and target" in err
    assert f"{bad}:4: empty source or target" in err
    assert "skipped 40 malformed line(s)" in err
    # read − skipped = used (QA: "823 pairs read, 4 malformed skipped, 1 longer … skipped, 822 used" did not add up)
    assert "corpus: 80 lines read, 40 malformed skipped, 0 longer than 128 tokens skipped, 40 used" in \
        (tmp_path / "r" / "train.log").read_text()
    assert train_main(["--tsv", str(bad), "--out", str(tmp_path / "s"), "--steps", "2", "--strict", *TINY]) == 2
    assert f"{bad}:2: no TAB" in capsys.readouterr().err


def test_blank_lines_and_comments_are_not_malformed(tmp_path):
    from model.data import read_tsv
    listing = tmp_path / "list.tsv"
    listing.write_text("# a check list\n\nred cat\trouge chat\n   \n#hashtag\tmot-dièse\n", encoding="utf-8")
    corpus = read_tsv(listing, strict=True)
    assert corpus.src == ["red cat", "#hashtag"] and corpus.tgt == ["rouge chat", "mot-dièse"] and not corpus.problems


def test_aligned_files_with_unequal_length_are_refused(tmp_path, capsys):
    (tmp_path / "a.en").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "a.fr").write_text("un\n", encoding="utf-8")
    assert train_main(["--src", str(tmp_path / "a.en"), "--tgt", str(tmp_path / "a.fr"),
                       "--out", str(tmp_path / "r"), "--steps", "1", *TINY]) == 2
    assert "has 1 lines but" in capsys.readouterr().err


@pytest.mark.slow
def test_two_process_ddp_run(tmp_path):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    torchrun = Path(sys.executable).with_name("torchrun")
    cmd = [str(torchrun) if torchrun.exists() else sys.executable, *([] if torchrun.exists() else ["-m", "torch.distributed.run"]),
           "--standalone", "--nproc_per_node=2", "-m", "model.train", "--tsv", str(tsv),
           "--out", str(tmp_path / "ddp"), "--steps", "8", "--average", "1", *TINY]
    env = dict(os.environ, OMP_NUM_THREADS="1", TMPDIR=str(tmp_path))   # torchrun's torchelastic_* folder too
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = (tmp_path / "ddp" / "train.log").read_text()
    assert "processes: 2" in log and "finished: 8 steps" in log
    lm = load(tmp_path / "ddp" / "model")
    assert translate(lm, "red cat").trace.n_steps >= 1


def test_lowercase_run_gives_tokenizers_that_lowercase_user_input(tmp_path):
    """A model trained with --lowercase must see 'The Red Cat' exactly as the 'the red cat' it was trained on."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "r"), "--steps", "2", "--lowercase", *TINY]) == 0
    lm = load(tmp_path / "r" / "model")
    assert lm.src_tok.encode("RED Cat") == lm.src_tok.encode("red cat")
    assert lm.tgt_tok.encode("Rouge CHAT") == lm.tgt_tok.encode("rouge chat")
    assert lm.src_tok.tok.token_to_id("▁red") in lm.src_tok.encode("Red")


def test_baseline_run_is_evaluated_with_the_same_command(tmp_path, capsys):
    """--baseline trains torch.nn.Transformer on the same tokenizers; `evaluate` scores its folder (greedy and beam)."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    test = synthetic_tsv(tmp_path / "test.tsv", n=20, seed=1)
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "ours"), "--steps", "2", *TINY]) == 0
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "base"), "--steps", "30", "--baseline",
                       "--tokenizers-from", str(tmp_path / "ours"), *TINY]) == 0
    folder = tmp_path / "base" / "model"
    assert (folder / "tokenizer_src.json").read_bytes() == (tmp_path / "ours" / "tokenizer_src.json").read_bytes()
    for beam in ("1", "3"):
        capsys.readouterr()
        assert evaluate_main(["--model", str(folder), "--tsv", str(test), "--beam", beam]) == 0
        name, bleu, name2, chrf = capsys.readouterr().out.strip().splitlines()[-1].split()
        assert (name, name2) == ("BLEU", "chrF") and 0.0 <= float(bleu) <= 100.0 and float(chrf) > 0.0


def test_shared_embeddings_run_has_one_vocabulary_and_one_table(tmp_path):
    """--share-embeddings: one joint vocabulary; source, target and output use one matrix, stored once; resumable."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    common = ["--tsv", str(tsv), "--share-embeddings", "--average", "1", "--ckpt-minutes", "0", *TINY]
    assert train_main([*common, "--out", str(tmp_path / "a"), "--steps", "8"]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--steps", "4"]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--steps", "8", "--resume"]) == 0
    lm = load(tmp_path / "a" / "model")
    m = lm.model
    assert lm.cfg.share_embeddings and lm.cfg.tie_output
    assert m.src_embed.weight is m.tgt_embed.weight is m.generator.weight
    assert lm.src_tok.to_str() == lm.tgt_tok.to_str()
    # both languages' words are in the one vocabulary
    assert lm.src_tok.tok.token_to_id("▁red") is not None and lm.src_tok.tok.token_to_id("▁rouge") is not None
    saved = load_file(str(tmp_path / "a" / "model" / "model.safetensors"))
    assert "src_embed.weight" in saved and "tgt_embed.weight" not in saved and "generator.weight" not in saved
    torch.testing.assert_close(saved["src_embed.weight"], m.src_embed.weight.detach())
    resumed = load_file(str(tmp_path / "b" / "model" / "model.safetensors"))
    assert resumed.keys() == saved.keys()
    for k in saved:
        torch.testing.assert_close(saved[k], resumed[k], rtol=0, atol=1e-6)
    assert translate(lm, "red cat").out_ids == translate(load(tmp_path / "a" / "model"), "red cat").out_ids


def test_shared_embeddings_refuse_two_vocabularies(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "two"), "--steps", "1", *TINY]) == 0
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "r"), "--steps", "1", "--share-embeddings",
                       "--tokenizers-from", str(tmp_path / "two"), *TINY]) == 2
    assert "needs one vocabulary for both sides" in capsys.readouterr().err


def test_init_from_continues_a_model_folder(tmp_path):
    """--init-from starts from a folder's weights: with a learning rate of 0 the result is those weights exactly,
    and the schedule goes on from --init-steps."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "a"), "--steps", "6", *TINY]) == 0
    start = tmp_path / "a" / "model"
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "b"), "--steps", "2", "--average", "1",
                       "--init-from", str(start), "--init-steps", "6", "--lr-scale", "0", *TINY]) == 0
    assert "initialised from" in (tmp_path / "b" / "train.log").read_text()
    wa = load_file(str(start / "model.safetensors"))
    wb = load_file(str(tmp_path / "b" / "model" / "model.safetensors"))
    assert wa.keys() == wb.keys()
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=0, atol=0)
    assert (tmp_path / "b" / "model" / "tokenizer_src.json").read_bytes() == (start / "tokenizer_src.json").read_bytes()
    # the folder records where the schedule stands, so a third run's goes on from 8, not 2
    assert step_counts(start) == (6, 6) and step_counts(tmp_path / "b" / "model") == (8, 8)
    # a warm restart (--init-steps 0) starts the schedule again but keeps counting the updates the weights had
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "c"), "--steps", "3", "--average", "1",
                       "--init-from", str(tmp_path / "b" / "model"), "--init-steps", "0", *TINY]) == 0
    assert step_counts(tmp_path / "c" / "model") == (3, 11)
    assert "(8 updates in all; the schedule goes on from 0)" in (tmp_path / "c" / "train.log").read_text()
    # a third run with no --init-steps goes on from the schedule's position, not from the count
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "d"), "--steps", "1", "--average", "1",
                       "--init-from", str(tmp_path / "c" / "model"), *TINY]) == 0
    assert step_counts(tmp_path / "d" / "model") == (4, 12)


def test_step_counts_of_folders_without_or_with_broken_metadata(tmp_path):
    """A folder saved before the update count was kept reads its schedule position for both; a missing or broken
    weights file, or a non-number, reads (0, 0)."""
    from safetensors.torch import save_file
    folder = tmp_path / "m"
    folder.mkdir()
    for meta, want in (({"steps": "9577"}, (9577, 9577)), ({"steps": "3000", "updates": "6900"}, (3000, 6900)),
                       ({}, (0, 0)), ({"steps": "many"}, (0, 0))):
        save_file({"w": torch.zeros(1)}, str(folder / "model.safetensors"), metadata=meta or None)
        assert step_counts(folder) == want, meta
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    assert step_counts(folder) == (0, 0)
    assert step_counts(tmp_path / "absent") == (0, 0)


def test_cooldown_takes_the_learning_rate_linearly_to_zero():
    assert [cooldown_factor(d, 8, 4) for d in range(8)] == [1, 1, 1, 1, 1, 0.75, 0.5, 0.25]
    assert [cooldown_factor(d, 3, 0) for d in range(3)] == [1, 1, 1]
    assert cooldown_factor(9, 8, 4) == 0


def test_a_cooldown_run_resumed_in_its_cooldown_equals_an_uninterrupted_one(tmp_path):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    common = ["--tsv", str(tsv), "--average", "1", "--ckpt-minutes", "0", "--cooldown", "6", *TINY]
    assert train_main([*common, "--out", str(tmp_path / "a"), "--steps", "10"]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--steps", "10", "--minutes", "1e-9"]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--steps", "10", "--resume"]) == 0
    assert "resumed at step 1 " in (tmp_path / "b" / "train.log").read_text()
    plain = ["--tsv", str(tsv), "--average", "1", "--ckpt-minutes", "0", *TINY]
    assert train_main([*plain, "--out", str(tmp_path / "c"), "--steps", "10"]) == 0
    wa, wb, wc = (load_file(str(tmp_path / r / "model" / "model.safetensors")) for r in "abc")
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=0, atol=1e-6)
    # and the cooldown changed the training: the same run without it ends elsewhere
    assert any(not torch.allclose(wa[k], wc[k], atol=1e-5) for k in wa)


def test_a_cooldown_in_minutes_falls_with_the_training_time_left():
    # a 10-minute run whose last 4 minutes cool down: full rate until minute 6, then linear to zero at minute 10
    assert [time_cooldown_factor(m * 60, 600, 240) for m in (0, 5, 6, 7, 8, 9, 10, 11)] == [
        1, 1, 1, 0.75, 0.5, 0.25, 0, 0]
    assert time_cooldown_factor(590, 600, 0) == 1 and time_cooldown_factor(590, None, 240) == 1


@pytest.mark.parametrize("extra, message", [
    (["--steps", "10", "--cooldown-minutes", "1"], "--cooldown-minutes needs --minutes"),
    (["--steps", "10", "--minutes", "2", "--cooldown-minutes", "1"], "--cooldown-minutes needs --minutes"),
    (["--minutes", "2", "--cooldown-minutes", "-1"], "--cooldown-minutes must not be negative"),
])
def test_a_cooldown_in_minutes_needs_a_time_budget(tmp_path, capsys, extra, message):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "r"), *extra, *TINY]) == 2
    assert message in capsys.readouterr().err


def test_cooldown_without_steps_is_refused(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    code = train_main(["--tsv", str(tsv), "--out", str(tmp_path / "r"), "--minutes", "1", "--cooldown", "5", *TINY])
    assert code == 2 and "--cooldown needs --steps" in capsys.readouterr().err
