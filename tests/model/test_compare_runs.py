"""`evaluate --against`: is one model's BLEU above another's by more than chance? (sacreBLEU's paired bootstrap)"""
from __future__ import annotations

import random

import pytest

from model.evaluate import compare, main as evaluate_main, score
from tests.model.test_train_pipeline import TINY, synthetic_tsv
from model.train import main as train_main

WORDS = "the cat dog sat on mat red blue house tree car runs fast slow big small".split()


def _sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9))) for _ in range(n)]


def test_a_clearly_better_system_is_significant_and_scores_what_sacrebleu_scores():
    refs = _sentences(80)
    good = [r if i % 4 else r.split()[0] for i, r in enumerate(refs)]   # three in four exact
    bad = [" ".join(reversed(r.split())) for r in refs]
    c = compare(bad, good, [[r] for r in refs])
    assert c.bleu_a == pytest.approx(score(bad, [[r] for r in refs])[0])
    assert c.bleu_b == pytest.approx(score(good, [[r] for r in refs])[0])
    assert c.difference == pytest.approx(c.bleu_b - c.bleu_a) and c.difference > 20
    assert c.p_value < 0.01
    assert c.interval_b[0] <= c.bleu_b <= c.interval_b[1] and c.interval_a[1] < c.interval_b[0]
    assert "significant at p < 0.05" in c.lines("bad", "good")[2]


def test_two_equal_outputs_are_not_a_difference():
    refs = _sentences(30)
    hyps = [r.replace("cat", "dog") for r in refs]
    c = compare(hyps, list(hyps), [[r] for r in refs])
    assert c.difference == 0 and c.p_value == 1.0
    assert "not significant" in c.lines("a", "b")[2]
    # each output's 95% range is its resamples' spread, as for two different outputs (it was [x, x])
    low, high = c.interval_a
    assert c.interval_a == c.interval_b and low < c.bleu_a < high
    assert c.interval_a == compare(hyps, [r.replace("cat", "cow") for r in refs], [[r] for r in refs]).interval_a


def test_a_near_tie_is_not_significant_and_the_run_repeats():
    refs = _sentences(200, seed=3)
    a = [r if i % 2 else " ".join(r.split()[:-1]) for i, r in enumerate(refs)]
    b = [r if i % 2 == 0 or i % 7 == 0 else " ".join(r.split()[:-1]) for i, r in enumerate(refs)]  # a few swaps
    first, again = compare(a, b, [[r] for r in refs]), compare(a, b, [[r] for r in refs])
    assert first == again                                  # sacreBLEU's fixed seed
    assert first.p_value > 0.05


def test_lowercase_and_several_references_reach_the_test():
    refs = [["The Cat sat.", "A cat sat."], ["The dog ran.", "A dog ran."]] * 10
    hyps = ["a cat sat.", "the dog ran."] * 10
    assert compare(["x"] * 20, hyps, refs, lowercase=True).bleu_b == pytest.approx(100.0)
    assert compare(["x"] * 20, hyps, refs).bleu_b < 100.0


def test_the_command_compares_two_trained_models(tmp_path, capsys):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    test = synthetic_tsv(tmp_path / "test.tsv", n=40, seed=1)
    for name, steps in (("short", "2"), ("long", "60")):
        assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / name), "--steps", steps, "--average", "1",
                           *TINY]) == 0
    long_model, short_model = str(tmp_path / "long" / "model"), str(tmp_path / "short" / "model")
    capsys.readouterr()
    assert evaluate_main(["--model", short_model, "--tsv", str(test)]) == 0
    alone = float(capsys.readouterr().out.splitlines()[-1].split()[1])
    assert evaluate_main(["--model", long_model, "--tsv", str(test), "--against", short_model]) == 0
    out = capsys.readouterr().out.splitlines()
    own = float(out[1].split()[1])
    assert out[2].startswith("BLEU ") and out[2].endswith(short_model)
    assert float(out[2].split()[1]) == pytest.approx(alone, abs=0.005)
    assert float(out[3].split()[1]) == pytest.approx(own, abs=0.005) and out[3].endswith(long_model)
    assert out[4].startswith("difference ") and " BLEU, paired bootstrap (1,000 resamples) p = " in out[4]
    assert float(out[4].split()[1]) == pytest.approx(own - alone, abs=0.011)


def test_an_unreadable_baseline_is_one_line(tmp_path, capsys):
    test = synthetic_tsv(tmp_path / "test.tsv", n=5, seed=1)
    (tmp_path / "broken").mkdir()
    assert evaluate_main(["--model", "en-de", "--tsv", str(test), "--against", str(tmp_path / "broken")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken" in err[0] and "Traceback" not in err[0]


def test_alternatives_joined_by_bars_become_references_of_their_own(tiny_model_dir, tiny_lm, tmp_path, capsys):
    """A check list (English<TAB>one | another) scored with --alternatives: a translation equal to any one
    alternative counts as a perfect match; read without it, the joined line is one long reference."""
    from model.evaluate import translate_all
    sources = ["the cat sat on the mat", "a red car runs fast", "the big dog sat"]
    outputs = translate_all(tiny_lm, sources)
    listing = tmp_path / "list.tsv"
    listing.write_text("".join(f"{s}\tsomething else entirely | {o} | une autre\n" for s, o in zip(sources, outputs)),
                       encoding="utf-8")

    def bleu(*extra):
        assert evaluate_main(["--model", str(tiny_model_dir), "--tsv", str(listing), *extra]) == 0
        out = capsys.readouterr().out
        return out, float(out.split("BLEU ")[1].split()[0])

    out, split = bleu("--alternatives")
    assert split == pytest.approx(100.0) and "references 9" in out
    out, joined = bleu()
    assert joined < 100.0 and "references 3" in out


def test_a_small_sets_ranges_stay_inside_0_to_100():
    """Three sentences, one of them exact: the spread of the resampled BLEU reached [6.29, 106.29]."""
    refs = ["the cat sat on the mat", "a red car runs fast", "the big dog sat on a blue mat"]
    hyps_a = [refs[0], "a car", "dog"]
    hyps_b = [refs[0], refs[1], "the big dog"]
    c = compare(hyps_a, hyps_b, [[r] for r in refs])
    for low, high in (c.interval_a, c.interval_b):
        assert 0.0 <= low <= high <= 100.0
