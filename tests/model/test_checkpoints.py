"""Model folders: round trip, and one-line errors that name the file for every kind of breakage."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model import ModelLoadError, load, load_model, translate


def broken_copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def expect_error(folder, *words):
    with pytest.raises(ModelLoadError) as err:
        load_model(folder)
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    return msg


def test_round_trip_translates_identically(tiny_model_dir, tiny_lm):
    again = load(tiny_model_dir)
    a, b = translate(tiny_lm, "the cat sat"), translate(again, "the cat sat")
    assert a.out_ids == b.out_ids
    for k in ("logits", "enc.1.self.weights"):
        assert (a.trace[k] == b.trace[k]).all()


def test_missing_file(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    (d / "model.safetensors").unlink()
    expect_error(d, "model.safetensors", "missing")


def test_missing_folder(tmp_path):
    expect_error(tmp_path / "nothing-here", "nothing-here")


def test_wrong_shape(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    state = load_file(str(d / "model.safetensors"))
    state["encoder.0.self_attn.W_Q.weight"] = torch.zeros(3, 3)
    save_file(state, str(d / "model.safetensors"))
    expect_error(d, "model.safetensors", "encoder.0.self_attn.W_Q.weight", "shape")


def test_missing_tensor(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    state = load_file(str(d / "model.safetensors"))
    del state["generator.weight"]
    save_file(state, str(d / "model.safetensors"))
    expect_error(d, "model.safetensors", "missing tensors", "generator.weight")


def test_truncated_weights(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    data = (d / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[: len(data) // 2])
    expect_error(d, "model.safetensors", "not a readable safetensors file")


def test_a_pickle_is_never_unpickled(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    torch.save({"x": Evil()}, d / "model.safetensors")
    expect_error(d, "model.safetensors", "not a readable safetensors file")
    assert not marker.exists()


def test_bad_config(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    (d / "config.json").write_text("{ broken", encoding="utf-8")
    expect_error(d, "config.json")
    cfg = json.loads((tiny_model_dir / "config.json").read_text())
    cfg["d_model"] = 15
    (d / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    expect_error(d, "config.json", "divisible")


def test_bad_tokenizer(tiny_model_dir, tmp_path):
    d = broken_copy(tiny_model_dir, tmp_path / "m")
    (d / "tokenizer_tgt.json").write_text("[]", encoding="utf-8")
    expect_error(d, "tokenizer_tgt.json")


def test_unknown_bundled_name():
    with pytest.raises(ModelLoadError) as err:
        load("klingon")
    assert "klingon" in str(err.value) and "seed-example" in str(err.value)
