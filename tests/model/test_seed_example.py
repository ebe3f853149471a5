"""The built-in seed example reproduces the note's worked example (and its slip), and the docs match the code."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from model import load, translate
from model.seed_example import NOTE_SAT

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trace():
    return translate(load("seed-example"), "The cat sat on the mat").trace


def test_the_model_is_the_notes_setting():
    cfg = load("seed-example").cfg
    assert (cfg.d_model, cfg.h, cfg.N_enc, cfg.N_dec) == (2, 1, 1, 1)
    assert not cfg.scale_scores and not cfg.scale_embedding


def test_q_k_v_of_cat_and_sat(trace):
    assert trace.src_tokens[:6] == ["The", "cat", "sat", "on", "the", "mat"]
    q, k, v = (trace.get("enc", 0, "self", n, 0) for n in ("q", "k", "v"))
    np.testing.assert_allclose(q[1], [0.6, 0.8], atol=1e-6)
    np.testing.assert_allclose(k[1], [1.4, 1.6], atol=1e-6)
    np.testing.assert_allclose(v[1], [2.2, 2.4], atol=1e-6)
    np.testing.assert_allclose(k[2], [1.7, 2.0], atol=1e-6)
    np.testing.assert_allclose(v[2], [2.9, 3.2], atol=1e-6)


def test_scores_are_unscaled_and_correct_and_the_notes_slip_differs(trace):
    scores = trace.get("enc", 0, "self", "scores", 0)
    assert scores[1, 1] == pytest.approx(2.12, abs=1e-5)
    assert scores[1, 2] == pytest.approx(2.62, abs=1e-5)
    q_cat = trace.get("enc", 0, "self", "q", 0)[1]
    assert float(q_cat @ np.array(NOTE_SAT["K"])) == pytest.approx(NOTE_SAT["score_cat_sat"], abs=1e-5)  # 3.92
    assert abs(scores[1, 2] - NOTE_SAT["score_cat_sat"]) > 1
    assert not np.allclose(trace.get("enc", 0, "self", "k", 0)[2], NOTE_SAT["K"])
    assert not np.allclose(trace.get("enc", 0, "self", "v", 0)[2], NOTE_SAT["V"])


def test_weights_are_the_softmax_of_the_unscaled_scores(trace):
    s = trace.get("enc", 0, "self", "scores", 0)[1]
    z = np.exp(s - s.max())
    np.testing.assert_allclose(trace.attention("enc_self", 0, 0)[1], z / z.sum(), atol=1e-6)


def test_every_table_line_of_the_docs_is_what_the_code_prints():
    spec = importlib.util.spec_from_file_location("seed_example_tables", ROOT / "docs" / "seed_example_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = (ROOT / "docs" / "seed-example.md").read_text(encoding="utf-8").splitlines()
    lines = [line for line in module.tables() if line.strip()]
    assert len(lines) > 20
    missing = [line for line in lines if line not in doc]
    assert missing == [], "docs/seed-example.md is out of date; rerun docs/seed_example_tables.py"
