"""`--device`: training may run on a GPU (issue 17: a GPU when one is lent); what cannot work is refused in one line."""
from __future__ import annotations

import torch
from test_train_stops import train
from test_train_pipeline import synthetic_tsv


def test_an_unknown_device_is_a_usage_error(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    code, err = train(capsys, "--tsv", tsv, "--out", tmp_path / "run", "--steps", "2", "--device", "tpu")
    assert code == 2 and "--device tpu: give cpu or cuda" in err.splitlines()[-1]
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_cuda_without_a_gpu_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    code, err = train(capsys, "--tsv", tsv, "--out", tmp_path / "run", "--steps", "2", "--device", "cuda:0")
    assert code == 2 and "--device cuda: torch sees no CUDA GPU on this machine" in err.splitlines()[-1]
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_evaluate_translates_on_a_chosen_device_and_batch_size_the_same(tiny_model_dir, tmp_path, capsys,
                                                                        monkeypatch):
    """`evaluate --device` (a teacher's translations of a whole corpus on a lent GPU): the CPU with any batch size
    writes the default's translations; cuda without a GPU, cuda with a beam, another kind and a batch of 0 are
    refused in one line before any work."""
    from model.evaluate import main as evaluate_main
    tsv = synthetic_tsv(tmp_path / "test.tsv", n=12, seed=3)
    common = ["--model", str(tiny_model_dir), "--tsv", str(tsv)]     # untrained: most rows run to their limit
    assert evaluate_main([*common, "--hyps", str(tmp_path / "a.txt")]) == 0
    assert evaluate_main([*common, "--hyps", str(tmp_path / "b.txt"), "--device", "cpu", "--batch-size", "5"]) == 0
    a = (tmp_path / "a.txt").read_text(encoding="utf-8")
    assert a == (tmp_path / "b.txt").read_text(encoding="utf-8") and len(a.splitlines()) == 12
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    capsys.readouterr()
    for extra, words in ((["--device", "cuda"], "--device cuda: torch sees no CUDA GPU on this machine"),
                         (["--device", "tpu"], "--device tpu: give cpu or cuda"),
                         (["--batch-size", "0"], "--batch-size 0: give 1 or more")):
        assert evaluate_main([*common, *extra, "--hyps", str(tmp_path / "c.txt")]) == 2
        assert words in capsys.readouterr().err.splitlines()[-1]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert evaluate_main([*common, "--device", "cuda", "--beam", "3"]) == 2
    assert "--device cuda decodes greedily" in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "c.txt").exists()
