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


def test_the_conversion_a_pickle_only_folder_is_told_to_run_keeps_the_models_head(bert_folder, tmp_path,
                                                                                  run_command):
    """QA: the line suggested for a folder with pytorch_model.bin only loaded it with AutoModel, which dropped
    BERT's masked-word head: the converted folder then wrote nothing. It names the family's own class, and run as
    given it makes a folder that fills in the same words as the original."""
    import re
    import shutil
    import subprocess
    import sys

    import torch
    from safetensors.torch import load_file
    pickled = tmp_path / "bert-bin"
    shutil.copytree(bert_folder, pickled)
    torch.save(load_file(pickled / "model.safetensors"), pickled / "pytorch_model.bin")
    (pickled / "model.safetensors").unlink()
    code, out, err = run_command(["translate", "the cat [MASK] on the mat", "--model", str(pickled)])
    assert code == 2 and "BertForMaskedLM as M" in err and "AutoModel as M" not in err
    line = re.search(r'python -c "(.*?)" and open (\S+)', err)
    subprocess.run([sys.executable, "-c", line.group(1)], check=True, capture_output=True, cwd=tmp_path)
    code, converted, _ = run_command(["translate", "the cat [MASK] on the mat", "--model", line.group(2)])
    code0, original, _ = run_command(["translate", "the cat [MASK] on the mat", "--model", str(bert_folder)])
    assert code == code0 == 0 and converted == original and converted.strip()


@pytest.mark.parametrize("config", ["named", "as distilbert-base-uncased ships it"])
def test_emoji_read_as_berts_own_unknown_token_get_the_note(config, bert_folder, tmp_path, run_command):
    """QA: BERT's unknown token is "[UNK]"; the note looked for "<unk>", so "I love pizza 🍕 [MASK]." came back with
    the emoji silently gone. The note takes the tokenizer's own token, also where tokenizer_config.json names no
    special token ({"do_lower_case": true}: the tokenizer class's own defaults, BERT's "[UNK]")."""
    import shutil
    folder = tmp_path / "bert-UNK"
    shutil.copytree(bert_folder, folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        path = folder / name
        path.write_text(path.read_text(encoding="utf-8").replace("<unk>", "[UNK]"), encoding="utf-8")
    if config != "named":
        (folder / "tokenizer_config.json").write_text('{"do_lower_case": true}', encoding="utf-8")
    code, out, err = run_command(["translate", "the cat 😀 [MASK] on the mat", "--model", str(folder)])
    assert code == 0 and "note: 1 piece of the input is unknown to the model (shown as [UNK])" in err


def test_a_bert_without_its_masked_word_head_says_so_instead_of_printing_nothing(bert_folder, tmp_path,
                                                                                  run_command):
    """QA: a folder of BertModel's weights (no masked-LM head) printed an empty line with exit 0."""
    import shutil

    import transformers
    headless = tmp_path / "bert-headless"
    transformers.BertModel.from_pretrained(str(bert_folder)).save_pretrained(str(headless))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(bert_folder / name, headless / name)
    for text in ("the cat [MASK] on the mat", "the cat sat"):      # without a mask: not told to type one (QA)
        code, out, err = run_command(["translate", text, "--model", str(headless)])
        assert code == 2 and out == "" and "has no masked-word head" in err and "cannot fill in [MASK]" in err
        assert "when it has some" not in err
    code, out, err = run_command(["export", "the cat [MASK] on the mat", "--model", str(headless), "--out",
                                  str(tmp_path / "figures"), "--format", "csv"])
    assert code == 0 and len(out.splitlines()) == 1 and out.startswith("exported ")


@pytest.mark.parametrize("family, text, word", [("bert", "the cat [MASK] on the mat", "filled in"),
                                                ("bert", "the cat sat on the mat", None),
                                                ("roberta", "the cat <mask> on the mat", "filled in"),
                                                ("distilbert", "the cat [MASK] on the mat", "filled in"),
                                                ("gpt2", "the cat sat", "continuation"),
                                                ("marian", "the cat sat", "translation"),
                                                ("t5", "the cat sat", "output")])     # the window's "Output:"
def test_export_names_what_the_model_wrote_as_the_window_does(family, text, word, tmp_path_factory, tmp_path,
                                                               run_command):
    """QA: `export` printed "translation: …" for every model: BERT's echo of its input, GPT-2's continuation, and a
    T5's output, whose row the window names "Output"."""
    from model.families import load, translate
    folder = hf_tiny.build(family, tmp_path_factory.mktemp(family) / "model")
    code, out, err = run_command(["export", text, "--model", str(folder), "--out", str(tmp_path), "--format", "csv"])
    lines = out.splitlines()
    assert code == 0 and lines[-1].startswith("exported ")
    expected = [] if word is None else [f"{word}: {translate(load(folder), text).text}"]
    assert lines[:-1] == expected


def test_scoring_a_decoder_only_model_says_what_is_scored(tmp_path_factory, tmp_path, run_command, tiny_model_dir):
    """QA: `evaluate --model gpt2` gave "BLEU 1.14" for a GPT-2's continuations with no word said."""
    gpt2 = hf_tiny.build("gpt2", tmp_path_factory.mktemp("gpt2") / "model")
    listing = tmp_path / "list.tsv"
    listing.write_text("the cat sat\tle chat\n", encoding="utf-8")
    note = "is a decoder-only model (GPT-2): what is scored is its continuation of each source sentence"
    for argv in (["evaluate", "--model", str(gpt2), "--tsv", str(listing)],
                 ["check-translations", str(listing), "--model", str(gpt2)]):
        code, out, err = run_command(argv, check=False)
        assert note in err and ("BLEU" in out or "of 1 right" in out), argv
    code, out, err = run_command(["evaluate", "--model", str(tiny_model_dir), "--tsv", str(listing)])
    assert code == 0 and "decoder-only" not in err


def test_metrics_and_export_can_measure_a_decoder_only_models_text_alone(tmp_path_factory, tmp_path, run_command,
                                                                         tiny_model_dir):
    """QA: `metrics "The red car is fast." --model gpt2` measured 9 rows of the text and 19 of the dots the model
    wrote after it. --prompt-only: one row a token of the text, and nothing else."""
    from model import DecodingSettings
    from model.analysis.metrics import metrics_csv, trace_metrics
    from model.families import load, translate
    gpt2 = hf_tiny.build("gpt2", tmp_path_factory.mktemp("gpt2") / "model")
    text = "the red car is fast"
    lm = load(gpt2)
    alone = translate(lm, text, DecodingSettings(max_new=1)).trace
    assert alone.tgt_tokens == text.split()                        # the rows: the text's tokens, no more
    assert len(translate(lm, text).trace.tgt_tokens) > len(text.split())
    code, out, err = run_command(["metrics", text, "--model", str(gpt2), "--prompt-only"])
    assert code == 0 and out == metrics_csv(trace_metrics(alone))
    code, out, err = run_command(["export", text, "--model", str(gpt2), "--prompt-only", "--out", str(tmp_path),
                                  "--format", "csv"])
    matrix = (tmp_path / "self_L1_H1.csv").read_text(encoding="utf-8").splitlines()
    assert code == 0 and len(matrix) == 1 + len(text.split())       # a header and a row a token
    assert "continuation:" not in out + err and out.splitlines()[-1].startswith("exported ")    # nothing written
    code, out, err = run_command(["metrics", text, "--model", str(tiny_model_dir), "--prompt-only"], check=False)
    assert code == 2 and "--prompt-only is for decoder-only models" in err
    code, out, err = run_command(["metrics", text, "--model", str(gpt2), "--prompt-only", "--target", "x"],
                                 check=False)
    assert code == 2 and "--prompt-only and --target" in err


def test_options_an_encoder_only_model_cannot_use_are_refused_not_ignored(bert_folder, tmp_path, run_command):
    """QA: `metrics --target` and `translate --beam 3` were taken by a BERT and silently ignored."""
    for argv, words in ((["translate", "the cat [MASK] on the mat", "--beam", "3"], "--beam: "),
                        (["metrics", "the cat sat", "--target", "le chat"], "--target: "),
                        (["export", "the cat sat", "--target", "le chat", "--out", str(tmp_path)], "--target: ")):
        code, out, err = run_command(argv + ["--model", str(bert_folder)], check=False)
        assert code == 2 and err.startswith(f"error: {words}") and "is an encoder-only model" in err, argv
    assert not list(tmp_path.iterdir())                          # nothing written


def test_a_masked_word_model_says_when_it_has_no_mask_to_fill_in(bert_folder, run_command):
    """BERT echoed a text without [MASK] as its "filled-in" text, and a [MASK] cut off with the end of a long text,
    without a word (QA as a researcher)."""
    from model.families import load, translate
    from model.notes import no_mask, result_notes
    lm = load(bert_folder)
    assert no_mask(translate(lm, "the cat [MASK] on the mat").trace) is None
    none = translate(lm, "the cat sat on the mat").trace
    assert no_mask(none).startswith("The text has no [MASK]") and no_mask(none) in result_notes(none, 64)
    long = translate(lm, " ".join(["the cat sat on the mat"] * 30) + " [MASK]").trace
    assert long.meta["truncated"] and no_mask(long).startswith("Every [MASK] is past the model's last position")
    # a tokenizer without a mask token reads a typed [MASK] as ordinary pieces: not "cut off" of an 8-token text
    from model.trace import Trace
    unread = Trace(none.src_tokens, none.tgt_tokens, none.out_tokens, none.arrays,
                   dict(none.meta, sentence="the cat [MASK] on the mat", truncated=0), none.schema)
    assert no_mask(unread).startswith("The [MASK] typed was read as ordinary text, not as a mask")
    # some masks read, the others cut with the end of the text: the filled text printed them as if read (QA)
    some = translate(lm, "the [MASK] sat " + " ".join(["on the mat"] * 30) + " [MASK] [MASK]").trace
    assert some.meta["truncated"] and no_mask(some) == ("Only 1 of the 3 [MASK] typed was read: the rest are past the "
                                                        "model's last position, cut off with the end of the text, "
                                                        "and left as typed.")
    code, out, err = run_command(["export", "the cat sat on the mat", "--model", str(bert_folder), "--out",
                                  str(bert_folder.parent / "figs"), "--format", "csv"])
    assert code == 0 and "The text has no [MASK]" in err


def test_a_filled_in_text_is_the_text_as_typed_with_each_mask_replaced(bert_folder):
    """QA: "I love 🍕 and [MASK] café" came back "i loveing": the filled ids decoded dropped every word the
    tokenizer did not know ([UNK]) and glued the predicted continuation piece to the word before it."""
    from model.families import load, translate
    from model.families.hf.tracing import filled_text
    lm = load(bert_folder)
    text = "The Cat 🍕 [MASK] on the mat, [MASK]!"
    result = translate(lm, text)
    ids = list(lm.tokenizer(text)["input_ids"])
    masked = [lm.tgt_tok.pieces([o])[0] for i, o in zip(ids, result.out_ids) if i == lm.tokenizer.mask_token_id]
    assert len(masked) == 2
    assert result.text == f"The Cat 🍕 {masked[0]} on the mat, {masked[1]}!"
    assert filled_text("a [MASK] b", "[MASK]", ["##ing"]) == "a ##ing b"
    # a word put against a word typed is a word of its own (RoBERTa's "ĠParis" read "HelloParis!", QA)
    assert filled_text("Hello<mask>! (<mask>)", "<mask>", ["Paris", "Rome"]) == "Hello Paris! (Rome)"
    assert filled_text("Hello[MASK] x[MASK]", "[MASK]", [".", "##s"]) == "Hello. x##s"
    assert filled_text("东京是[MASK]的首都", "[MASK]", ["日"]) == "东京是日的首都"           # no spaces in Chinese
    assert filled_text("a b", "[MASK]", ["x"]) is None                # masks not as typed: None (decoded instead)


def test_a_bert_whose_tokenizer_names_its_own_special_tokens_is_read_with_them(tmp_path, run_command):
    """QA: the BERT family took "[CLS]", "[SEP]" and "[MASK]" for granted. A BERT whose tokenizer writes "<s> … </s>"
    and masks with "<mask>" got "the text has no [MASK]" although it filled the mask, and no head had a share on its
    end token. The tokenizer's own names are taken."""
    import numpy as np

    from model.analysis.metrics import trace_metrics
    from model.families import load, translate
    folder = hf_tiny.build("bert-angle", tmp_path / "bert-angle")
    lm = load(folder)
    assert {k: lm.schema.special[k] for k in ("cls", "sep", "mask", "pad")} == \
        {"cls": "<s>", "sep": "</s>", "mask": "<mask>", "pad": "<pad>"}
    text = "the cat <mask> on the mat"
    trace = translate(lm, text).trace
    keys = trace.src_tokens
    assert keys[-1] == "</s>"
    for m in trace_metrics(trace):
        expected = trace.attention(m.kind, m.layer - 1)[m.head - 1][:, keys.index("</s>")].mean()
        assert np.isclose(m.end_token, expected, atol=1e-6)
    code, out, err = run_command(["translate", text, "--model", str(folder)])
    assert code == 0 and "no <mask>" not in err and "has no" not in err and "<mask>" not in out and out.strip()


def test_metrics_effects_on_an_encoder_only_model_says_what_metrics_gives_it(bert_folder, run_command):
    """QA: `metrics --effects` on a BERT answered "use `metrics`", the command it was given."""
    code, out, err = run_command(["metrics", "the cat sat", "--model", str(bert_folder), "--effects"])
    assert code == 2 and out == "" and "need no --effects" in err and "use `metrics`" not in err
