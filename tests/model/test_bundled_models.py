"""The translators shipped in assets/models: they load, stay within the size limits, and translate the
classroom sentences into the right language."""
from __future__ import annotations

import pytest

from model import DecodingSettings, bundled_models, load, translate
from model.checkpoint import CARD, MODELS_DIR, WEIGHTS

CLASSROOM = ["The cat sat on the mat.", "The red car is fast.", "I love you.", "Where is the station?"]
# words a sensible translation of the four sentences above contains (at least two of them must appear)
EXPECTED = {"en-fr": {"chat", "voiture", "rouge", "rapide", "aime", "gare", "où"},
            "en-de": {"katze", "auto", "rot", "rote", "rotes", "schnell", "liebe", "bahnhof", "wo"}}


def test_both_translators_are_bundled():
    assert {"en-fr", "en-de"} <= set(bundled_models())


@pytest.mark.parametrize("name", ["en-fr", "en-de"])
def test_bundled_model_is_small_readable_and_documented(name):
    folder = MODELS_DIR / name
    lm = load(name)
    assert (folder / WEIGHTS).stat().st_size <= 25 * 1024 * 1024
    assert lm.cfg.N_enc <= 4 and lm.cfg.N_dec <= 4 and lm.cfg.h <= 8
    card = (folder / CARD).read_text(encoding="utf-8")
    assert "BLEU" in card and "chrF" in card
    credit = "www.manythings.org/anki and tatoeba.org" if name == "en-fr" else "Multi30K"
    assert credit in card


@pytest.mark.parametrize("name", ["en-fr", "en-de"])
def test_bundled_model_translates_classroom_sentences(name):
    lm = load(name)
    outputs = [translate(lm, s, DecodingSettings(method="beam", beam=4)).text for s in CLASSROOM]
    assert all(o.strip() for o in outputs), outputs
    words = {w.strip(".,?!").lower() for o in outputs for w in o.split()}
    assert len(words & EXPECTED[name]) >= 2, outputs
