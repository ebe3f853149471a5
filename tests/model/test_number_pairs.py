"""Copies of real pairs with other numbers: only pairs whose numbers are plain and the same on both sides are copied,
each number is replaced the same way on both sides by one of its kind, and the command writes the same copies for
the same seed."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from model import number_pairs as npairs

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_only_plain_numbers_the_french_holds_as_often_make_a_pair_copyable():
    assert npairs.copyable("Our school was founded in 1990.", "Notre école a été fondée en 1990.") == ["1990"]
    assert npairs.copyable("She wrote 3 novels in 3 years.", "Elle a écrit 3 romans en 3 ans.") == ["3"]
    assert npairs.copyable("I am 1 year old.", "J'ai 1 an.") is None                        # a 1 governs the singular
    assert npairs.copyable("It cost $10,000.", "Ça a coûté 10 000 dollars.") is None
    assert npairs.copyable("Pi is 3.14.", "Pi vaut 3,14.") is None
    assert npairs.copyable("Come at 10:45.", "Viens à 10h45.") is None
    assert npairs.copyable("It was his 21st birthday.", "C'était son 21e anniversaire.") is None
    assert npairs.copyable("I grew up in the 1990s.", "J'ai grandi dans les années 1990.") is None
    assert npairs.copyable("I have 3 cats.", "J'ai trois chats.") is None                  # the French spells it
    assert npairs.copyable("I have 3 cats and 3 dogs.", "J'ai 3 chats et trois chiens.") is None
    assert npairs.copyable("Call 007.", "Appelle 007.") is None
    assert npairs.copyable("I am here.", "Je suis ici.") is None


def test_a_copy_changes_each_number_the_same_way_on_both_sides():
    pairs = [("She wrote 3 novels in 12 years.", "Elle a écrit 3 romans en 12 ans."), ("I am here.", "Je suis ici.")]
    made = npairs.number_pairs(pairs, copies=6, seed=4)
    assert made and len(made) == len(set(made))
    for en, fr in made:
        first, second = npairs.plain_numbers(en)
        assert first != second and len(first) == 1 and len(second) == 2
        assert en == f"She wrote {first} novels in {second} years."
        assert fr == f"Elle a écrit {first} romans en {second} ans."
        assert (first, second) != ("3", "12")


def test_years_stay_years_and_days_stay_days():
    pairs = [("Tom was born October 20, 1973.", "Tom est né le 20 octobre 1973.")]
    for en, fr in npairs.number_pairs(pairs, copies=30, seed=1):
        day, year = npairs.plain_numbers(en)
        assert 2 <= int(day) <= 28 and 1900 <= int(year) <= 2030
        assert fr == f"Tom est né le {day} octobre {year}."


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789", min_size=1, max_size=6).filter(lambda s: s[0] != "0" and int(s) >= 2),
       st.integers(0, 10_000), st.sampled_from([0.0, 0.5, 1.0]))
def test_another_number_is_of_the_same_kind(number, seed, widen):
    new = npairs.another(number, random.Random(seed), widen=widen)
    if len(number) == 4 and 1000 <= int(number) <= 2099:
        assert 1900 <= int(new) <= 2030
    elif len(number) == 2:
        assert len(new) in ((2,) if widen == 0 else (3,) if widen == 1 else (2, 3)) and int(new) >= 10
    else:
        assert len(new) == len(number) and int(new) >= 2


def test_widening_makes_two_digit_numbers_three_digit_on_both_sides_and_leaves_days_and_years():
    pairs = [("On May 12, 1998, she ran 42 kilometers in 5 hours.",
              "Le 12 mai 1998, elle a couru 42 kilomètres en 5 heures.")]
    widths = Counter()
    for widen in (0.0, 1.0):
        for en, fr in npairs.number_pairs(pairs, copies=20, seed=3, widen=widen):
            day, year, distance, hours = npairs.plain_numbers(en)
            assert 2 <= int(day) <= 28 and 1900 <= int(year) <= 2030 and len(hours) == 1
            assert fr == f"Le {day} mai {year}, elle a couru {distance} kilomètres en {hours} heures."
            widths[widen, len(distance)] += 1
    assert set(widths) == {(0.0, 2), (1.0, 3)}


def test_the_command_writes_the_same_copies_for_the_same_seed_and_no_temporary_file(tmp_path):
    source = tmp_path / "in.tsv"
    source.write_text("The castle was built in 1602.\tLe château a été construit en 1602.\n"
                      "I have 3 cats.\tJ'ai trois chats.\n", encoding="utf-8")
    outs = [tmp_path / "a.tsv", tmp_path / "b.tsv"]
    for out in outs:
        assert npairs.main([str(source), str(out), "--copies", "5", "--seed", "9"]) == 0
    lines = outs[0].read_text(encoding="utf-8").splitlines()
    assert lines == outs[1].read_text(encoding="utf-8").splitlines() and 1 <= len(lines) <= 5
    assert all(line.startswith("The castle was built in ") and "1602" not in line for line in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tsv", "b.tsv", "in.tsv"]


@pytest.mark.parametrize("probe", ["numbers-en-fr.tsv", "numbers-en-fr-2.tsv"])
def test_the_probe_holds_a_plain_number_in_each_sentence_and_its_accepted_translations(probe):
    """The number probes are written for the project (none of their English a real pair's or a copy's, checked
    against the corpus when they were written): each accepted translation keeps the English's numbers."""
    lines = [line.split("\t") for line in (BENCHMARKS / probe).read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    assert len(lines) == 25
    for english, accepted in lines:
        numbers = npairs.plain_numbers(english)
        assert numbers, english
        for french in accepted.split("|"):
            assert Counter(npairs.DIGITS.findall(french)) == Counter(numbers), french      # "8h" too
