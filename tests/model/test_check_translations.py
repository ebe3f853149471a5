"""`attention-visualizer check-translations`: each miss and the count, on a tiny model trained here; the comparison
ignores case, the spacing before punctuation and the apostrophe's shape, and nothing else."""
from __future__ import annotations

import pytest
from command_checks import check_command_output
from test_train_pipeline import TINY, synthetic_tsv

from model import load
from model.decoding import translate
from model.train import main as train_main
from model.checks import is_right, normalise
from visualizer.check_translations_command import main as check_main


@pytest.mark.parametrize("output, accepted, right", [
    ("Le chat dort.", "le chat dort.", True),
    ("Où est la gare ?", "Où est la gare?", True),
    ("Où est la gare?", "Où est la gare ?", True),
    ("« Bonjour » !", "«Bonjour»!", True),
    ("Je t'aime.", "Je t’aime.", True),
    ("Aujourd’hui, il pleut.", "aujourd'hui , il pleut .", True),
    ("Le  chat\u00a0dort.", "Le chat dort.", True),
    ("Le chat dort", "Le chat dort.", False),            # a missing full stop is a difference
    ("Le chien dort.", "Le chat dort.", False),
    ("Le chat dort.", "Lechat dort.", False),             # spaces between words count
    ("Elle a un livre.", "Elle a un livre .|Elle a un bouquin.", True),
])
def test_comparison_rules(output, accepted, right):
    assert is_right(output, accepted.split("|")) is right


def test_normalise_is_idempotent():
    s = "  L’ÉTÉ , c'est « chaud » ?  "
    assert normalise(normalise(s)) == normalise(s) == "l'été, c'est «chaud»?"


@pytest.fixture(scope="module")
def trained_model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("check")
    tsv = synthetic_tsv(tmp / "train.tsv")
    assert train_main([*TINY, "--tsv", str(tsv), "--out", str(tmp / "run"), "--steps", "60", "--average", "1"]) == 0
    return tmp / "run" / "model"


def test_check_translations_prints_each_miss_and_the_count(trained_model, tmp_path, capsys):
    lm = load(trained_model)
    sources = ["red cat", "big blue house", "small dog", "green tree bird"]
    outputs = [translate(lm, s).text for s in sources]
    lines = [f"{sources[0]}\t{outputs[0].upper()}|autre chose",                 # right, in other case
             f"{sources[1]}\tpas ça|{outputs[1]} ",                              # right, the second one
             f"{sources[2]}\tpas ça du tout",                                    # a miss
             "# a comment", "",
             f"{sources[3]}\t{outputs[3].replace(' ', '  ')}"]                   # right, other spacing
    checks = tmp_path / "checks.tsv"
    checks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    code = check_main([str(checks), "--model", str(trained_model)])
    out, err = capsys.readouterr()
    check_command_output(code, err)
    assert code == 1 and err == "error: 1 of 4 translations missed\n"
    assert out.splitlines() == [f"miss: {sources[2]}", f"  got:      {outputs[2]}", "  accepted: pas ça du tout",
                                "3 of 4 right"]
    checks.write_text("\n".join(lines[:2] + lines[3:]) + "\n", encoding="utf-8")
    assert check_main([str(checks), "--model", str(trained_model)]) == 0
    assert capsys.readouterr().out == "3 of 3 right\n"


def test_a_miss_names_the_words_the_model_never_read_in_training(trained_model, tmp_path, capsys):
    """The trainer counted its corpus' words (training_words.tsv): "zebra" is in none of its 300 sentences."""
    lm = load(trained_model)
    checks = tmp_path / "checks.tsv"
    checks.write_text("red zebra\tpas ça\nred cat\tpas ça non plus\n", encoding="utf-8")
    capsys.readouterr()
    assert check_main([str(checks), "--model", str(trained_model)]) == 1
    n = lm.training_words.sentences
    assert capsys.readouterr().out.splitlines() == [
        "miss: red zebra", f"  got:      {translate(lm, 'red zebra').text}", "  accepted: pas ça",
        f"  rare:     zebra in none of the {n:,} training sentences",
        "miss: red cat", f"  got:      {translate(lm, 'red cat').text}", "  accepted: pas ça non plus", "0 of 2 right"]


@pytest.mark.parametrize("content, words", [
    ("", "no sentences to check"),
    ("the cat\n", ":1: expected English<TAB>accepted translations separated by |"),
    ("the cat\t | \n", ":1: expected English<TAB>"),
    ("# a list\nthe cat\tle chat\tun chat\n", ":2: 3 TAB-separated fields, 2 expected"),    # as evaluate says (QA)
])
def test_malformed_check_files_are_one_line(run_command, tmp_path, content, words, tiny_model_dir):
    path = tmp_path / "c.tsv"
    path.write_text(content, encoding="utf-8")
    code, out, err = run_command(["check-translations", str(path), "--model", str(tiny_model_dir)])
    assert code == 2 and words in err and out == ""


def test_training_logs_the_check_count_that_check_translations_gives(tmp_path, capsys):
    """`python -m model.train --check FILE` counts the list's right translations at every validation and for the
    final model. The same run without the list gives the same weights; the list accepts that model's own output
    for 5 of 8 sentences, so the final count must be 5, as `check-translations` says for the saved model."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    common = [*TINY, "--tsv", str(tsv), "--steps", "60", "--average", "1", "--eval-every", "30"]
    assert train_main([*common, "--out", str(tmp_path / "plain")]) == 0
    lm = load(tmp_path / "plain" / "model")
    sources = ["red cat", "big blue house", "small dog", "green tree bird", "red dog", "blue cat", "big tree",
               "small house"]
    lines = [f"{s}\t{translate(lm, s).text if i < 5 else 'pas ça'}" for i, s in enumerate(sources)]
    checks = tmp_path / "list.tsv"
    checks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert train_main([*common, "--out", str(tmp_path / "run"), "--check", str(checks)]) == 0
    log = (tmp_path / "run" / "train.log").read_text(encoding="utf-8")
    counted = [line for line in log.splitlines() if " check " in line]
    assert [line.split(" check ")[0] for line in counted] == ["step 30", "step 60", "final (average of 1):"]
    assert counted[-1].endswith(": check 5 of 8 right (list.tsv)")
    capsys.readouterr()
    check_main([str(checks), "--model", str(tmp_path / "run" / "model")])
    assert capsys.readouterr().out.splitlines()[-1] == "5 of 8 right"


def test_training_refuses_a_broken_check_list_before_it_starts(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    (tmp_path / "bad.tsv").write_text("no tab here\n", encoding="utf-8")
    code = train_main([*TINY, "--tsv", str(tsv), "--out", str(tmp_path / "run"), "--steps", "5",
                       "--check", str(tmp_path / "bad.tsv")])
    assert code == 2 and "bad.tsv:1: expected English<TAB>accepted translations" in capsys.readouterr().err
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_check_lists_and_test_files_saved_by_spreadsheets_are_read(tmp_path):
    """A list saved as "UTF-8 with BOM" (Notepad, Excel's "CSV UTF-8"): the BOM hid the # of its first comment
    ("bom.tsv:1: expected English<TAB>…"); one saved as UTF-16 ("Unicode text") is told to be saved as UTF-8, as
    `evaluate` tells it."""
    from model.checks import read_checks
    from model.command_line import UsageError
    from model.data import read_tsv
    path = tmp_path / "bom.tsv"
    path.write_text("# Klasse 7b\nThe cat.\tLe chat. | Un chat.\n", encoding="utf-8-sig")
    assert read_checks(path) == [("The cat.", ["Le chat.", "Un chat."])]
    corpus = read_tsv(path, strict=True)
    assert corpus.src == ["The cat."]
    path.write_text("# Klasse 7b\nThe cat.\tLe chat.\n", encoding="utf-16")
    with pytest.raises(UsageError, match="it is UTF-16, as a spreadsheet's \"Unicode text\" is: save it as UTF-8"):
        read_checks(path)
