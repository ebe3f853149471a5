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
