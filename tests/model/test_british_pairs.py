"""British English copies of real pairs: spellings change anywhere, a word is swapped only where the French fixes its
meaning, the case of a sentence's first word is kept, and the command writes only the pairs that changed."""
from __future__ import annotations

from pathlib import Path

from model import british_pairs as bp

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_spellings_change_whatever_the_french_says():
    assert bp.british("What's your favorite color?", "Quelle est ta couleur préférée ?") == \
        "What's your favourite colour?"
    assert bp.british("Colors matter to my neighbors.", "x") == "Colours matter to my neighbours."
    assert bp.british("Mom realized that the theater was gray.", "x") == "Mum realised that the theatre was grey."
    assert bp.british("I like mathematics.", "x") == "I like mathematics."          # "math" only as a word
    assert bp.british("The moment came.", "x") == "The moment came."              # "mom" only as a word


def test_a_word_is_swapped_only_where_the_french_holds_its_meaning():
    assert bp.british("I live in an apartment.", "J'habite dans un appartement.") == "I live in a flat."
    assert bp.british("Do you have a subway map?", "As-tu une carte du métro ?") == "Do you have an underground map?"
    assert bp.british("The laboratory is funny.", "x") == "The laboratory is funny."      # no "labour" in it
    assert bp.british("Let's go to the movies.", "Allons au cinéma.") == "Let's go to the cinema."
    assert bp.british("Let's watch the movies.", "Regardons les films.") == "Let's watch the movies."
    assert bp.british("The store is closed.", "Le magasin est fermé.") == "The shop is closed."
    assert bp.british("Store it here.", "Range-le ici.") == "Store it here."
    assert bp.british("It's a department store.", "C'est un grand magasin.") == "It's a department store."
    assert bp.british("The leaves turn red in the fall.", "Les feuilles rougissent en automne.") == \
        "The leaves turn red in the autumn."
    assert bp.british("Don't fall in autumn.", "Ne tombe pas en automne.") == "Don't fall in autumn."
    assert bp.british("Leaves fall in the fall.", "Les feuilles tombent en automne.") == \
        "Leaves fall in the autumn."                                  # the verb stays ("Leaves autumn in the autumn")
    assert bp.british("Fall is here.", "L'automne est là.") == "Fall is here."      # (left: a verb or the season)
    assert bp.british("The students are reading.", "Les élèves lisent.") == "The pupils are reading."
    assert bp.british("The students are reading.", "Les étudiants lisent.") == "The students are reading."
    assert bp.british("Take the elevator to the movie theater.", "Prends l'ascenseur jusqu'au cinéma.") == \
        "Take the lift to the cinema."
    assert bp.british("Apartments are expensive.", "Les appartements sont chers.") == "Flats are expensive."


def test_the_pairs_that_changed_each_once_with_their_french():
    pairs = [("My favorite color is red.", "Ma couleur préférée est le rouge."),
             ("My favorite color is red.", "Ma couleur favorite est le rouge."),
             ("My favorite color is red.", "Ma couleur préférée est le rouge."),
             ("I am here.", "Je suis ici.")]
    assert bp.british_pairs(pairs) == [("My favourite colour is red.", "Ma couleur préférée est le rouge."),
                                       ("My favourite colour is red.", "Ma couleur favorite est le rouge.")]


def test_the_command_writes_only_the_changed_pairs_and_no_temporary_file(tmp_path):
    source = tmp_path / "in.tsv"
    source.write_text("I am here.\tJe suis ici.\nThe truck is red.\tLe camion est rouge.\n"
                      "The truck is red.\tLa camionnette est rouge.\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    assert bp.main([str(source), str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "The lorry is red.\tLe camion est rouge.\n" \
                                              "The lorry is red.\tLa camionnette est rouge.\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.tsv", "out.tsv"]


def test_the_probe_measures_sentences_the_copies_do_not_hold():
    """benchmarks/british-en-fr.tsv is written for the project, none of its English a real pair's or a copy's
    (checked against the corpus when it was written): each holds a British word or phrase the copies teach."""
    lines = [line.split("\t") for line in (BENCHMARKS / "british-en-fr.tsv").read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    assert len(lines) == 25 and all(len(fields) == 2 and fields[1].strip() for fields in lines)
    taught = {uk.lower() for _, uk in bp.SPELLINGS + bp.WORDS} | {uk.lower() for _, uk, _ in bp.SWAPS}
    for english, _ in lines:
        assert any(t in english.lower() for t in taught), english
