"""An encoder-only model (BERT) writes no text: the commands that translate or score translations say so in one
line instead of echoing the input as its "translation"."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import hf_tiny  # noqa: E402


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    return hf_tiny.build("bert", tmp_path_factory.mktemp("bert") / "model")


def test_translate_evaluate_and_check_say_an_encoder_only_model_writes_no_text(bert_folder, tmp_path, run_command):
    listing = tmp_path / "list.tsv"
    listing.write_text("the cat sat\tle chat\n", encoding="utf-8")
    for argv in (["translate", "the cat sat", "--model", str(bert_folder)],
                 ["evaluate", "--model", str(bert_folder), "--tsv", str(listing)],
                 ["check-translations", str(listing), "--model", str(bert_folder)]):
        code, out, err = run_command(argv)
        assert code == 2 and out == "", argv
        assert "is an encoder-only model (BERT): it reads a text but writes none" in err, argv


def test_metrics_still_reads_an_encoder_only_model(bert_folder, tmp_path, run_command):
    code, out, err = run_command(["metrics", "the cat sat", "--model", str(bert_folder), "--out",
                                  str(tmp_path / "heads.csv")])
    assert code == 0 and len((tmp_path / "heads.csv").read_text().splitlines()) == 1 + 2 * 4


def test_translate_fills_in_the_masked_words(bert_folder, run_command):
    """With [MASK] in the text there is something to print: the text with the encoder's guesses in their place."""
    from model.families import load, translate
    code, out, err = run_command(["translate", "the cat [MASK] on the mat", "--model", str(bert_folder)])
    expected = translate(load(bert_folder), "the cat [MASK] on the mat").text
    assert code == 0 and out.strip() == expected and "[MASK]" not in expected
    code, out, err = run_command(["translate", "the cat sat", "--model", str(bert_folder)])
    assert code == 2 and "prints the text with its [MASK] words filled in" in err
