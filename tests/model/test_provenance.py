"""run.json's model details (model/provenance.py): each weights file's size and SHA-256, which change with the
weights whatever the path; the model type and the library versions of a Hugging Face model; the seed example's
weights built in code."""
from __future__ import annotations

import hashlib
import shutil
from importlib import metadata

import pytest

from model import load
from model.provenance import model_provenance, weights_files


def test_the_weights_are_named_by_their_bytes_and_change_with_them(tiny_model_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    weights = folder / "model.safetensors"
    first = weights_files(folder)
    assert first == [{"file": "model.safetensors", "bytes": weights.stat().st_size,
                      "sha256": hashlib.sha256(weights.read_bytes()).hexdigest()}]
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1                                  # the same path and size, other weights
    weights.write_bytes(bytes(data))
    second = weights_files(folder)
    assert second[0]["bytes"] == first[0]["bytes"] and second[0]["sha256"] != first[0]["sha256"]
    assert weights_files(tmp_path / "nowhere") == []


def test_a_bundled_and_a_built_in_model(tiny_lm):
    record = model_provenance(tiny_lm)
    assert record["family"] == "seed" and "model_type" not in record
    assert record["versions"] == {"torch": metadata.version("torch")}
    assert model_provenance(load("seed-example"))["weights"].startswith("built in code")


def test_a_hugging_face_model_gives_its_type_and_transformers_version(tmp_path):
    pytest.importorskip("transformers")
    import hf_tiny
    lm = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    record = model_provenance(lm)
    assert record["family"] == "GPT-2" and record["model_type"] == "gpt2"
    assert record["versions"]["transformers"] == metadata.version("transformers")
    assert [w["file"] for w in record["weights"]] == ["model.safetensors"]
