"""Notes a reader of a result should have (model/notes.py), on real runs of tiny models."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, translate  # noqa: E402
from model.config import UNK as UNK_ID  # noqa: E402
from model.notes import prompt_fills  # noqa: E402


def test_a_prompt_that_fills_the_positions_says_how_little_room_was_left(tmp_path):
    """A 3,000-character paste into GPT-2 was cut to its positions and generated one token; the only word was
    "the text was cut" (QA pass)."""
    lm = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    room = lm.cfg.max_len
    long = translate(lm, " ".join(["the cat sat on the mat"] * 40), DecodingSettings(max_new=5))
    assert long.truncated > 0 and long.trace.meta["prompt_tokens"] == room
    note = prompt_fills(long.trace, room)
    written = len(long.trace.out_tokens) - (room - 1)
    assert note == (f"The prompt fills the model's {room} positions: it had room to write {written} "
                    f"token{'' if written == 1 else 's'}. Shorten the text to see it continue.")
    short = translate(lm, "the cat sat on the mat", DecodingSettings(max_new=5))
    assert prompt_fills(short.trace, room) is None


def test_a_target_the_model_finds_far_too_unlikely_is_questioned(tiny_lm):
    """A target typed for one sentence stayed when the sentence changed and was shown as its translation: a given
    target whose tokens get a geometric mean p under 0.05 gets a note; the model's own output, none."""
    import math

    import numpy as np

    from model import translate as translate_seed
    from model.notes import UNLIKELY_TARGET, result_notes, unlikely_target
    forced = translate_seed(tiny_lm, "the cat sat", target="le chat").trace
    V = forced.arrays["logits"].shape[-1]

    def with_p(p: float):
        """The forced trace with logits that give each forced token probability p."""
        logits = np.zeros_like(forced.arrays["logits"])
        for step in range(forced.n_steps):
            logits[step, forced.out_id(step)] = math.log(p * (V - 1) / (1 - p))
        forced.arrays["logits"] = logits
        return forced

    assert unlikely_target(with_p(0.2)) is None
    note = unlikely_target(with_p(0.004))
    assert note.startswith("The model finds the given target very unlikely for this sentence (its tokens get "
                           "p = 0.004 each, on average)") and note in result_notes(forced, 64)
    assert unlikely_target(with_p(UNLIKELY_TARGET * 1.01)) is None
    greedy = translate_seed(tiny_lm, "the cat sat").trace                  # the model's own: no target, no note
    assert unlikely_target(greedy) is None


def test_a_model_that_lowercases_its_input_is_told_apart_from_one_that_never_saw_capitals(tmp_path, tiny_model_factory):
    """en-de wrote "der hund rennt …" for "The dog runs in Berlin." and nothing said why: a model whose tokenizer
    lowercases reads_lowercase when the text has a capital; one that reads the capitals as unknown pieces does not,
    nor a text in lowercase already."""
    from model.notes import reads_lowercase

    lower = load(tiny_model_factory(tmp_path / "lower", lowercase=True))
    cased = load(tiny_model_factory(tmp_path / "cased"))
    run = translate(lower, "The Cat sat", DecodingSettings())
    assert run.trace.src_tokens[:3] == ["the", "cat", "sat"] and reads_lowercase(run.trace)
    assert not reads_lowercase(translate(lower, "the cat sat", DecodingSettings()).trace)
    unknown = translate(cased, "The Cat sat", DecodingSettings()).trace
    assert "<unk>" in unknown.src_tokens and not reads_lowercase(unknown)
    gpt2 = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))            # a decoder-only model: its prompt's pieces
    assert not reads_lowercase(translate(gpt2, "The Cat sat", DecodingSettings(max_new=2)).trace)


def test_the_lowercase_check_reads_the_tokenizer_so_an_emoji_does_not_hide_it(tmp_path, tiny_model_factory):
    """en-de lost its "lowercase" tag for "The dog runs 🐶": the emoji's <unk> had turned the check off (a model that
    never saw capitals reads them as unk). The run records whether its tokenizer lowercases, the seed's and a
    Hugging Face one's (an uncased BERT's normalizer); a saved trace from before falls back on its pieces."""
    import json
    from model.notes import reads_lowercase
    from model.trace import Trace

    lower = load(tiny_model_factory(tmp_path / "lower", lowercase=True))
    trace = translate(lower, "The Cat sat 🐱", DecodingSettings()).trace
    assert "<unk>" in trace.src_tokens and trace.meta["lowercases"] is True and reads_lowercase(trace)
    cased = translate(load(tiny_model_factory(tmp_path / "cased")), "The Cat sat", DecodingSettings()).trace
    assert cased.meta["lowercases"] is False and not reads_lowercase(cased)
    old = Trace(trace.src_tokens, trace.tgt_tokens, trace.out_tokens, trace.arrays,
                {k: v for k, v in trace.meta.items() if k != "lowercases"}, trace.schema)
    assert not reads_lowercase(old)               # its pieces hold an unk: not claimed without the tokenizer's word

    folder = hf_tiny.build("bert", tmp_path / "bert")
    spec = json.loads((folder / "tokenizer.json").read_text())
    spec["normalizer"] = {"type": "Lowercase"}
    (folder / "tokenizer.json").write_text(json.dumps(spec))
    bert = translate(load(folder), "The CAT sat", DecodingSettings()).trace
    assert bert.meta["lowercases"] is True and bert.src_tokens[1:3] == ["the", "cat"] and reads_lowercase(bert)
    gpt2 = translate(load(hf_tiny.build("gpt2", tmp_path / "gpt2")), "The Cat", DecodingSettings(max_new=1)).trace
    assert gpt2.meta["lowercases"] is False


def test_a_translation_the_model_hesitated_over_names_its_least_sure_step():
    """A class took every translation of the bundled en-fr for right. Where it chose a token with p under 0.2 (its
    Winograd sentence: "La trophée n'a pas fait une bonne valise…"), a note names how many steps, the least sure
    one, its token and p, from the trace's own distribution; a sure translation, sampling and a given target get
    none."""
    from model.notes import HESITATION, hesitated
    from model.text import probability            # as the Output panel writes it: p = 0.085, not 0.08 beside it

    lm = load("en-fr")
    sentence = "The trophy didn't fit in the suitcase because it was too big."
    t = translate(lm, sentence, DecodingSettings()).trace
    p = [float(t.probs(s)[t.out_id(s)]) for s in range(t.n_steps)]
    low = [s for s in range(t.n_steps) if p[s] < HESITATION]
    step = min(low, key=p.__getitem__)
    where = f"at generation step {step}" if len(low) == 1 else f"at {len(low)} generation steps, most at step {step}"
    from model.notes import word_of
    piece, word = t.out_tokens[step], word_of(t.out_tokens, step, glued=True)
    token = f"“{piece}”" + (f" of “{word}”" if word != piece else "")
    assert hesitated(t).startswith(f"The model hesitated {where} ({token}, p = {probability(p[step])}): ")
    # a piece is named with its word: "trop" alone sent a class to the real "trop" of "trop grande"
    assert word_of(["La", "trop", "##hée", "n", "'"], 1) == word_of(["La", "trop", "##hée"], 2) == "trophée"
    assert word_of(["Le", "chat"], 1) == "chat"
    # glued as the translation writes them: "l'entrée", not "'entrée"; "ich-e", not "-e" (QA)
    assert word_of(["de", "l", "'", "##entrée", "."], 3, glued=True) == "l'entrée"
    assert word_of(["<s>", "ich", "-", "##e", "brüder"], 2, glued=True) == "ich-e"
    assert word_of(["de", "l", "'", "##entrée", "."], 3) == "'entrée"              # (the rare-word marks' words)
    # a bare word start ("␣") and an unknown piece after a word's pieces belong to that word, spelled when given
    tokens = ["Le", "␣", "<unk>", "##me", "<unk>", "est", "<unk>", "</s>"]
    assert [word_of(tokens, i) for i in (1, 2, 3, 4)] == ["<unk>me<unk>"] * 4
    assert word_of(tokens, 3, ["Le", "␣", "Ω", "##me", "ß", "est", "猫", "</s>"]) == "Ωmeß"
    assert word_of(tokens, 6) == "est<unk>" and word_of(tokens, 7) == "</s>"
    beam = translate(lm, sentence, DecodingSettings(method="beam", beam=4)).trace
    assert (hesitated(beam) is None) == all(float(beam.probs(s)[beam.out_id(s)]) >= HESITATION
                                             for s in range(beam.n_steps))
    sure = translate(lm, "I love you.", DecodingSettings()).trace
    assert min(float(sure.probs(s)[sure.out_id(s)]) for s in range(sure.n_steps)) >= HESITATION
    assert hesitated(sure) is None
    assert hesitated(translate(lm, sentence, DecodingSettings(method="sample", temperature=1.5)).trace) is None
    assert hesitated(translate(lm, sentence, target="Le trophée était trop grand.").trace) is None


def test_unknown_pieces_of_a_given_target_are_counted_apart_from_the_input(tiny_lm):
    """A target with emoji showed "�� ceci n'est pas une pipe" and no note, where the same emoji in the English
    field got one: the note counts the input's and the given target's unknown pieces, each by name."""
    from model import translate as translate_seed
    from model.notes import unknown_pieces

    run = translate_seed(tiny_lm, "the cat sat", target="le chat 😀 #")
    n = run.trace.tgt_tokens.count("<unk>")
    assert n == 2 and unknown_pieces(run.trace).startswith(
        "2 pieces of the given target are unknown to the model (shown as <unk>, and as � in the text): ")
    assert "�" in run.text                           # where the translation's line shows them (QA)
    both = translate_seed(tiny_lm, "the 😀 cat", target="le chat 😀").trace
    assert unknown_pieces(both) == ("1 piece of the input and 1 piece of the given target are unknown to the model "
                                     "(shown as <unk>, and as � in the text): “😀” (2 times) is outside its "
                                     "vocabulary: the model reads <unk> for it.")
    assert unknown_pieces(translate_seed(tiny_lm, "the cat", target="le chat").trace) is None


@pytest.mark.parametrize("family", ["gpt2", "marian", "bert"])
def test_a_hugging_face_models_unknown_words_are_named_and_a_given_targets_counted_whole(family, tmp_path):
    """QA: `metrics --target "zzz qqq"` on a decoder-only model counted 1 unknown piece of 2 (the rows' own tokens
    lack the last one), and a word-level vocabulary's unknown word "zzz" was blamed on emoji, unnamed: the note
    names what a fast tokenizer read as its unknown token, and counts a given target's pieces as the model read
    them."""
    from model.notes import unknown_pieces
    lm = load(hf_tiny.build(family, tmp_path / family))
    trace = translate(lm, "the cat zzz sat", DecodingSettings()).trace
    assert trace.meta["unknown"] == ["zzz"]
    assert unknown_pieces(trace) == ("1 piece of the input is unknown to the model (shown as <unk>): “zzz” is "
                                     "outside its vocabulary: the model reads <unk> for it.")
    if family != "bert":                        # a masked-word model takes no target
        given = translate(lm, "the cat", DecodingSettings(), target="zzz qqq").trace
        assert given.meta["unknown"] == [] and unknown_pieces(given) == (      # named, as the input's (QA)
            "2 pieces of the given target are unknown to the model (shown as <unk>, and as � in the text): “zzz”, "
            "“qqq” are outside its vocabulary: the model reads the same <unk> for each.")


def test_a_masked_word_model_is_never_said_to_repeat_itself(tmp_path):
    """A BERT's top token at every position ("red red red red …" under a text with no [MASK] at all) was read as a
    loop, "The model repeats itself (“red” 4 times in a row)": it writes no sequence, it fills its masks."""
    from model.notes import REPEATS, repeats_itself, result_notes
    bert = load(hf_tiny.build("bert", tmp_path / "bert"))
    trace = translate(bert, "the cat sees the mat", DecodingSettings()).trace
    assert trace.out_tokens[:REPEATS] == ["red"] * REPEATS           # what had been taken for a loop
    assert repeats_itself(trace) is None and not any("repeats itself" in n for n in result_notes(trace, 64))


def test_a_loop_is_quoted_from_a_piece_that_starts_a_word():
    """en-de wrote "ein hello-vo-vo-vo-vo-" for "Hello" and the note quoted “o -v”, found nowhere in it: the
    loop's pieces (## o, -, ## v) are quoted from the piece that does not continue a word, “-vo”."""
    from model.notes import repeats_itself
    trace = translate(load("en-de"), "Hello", DecodingSettings()).trace
    assert "".join(trace.out_tokens).count("-##v##o") >= 3       # the model's loop, as the bundled weights write it
    assert "(“-vo” " in repeats_itself(trace)


def test_a_translation_cut_at_its_length_limit_is_said_to_be_cut_not_finished(tmp_path):
    """QA: T5 wrote "book" 511 times for a 1,400-word text and nothing said the output had been cut at the limit,
    not ended by the model. en-de loops on "Hello" until its limit (2 × 3 source tokens + 10)."""
    from model.notes import cut_off, result_notes
    de = load("en-de")
    looped = translate(de, "Hello", DecodingSettings()).trace
    assert len(looped.out_tokens) == 16 and "</s>" not in looped.out_tokens
    note = ("The translation stopped at its length limit (16 tokens) before the model wrote its end token (</s>): "
            "it is unfinished.")
    assert cut_off(looped) == note and note in result_notes(looped, de.cfg.max_len)
    ended = translate(load("en-fr"), "Hello", DecodingSettings()).trace
    assert ended.out_tokens[-1] == "</s>" and cut_off(ended) is None
    given = translate(de, "Hello", DecodingSettings(), target="hallo hallo hallo").trace
    assert cut_off(given) is None                                      # the user's own target: nothing was cut
    gpt2 = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    assert cut_off(translate(gpt2, "the cat", DecodingSettings()).trace) is None     # a continuation's length is set


def test_an_unlikely_continuation_is_not_called_a_translation(tmp_path):
    """GPT-2 teacher-forced on a target kept from a translator was asked "is it this sentence's translation?"."""
    from model.notes import unlikely_target
    gpt2 = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    trace = translate(gpt2, "the cat", DecodingSettings(), target="big house bread mat red").trace
    note = unlikely_target(trace)
    assert note is not None and "after this prompt" in note and "translation" not in note


def test_typographic_quotes_reach_the_model_as_plain_ones_and_unknown_characters_are_named(tmp_path, tiny_model_factory):
    """Quotes from a slide (“Stop!”) reached en-fr as two <unk> and spoilt the translation, and the note spoke of
    emoji where the unknown characters were ä and ß. A quote or dash the vocabulary lacks is read as its plain
    form; the note names what stays unknown."""
    from model.notes import MAX_NAMED, unknown_pieces
    from model.tokenizer import TextTokenizer
    tok = TextTokenizer.train(['"the cat" sat - on the mat', 'a "dog" - sees the cat'] * 20, vocab_size=60)
    assert tok.encode("“the cat” — sat") == tok.encode('"the cat" - sat') and tok.unknown_parts("“the cat”") == []
    assert tok.encode("»the cat« «sat»") == tok.encode('"the cat" "sat"')      # German and French quotes too
    assert UNK_ID not in tok.encode("“the cat”") and UNK_ID in tok.encode("the ⟨cat⟩")    # not a quote it maps
    lm = load(tiny_model_factory(tmp_path / "m"))
    trace = translate(lm, "the cat 🍕 sat ß", DecodingSettings()).trace
    assert trace.meta["unknown"] == ["🍕", "ß"] == lm.src_tok.unknown_parts("the cat 🍕 sat ß")
    assert unknown_pieces(trace) == ("2 pieces of the input are unknown to the model (shown as <unk>): “🍕”, “ß” are "
                                     "outside its vocabulary: the model reads the same <unk> for each.")
    one = translate(lm, "the cat 🍕", DecodingSettings()).trace
    assert unknown_pieces(one).endswith(": “🍕” is outside its vocabulary: the model reads <unk> for it.")
    # each character with how often it came ("3 pieces … “ä” is" read as a miscount), right-to-left ones isolated
    again = translate(lm, "the ß cat ß sat ß", DecodingSettings()).trace
    assert unknown_pieces(again) == ("3 pieces of the input are unknown to the model (shown as <unk>): “ß” (3 times) "
                                     "is outside its vocabulary: the model reads <unk> for it.")
    rtl = translate(lm, "the cat ש sat", DecodingSettings()).trace
    assert ": “\u2068ש\u2069” is outside" in unknown_pieces(rtl)
    many = translate(lm, " ".join("🍕🍣🍔🌮🍜🥐🍩"), DecodingSettings()).trace
    assert len(set(many.meta["unknown"])) > MAX_NAMED and unknown_pieces(many).count("“") == MAX_NAMED
    assert " … are outside" in unknown_pieces(many)


def test_the_loop_quoted_is_the_one_that_covers_most_of_the_output(tiny_lm):
    """"h" 3 times was quoted where "vo" followed 8 times (QA re-check)."""
    import dataclasses

    from model import translate as translate_seed
    from model.notes import repeats_itself
    plain = translate_seed(tiny_lm, "the cat sat").trace
    out = ["le", "h", "h", "h", "-", "##v", "##o"] + ["-", "##v", "##o"] * 7 + ["</s>"]
    assert "(“-vo” 8 times in a row)" in repeats_itself(dataclasses.replace(plain, out_tokens=out))


def test_invisible_characters_inside_a_word_leave_it_whole():
    """A soft hyphen (pasted from a web page or a PDF) reached en-fr as <unk> ("tea\\u00adcher": "Le thé de la
    réception"), and a zero-width joiner, non-joiner or word joiner as a space ("re\\u200cd car" lost "red");
    control characters still part words."""
    from model.text import clean_text
    for joined in ("tea\u00adcher", "tea\u200bcher", "tea\u200ccher", "tea\u200dcher", "tea\u2060cher",
                   "tea\ufeffcher", "tea\u200fcher", "tea\u061ccher"):
        assert clean_text(f"The {joined} is nice.") == "The teacher is nice.", repr(joined)
    assert clean_text("two\tlines\nhere\x00now") == "two lines here now"
    assert clean_text("I \u2764\ufe0f pizza") == "I \u2764 pizza"      # an emoji's variation selector goes too
    from model.notes import quoted
    assert (quoted("\u0301"), quoted("ä")) == ("U+0301", "“ä”")        # an invisible one named by its code point
    assert quoted("\tx") == "“⇥x”" and quoted("a\nb") == "“a↵b”"       # a tab had been quoted “ x” (QA)
    assert clean_text("\u00ad\u200b \u2060") == ""


def test_a_text_in_capitals_gets_a_note_from_a_cased_model_only():
    """QA: "THE CHILDREN ARE PLAYING IN THE GARDEN." came out "PNICORICORENIIIIIIN.DN, j'ai PN." from en-fr with a
    note on repetition only; en-de lowercases what it reads, and a name in capitals is no such text."""
    from model.notes import in_capitals, result_notes
    fr, de = load("en-fr"), load("en-de")
    shouting = "THE CHILDREN ARE PLAYING IN THE GARDEN."
    trace = translate(fr, shouting).trace
    assert in_capitals(trace) == ("The text is in capital letters, which this model rarely read: its output for it "
                                  "may be garbled. Type it in normal case (“The cat sat on the mat.”).")
    assert result_notes(trace, fr.cfg.max_len)[0] == in_capitals(trace)
    assert not any(n.startswith("The model hesitated") for n in result_notes(trace, fr.cfg.max_len))
    assert in_capitals(translate(fr, "I LOVE IT").trace) is not None
    for text in ("I love NASA and the BBC.", "OK.", "NASA", "123 456", "The children are playing.",
                 "مرحبا بالعالم", "שלום עולם", "NASA مرحبا بالعالم"):    # no case: no capitals (QA)
        assert in_capitals(translate(fr, text).trace) is None, text
    assert in_capitals(translate(de, shouting).trace) is None                   # it reads "the children …"


def test_sampling_at_a_high_temperature_says_the_output_is_mostly_chance(tiny_lm):
    """QA: sampled at T = 2.5, en-fr wrote gibberish ("façons, refuser satisfaitveille …") with no word on why."""
    from model.notes import HOT, hot_sampling, result_notes
    sentence = "the cat sat on the mat"
    for t in (HOT, 2.5):
        trace = translate(tiny_lm, sentence, DecodingSettings(method="sample", temperature=t, seed=1)).trace
        assert hot_sampling(trace) == (f"Sampled at T = {t:g}, the output is mostly chance: a high temperature "
                                       "flattens the output distribution, so unlikely tokens are often picked. T = 1 "
                                       "samples as the model learnt; below 1, closer to its first choices.")
        assert hot_sampling(trace) in result_notes(trace, tiny_lm.cfg.max_len)
        assert not any(n.startswith("The model hesitated") for n in result_notes(trace, tiny_lm.cfg.max_len))
    for settings in (DecodingSettings(method="sample", temperature=1.4, seed=1),
                     DecodingSettings(method="greedy", temperature=3.0), DecodingSettings(method="beam", beam=2)):
        assert hot_sampling(translate(tiny_lm, sentence, settings).trace) is None


def test_the_worked_example_says_under_every_result_that_it_is_no_translator(tiny_lm):
    """QA took seed-example for a third translator ("sat sat sat …"); its loop note did not say why."""
    from model.notes import result_notes, worked_example
    example = load("seed-example")
    trace = translate(example, "The cat sat on the mat").trace
    assert result_notes(trace, 64) == [worked_example(trace)]
    assert worked_example(trace).startswith("This is the math notes' worked example, not a translator:")
    assert worked_example(translate(tiny_lm, "the cat sat on the mat").trace) is None


def test_a_model_that_computes_nan_is_named_for_it_not_for_untrained_weights(tmp_path):
    """QA: one NaN in GPT-2's first attention weights: the heatmap hatched the head as masked, the note blamed
    "random or untrained weights", and `metrics` wrote an entropy of 0.0 bits for it."""
    import numpy as np
    from safetensors.torch import load_file, save_file

    from model.analysis.metrics import trace_metrics
    from model.notes import not_a_number, result_notes
    folder = hf_tiny.build("gpt2", tmp_path / "gpt2")
    weights = load_file(folder / "model.safetensors")
    key = next(k for k in weights if k.endswith("h.0.attn.c_attn.weight"))
    weights[key][0, 0] = float("nan")
    save_file(weights, folder / "model.safetensors", {"format": "pt"})
    lm = load(folder)
    trace = translate(lm, "the cat sat on the mat", DecodingSettings(max_new=3)).trace
    note = not_a_number(trace)
    assert note is not None and note.startswith("The model computed NaN or infinite numbers, first in ")
    # where it entered, in the panels' words: the note said "enc.1.self.residual", 0-based and not the first (QA)
    stack = trace.schema.stacks[0]
    attention = next(sl for sl in stack.sublayers if sl.attention)
    assert f"first in the {stack.title.lower()}'s layer 1, {attention.name}:" in note
    assert note.endswith("(attention heatmaps draw a NaN weight in cyan).")
    notes = result_notes(trace, lm.cfg.max_len)
    assert notes[0] == note and not any("untrained" in n for n in notes)
    first = next(r for r in trace_metrics(trace) if (r.layer, r.head) == (1, 1))     # the head the NaN enters
    assert np.isnan(first.entropy_bits) and np.isnan(first.max_weight)
    clean = translate(load(hf_tiny.build("gpt2", tmp_path / "clean")), "the cat sat on the mat",
                      DecodingSettings(max_new=3)).trace
    assert not_a_number(clean) is None and all(np.isfinite(r.entropy_bits) for r in trace_metrics(clean))


def test_an_end_token_forced_at_the_length_limit_is_said_and_not_called_a_hesitation(tmp_path):
    """BART and Marian folders force the end token at the length limit (forced_eos_token_id): its p under the
    model's own distribution is tiny, and the hesitation note blamed the model for a token it never chose."""
    from model.notes import forced_end, hesitated
    lm = load(hf_tiny.build("bart", tmp_path / "bart"))
    cut = translate(lm, "the cat sat on the mat", DecodingSettings(max_new=4)).trace
    last = len(cut.out_tokens) - 1
    assert cut.meta["forced_end"] == last and cut.out_tokens[last] == "</s>"
    assert float(cut.probs(last)[cut.out_id(last)]) < 0.2          # what the hesitation note took for the model's
    assert forced_end(cut) == (f"The output reached its length limit ({last + 1} tokens), where the model's settings "
                               "force the end token: its last token (“</s>”) was not the model's choice, and the "
                               "output may be cut short.")
    assert hesitated(cut) is None or f"step {last}" not in hesitated(cut)
    lm.model.generation_config.forced_eos_token_id = None          # the same run, nothing forced: no such note
    free = translate(lm, "the cat sat on the mat", DecodingSettings(max_new=4)).trace
    assert "forced_end" not in free.meta and forced_end(free) is None


def test_invisible_direction_controls_are_named_and_left_out_of_figure_titles(tiny_lm):
    """"The red \\u202ecar is\\u202c fast." shows as "The red si rac fast." in the field and had in figure titles,
    while the model reads "car is" (QA): a note names the controls (tests/visualizer/test_export.py: the titles)."""
    from model.notes import direction_controls, result_notes
    typed = "the red \u202ecar is\u202c fast"
    trace = translate(tiny_lm, typed).trace
    note = direction_controls(trace)
    assert note == ("The text holds invisible direction controls (U+202E, U+202C): the field shows part of it in "
                    "another order than it was typed; the model reads it as typed, in the axes' order.")
    assert note in result_notes(trace, tiny_lm.cfg.max_len)
    assert direction_controls(translate(tiny_lm, "the red car is fast").trace) is None
    # left-to-right controls, and isolates around Latin text (a note's own quotes, pasted back), reorder nothing
    assert direction_controls(translate(tiny_lm, "the \u2066red\u2069 car \u2068is\u2069 fast").trace) is None


def test_a_cut_text_is_named_as_the_model_reads_it():
    """The window said "The sentence is longer …" of a decoder-only model's prompt, the commands "the text was cut
    to …" in lower case (QA): one sentence for both, naming a translator's sentence, a prompt or a masked-word text."""
    from model.families.shapes import decoder_only, encoder_decoder, encoder_only
    from model.notes import cut_to_length
    said = {layout.__name__: cut_to_length(layout("x", 2, 32, 4, 64) if layout is not encoder_decoder
                                           else layout("x", 2, 2, 32, 4, 64), "the model's 64 tokens", 3)
            for layout in (decoder_only, encoder_decoder, encoder_only)}
    assert said == {"decoder_only": "The prompt is longer than the model's 64 tokens: the last 3 token(s) were cut.",
                    "encoder_decoder": "The sentence is longer than the model's 64 tokens: the last 3 token(s) were "
                                       "cut.",
                    "encoder_only": "The text is longer than the model's 64 tokens: the last 3 token(s) were cut."}


def test_a_run_on_blank_text_has_the_made_up_note_in_the_api_too(tiny_lm):
    """translate(lm, "") in a notebook returned a confident translation, and result_notes gave only a hesitation
    (QA, a researcher): a blank text's run has the window's one note, that its output is made up from nothing."""
    from model import translate as translate_seed
    from model.notes import blank_note, result_notes
    for text in ("", "   "):
        trace = translate_seed(tiny_lm, text).trace
        assert result_notes(trace, 64) == [blank_note(trace, text)]
        assert result_notes(trace, 64)[0].startswith("The translation is made up from nothing: ")
    assert blank_note(trace, "") not in result_notes(translate_seed(tiny_lm, "the cat sat").trace, 64)


def test_an_invisible_space_inside_a_word_is_named_with_the_word_the_model_reads(tiny_lm):
    """"are\u200bplaying", pasted from a web page, reached en-fr as the one unknown word "areplaying", with nothing on
    screen to say why (QA). A zero-width character between letters is named; one beside a space parts nothing."""
    from model import translate
    from model.notes import hidden_joins, result_notes
    run = translate(tiny_lm, "the cat\u200b sat on\u200bthe mat")
    note = ("The text holds an invisible character (U+200B) inside a word: the model reads “onthe” as one word; "
            "type a space there where two words are meant.")
    assert hidden_joins(run.trace) == note and note in result_notes(run.trace, tiny_lm.cfg.max_len)
    assert hidden_joins(translate(tiny_lm, "the cat\u200b sat on the mat").trace) is None
