"""The counts of the words a model learnt from (training_words.tsv): counted, written and read back, and the note
they give a translation whose sentence holds a word the model rarely or never read."""
from __future__ import annotations

import shutil
import unicodedata

from hypothesis import example, given, settings, strategies as st

from model import load, translate
from model.checkpoint import MODELS_DIR
from model.notes import rare_pieces, rare_word_at, rare_words, result_notes
from model.training_words import (FILE, RARE, WordCounts, main as words_main, read_word_counts, word_counts_problem,
                                  words)

VOCAB = ["cat", "dog", "mat", "the", "sat", "on", "red", "car", "Paris", "don't", "élève", "über"]


def test_words_are_casefolded_without_digits_possessives_or_punctuation():
    assert words("The cat's mat, 3 dogs & TOM'S 2nd car! COVID19 e-mail") == ["the", "cat", "mat", "dogs", "tom",
                                                                             "car", "e", "mail"]
    assert words("I don’t know L'ÉLÈVE.") == ["i", "don't", "know", "l'élève"]
    assert words("nai\u0308ve") == words("naïve") == ["naïve"]           # a decomposed paste is the same word
    assert words("Москва 東京に行きます") == ["москва"]                      # an unspaced script's clause is no word
    assert words("") == [] and words("123 … !! 🍕") == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6).map(" ".join), min_size=1, max_size=20))
def test_counts_are_the_number_of_distinct_sentences_holding_each_word(tmp_path_factory, sentences):
    counts = WordCounts.of(sentences + sentences[:1])                # a repeated sentence is counted once
    distinct = set(sentences)
    assert counts.sentences == len(distinct)
    for w in {w.casefold() for w in VOCAB}:
        assert counts.counts.get(w, 0) == sum(w in s.casefold().split() for s in distinct)
    folder = tmp_path_factory.mktemp("words")
    counts.save(folder)
    assert read_word_counts(folder) == counts                         # written and read back whole
    assert [p.name for p in folder.iterdir()] == [FILE]               # no temporary file left beside it


def test_rare_names_each_word_under_the_threshold_once_in_the_sentence_order():
    counts = WordCounts(100, {"the": 90, "and": 50, "cat": RARE, "mat": RARE - 1, "tom": 2})
    assert counts.rare("The cinema, the mat and the CINEMA; Tom's cat") == [("cinema", 0), ("mat", RARE - 1),
                                                                           ("Tom", 2)]
    assert counts.rare("the cat") == [] and counts.rare("") == []


def test_a_broken_or_missing_file_means_no_counts_and_bad_lines_are_skipped(tmp_path):
    assert read_word_counts(tmp_path) is None and word_counts_problem(tmp_path) is None    # none: no problem
    assert word_counts_problem(None) is None                          # a model without a folder
    (tmp_path / FILE).write_bytes(b"\xff\xfe\x00garbage")
    assert read_word_counts(tmp_path) is None                         # not UTF-8
    assert word_counts_problem(tmp_path) == ("training_words.tsv cannot be read (not UTF-8 text): the note on "
                                             "rarely read words is off")
    (tmp_path / FILE).write_text("cat\t3\n", encoding="utf-8")
    assert read_word_counts(tmp_path) is None                         # no header
    assert word_counts_problem(tmp_path).startswith("training_words.tsv has no first line “# sentences<TAB>N”")
    (tmp_path / FILE).write_text("# sentences\t7\ncat\t3\nno count here\ndog\tmany\n\t4\nmat\t1\n", encoding="utf-8")
    assert read_word_counts(tmp_path) == WordCounts(7, {"cat": 3, "mat": 1}) and word_counts_problem(tmp_path) is None
    (tmp_path / FILE).unlink()
    (tmp_path / FILE).mkdir()                                         # there, and no file at all
    assert read_word_counts(tmp_path) is None and "cannot be read (Is a directory)" in word_counts_problem(tmp_path)


def test_a_command_opens_a_model_whose_counts_are_broken_and_says_why(tmp_path, tiny_model_dir, capsys):
    from visualizer.translate_command import main as translate_main
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    (folder / FILE).write_text("cat\t3\n", encoding="utf-8")
    assert translate_main(["the cat sat", "--model", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() and "note: training_words.tsv has no first line" in err


def test_the_command_counts_tsv_sources_and_plain_lines(tmp_path, capsys):
    (tmp_path / "a.tsv").write_text("The cat sat.\tLe chat.\nThe cat sat.\tLe chat s'assit.\nA dog.\tUn chien.\n",
                                    encoding="utf-8")
    (tmp_path / "b.en").write_text("A red car.\n\n", encoding="utf-8")
    assert words_main([str(tmp_path), str(tmp_path / "a.tsv"), str(tmp_path / "b.en")]) == 0
    got = read_word_counts(tmp_path)
    assert got.sentences == 3 and got.counts == {"the": 1, "cat": 1, "sat": 1, "a": 2, "dog": 1, "red": 1, "car": 1}
    assert "7 words of 3 sentences" in capsys.readouterr().out


def test_a_model_folder_with_counts_notes_the_rare_words_of_a_sentence(tiny_model_dir, tmp_path):
    folder = tmp_path / "tiny"
    shutil.copytree(tiny_model_dir, folder)
    WordCounts(50, {"the": 40, "cat": 30, "sat": 9, "on": 30, "mat": 1}).save(folder)
    lm = load(folder)
    trace = translate(lm, "the cat sat on the mat with Zorro").trace
    assert trace.meta["rare_words"] == [["mat", 1], ["with", 0], ["Zorro", 0]]
    assert trace.meta["training_sentences"] == 50
    note = rare_words(trace)
    assert note in result_notes(trace, lm.cfg.max_len)
    assert note == ("“with” and “Zorro” are in none of this model's 50 training sentences, and “mat” in only one: "
                    "their translations may be wrong.")
    assert rare_words(translate(lm, "the cat sat on the").trace) is None
    assert rare_words(translate(lm, "the cat sat on the mat").trace) == (
        "“mat” is in only one of this model's 50 training sentences: its translation may be wrong.")
    # a given target is the user's, not a guess: the note is about the model's predictions along it
    forced = translate(lm, "the zebra", target="le zèbre").trace
    assert rare_words(forced) == ("“zebra” is in none of this model's 50 training sentences: what it predicts for "
                                  "it is a guess.")
    many = rare_words(translate(lm, "a b c d e f g").trace)
    assert many.startswith("“a”, “b”, “c”, “d” and “e” are in none of this model's 50 training sentences (and 2 "
                           "more words): their translations")
    # a long paste is cut at the model's length: the words after the cut were never read, so never named
    long = translate(lm, "the cat " * 40 + "zebra").trace
    assert long.meta["truncated"] > 0 and long.meta["rare_words"] == []


def test_a_model_folder_without_counts_has_no_such_note(tiny_lm):
    trace = translate(tiny_lm, "the zebra sat on the mat").trace
    assert "rare_words" not in trace.meta and rare_words(trace) is None


def test_the_bundled_translators_count_the_english_they_learnt_from():
    fr, de = load("en-fr"), load("en-de")
    assert fr.training_words.sentences == 152_663 and de.training_words.sentences == 28_991
    assert read_word_counts(MODELS_DIR / "en-fr") == fr.training_words
    # a word it never read ("rucksack": "J'ai perdu mes ruines."): the note says why
    trace = translate(fr, "I lost my rucksack.").trace
    assert trace.meta["rare_words"] == [["rucksack", 0]]
    assert rare_words(trace) == ("“rucksack” is in none of this model's 152,663 training sentences: its "
                                 "translation is a guess.")
    assert rare_words(translate(fr, "I have a red car.").trace) is None     # the window's first sentence: no note
    # the pieces of the named words, which the heatmap underlines: the source's "ru ##cks ##ack", none of the French
    assert trace.src_tokens[3:6] == ["ru", "##cks", "##ack"] and rare_pieces(trace, "src") == {3, 4, 5}
    assert rare_pieces(trace, "tgt") == set()
    assert rare_word_at(trace, "src", 4) == "“rucksack” is in none of the model's 152,663 training sentences"
    assert rare_word_at(trace, "src", 2) is None
    two = translate(fr, "There is a tablet in the Rucksack.").trace
    assert [two.src_tokens[i] for i in sorted(rare_pieces(two, "src"))] == ["table", "##t", "R", "##u", "##cks", "##ack"]
    assert rare_word_at(two, "src", 3) == "“tablet” is in only 2 of the model's 152,663 training sentences"
    assert rare_word_at(two, "src", 8) == "“Rucksack” is in none of the model's 152,663 training sentences"
    two.meta["partial"] = True
    assert rare_pieces(two, "src") == set()


def test_a_rare_word_with_a_character_outside_the_vocabulary_is_found_among_its_pieces():
    """en-fr has no "Ω": "Ωmega" reads "␣ <unk> ##me ##g ##a" and "rucksackΩ" "ru ##cks ##ack <unk>"; the unknown
    piece stands for its character, so that every piece of the word the note names is underlined."""
    fr = load("en-fr")
    trace = translate(fr, "Ωmega and rucksackΩ.").trace
    assert trace.meta["rare_words"] == [["Ωmega", 0], ["rucksackΩ", 0]]
    assert trace.src_tokens[:5] == ["␣", "<unk>", "##me", "##g", "##a"]
    assert [trace.src_tokens[i] for i in sorted(rare_pieces(trace, "src"))] == \
        ["␣", "<unk>", "##me", "##g", "##a", "ru", "##cks", "##ack", "<unk>"]
    assert rare_word_at(trace, "src", 1) == "“Ωmega” is in none of the model's 152,663 training sentences"
    assert rare_word_at(trace, "src", 8) == "“rucksackΩ” is in none of the model's 152,663 training sentences"
    # an unknown word of its own is no rare word (no letters the counts could hold): nothing underlined
    assert rare_pieces(translate(fr, "My cat 猫猫 sleeps.").trace, "src") == set()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
@example("\u0958")                     # क़, which NFC writes as क and a nukta (it was cut off: "क")
@example("हिन्दी")                      # vowel signs and a virama: it was three words
@example("A\U000E0100")                  # a variation selector (a mark beyond the first 65,536 characters)
def test_any_text_gives_rare_words_that_are_in_it_each_once(text):
    counts = WordCounts(10, {"the": 5, "cat": 1})
    rare = counts.rare(text)
    keys = [words(w)[0] for w, _ in rare]
    assert len(keys) == len(set(keys)) and "the" not in keys
    composed = unicodedata.normalize("NFC", text)           # the words as written, composed
    assert all(w in composed and n == counts.counts.get(k, 0) < RARE for (w, n), k in zip(rare, keys))
    # a word is never cut at a mark that belongs to it
    assert all(not any(unicodedata.category(c)[0] == "M" for c in composed[composed.index(w) + len(w):][:1])
               for w, _ in rare)


def test_the_command_refuses_a_missing_folder_or_file_in_one_line(tmp_path, capsys):
    assert words_main([str(tmp_path / "no"), str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith("no: not a folder (give the model's folder)")
    assert words_main([str(tmp_path), str(tmp_path / "none.tsv")]) == 2
    assert "none.tsv: cannot be read as UTF-8 text" in capsys.readouterr().err
    assert not (tmp_path / FILE).exists()


def test_the_note_judges_the_words_the_model_reads_not_the_characters_typed(tiny_model_dir, tmp_path):
    """A zero-width joiner inside "car", fullwidth "ｒｅｄ" and mathematical "𝒻𝒶𝓈𝓉" reach the model as car, red and
    fast (NFKC, format characters removed); the note had named "ca", "fa" and "ｒｅｄ" as never seen (QA)."""
    folder = tmp_path / "tiny"
    shutil.copytree(tiny_model_dir, folder)
    WordCounts(50, {"the": 40, "car": 30, "is": 30, "fast": 9, "red": 12}).save(folder)
    lm = load(folder)
    fancy_fast = "\U0001d4bb\U0001d4b6\U0001d4c8\U0001d4c9"
    for typed in ("the ca\u200dr is fa\u200cst", f"the \uff52\uff45\uff44 car is {fancy_fast}",
                  "the car is fast\u00ad"):
        assert translate(lm, typed).trace.meta["rare_words"] == [], typed
    assert translate(lm, "the ca\u200dr is slow").trace.meta["rare_words"] == [["slow", 0]]


def test_a_very_long_word_is_quoted_by_its_two_ends(tiny_model_dir, tmp_path):
    """A 160-letter word (40 here: the tiny model reads no more), quoted whole, ran the note past the window's edge,
    cut there with the claim after it (QA):
    the note keeps its two ends around “…” and says the rest as before."""
    folder = tmp_path / "tiny"
    shutil.copytree(tiny_model_dir, folder)
    WordCounts(50, {"the": 40, "car": 30}).save(folder)
    lm = load(folder)
    word = "supercalifragilistic" * 2
    trace = translate(lm, f"the {word} car").trace
    assert trace.meta["rare_words"] == [[word, 0]]                    # the word itself is kept in the trace
    note = rare_words(trace)
    assert note == "“supercalifragil…califragilistic” is in none of this model's 50 training sentences: its " \
                   "translation is a guess."
    assert rare_word_at(trace, "src", 2).startswith("“supercalifragil…califragilistic” is in none")
