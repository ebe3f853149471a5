"""The lexicon-made agreement pairs: French adjectives agree with their nouns, the nouns are none of the subjects
the probe and the classroom lists measure with, and the command writes the same file for the same seed."""
from __future__ import annotations

import re
from pathlib import Path

from model import agreement_pairs as ap

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SUBJECT = re.compile(r"^(?:The|My|These|This|Our|Her|His|Their) (.+?) (?:is|are|was|were|isn't|aren't)\b")


def test_every_predicate_adjective_takes_its_nouns_gender_and_number():
    nouns, adjectives = ap.lexicon()
    by_plural = {n["ep"]: n for n in nouns}
    by_english = {a["en"]: a for a in adjectives}
    frame = re.compile(r"^The (\w+) are (\w+)\.$")
    checked = 0
    for en, fr in ap.all_pairs():
        m = frame.match(en)
        if m and m.group(1) in by_plural:
            n, a = by_plural[m.group(1)], by_english[m.group(2)]
            assert fr == f"Les {n['fp']} sont {a['fp' if n['g'] == 'f' else 'mp']}.", (en, fr)
            checked += 1
    assert checked > 500
    pairs = dict(ap.all_pairs())
    assert pairs["The boxes are empty."] == "Les boîtes sont vides."
    assert pairs["The old boxes are small."] == "Les vieilles boîtes sont petites."        # before the noun
    assert pairs["The white dresses are expensive."] == "Les robes blanches sont chères."    # colours after it
    assert pairs["This plane is small."] == "Cet avion est petit." and pairs["My plate is clean."] == "Mon assiette est propre."
    assert pairs["Are the nurses tired?"] == "Les infirmières sont-elles fatiguées ?"
    assert pairs["The boxes are new."] == "Les boîtes sont neuves." and pairs["My pen is new."] == "Mon stylo est neuf."
    assert pairs["The new boxes are empty."] == "Les nouvelles boîtes sont vides."        # "nouvelles" before it
    assert pairs["The boxes are clean and empty."] == "Les boîtes sont propres et vides."  # both agree
    assert pairs["The queens are happy and tired."] == "Les reines sont heureuses et fatiguées."
    assert "The spoons are tired." not in pairs and "My queens are happy." not in pairs    # no nonsense


def test_the_nouns_are_none_of_the_subjects_the_checks_measure_with():
    nouns, _ = ap.lexicon()
    words = {n["es"] for n in nouns} | {n["ep"] for n in nouns}
    files = sorted(BENCHMARKS.glob("agreement-en-fr*.tsv")) + sorted(BENCHMARKS.glob("classroom-own-en-fr*.tsv"))
    subjects = set()
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            m = SUBJECT.match(line.split("\t")[0]) if line and not line.startswith("#") else None
            if m:
                subjects.update(m.group(1).lower().split())
    assert len(subjects) > 30 and {"girls", "houses", "cat"} <= subjects          # (the pattern reads them)
    assert not subjects & words, sorted(subjects & words)


def test_the_command_writes_the_same_pairs_for_the_same_seed(tmp_path):
    out = tmp_path / "agree.tsv"
    assert ap.main([str(out), "--pairs", "50", "--seed", "3"]) == 0
    first = out.read_text(encoding="utf-8")
    lines = first.splitlines()
    assert len(lines) == len(set(lines)) == 50 and all(line.count("\t") == 1 for line in lines)
    assert ap.main([str(out), "--pairs", "50", "--seed", "3"]) == 0 and out.read_text(encoding="utf-8") == first
    assert ap.main([str(out), "--pairs", "50", "--seed", "4"]) == 0 and out.read_text(encoding="utf-8") != first
    assert [p.name for p in tmp_path.iterdir()] == ["agree.tsv"]          # no temporary file left
