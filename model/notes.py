"""Notes about a result that its reader should have, shared by the window and the commands."""
from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

import numpy as np

from .families.seed_schema import NAME as SEED
from .schema import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY
from .text import DIRECTION_CONTROLS, REORDERING_CONTROLS, VISIBLE_CONTROLS, blank, probability, why_blank
from .training_words import words

LONG_SOURCE = 20          # tokens: a source at least this long, translated into under half as many, gets a note


def stopped_early(trace) -> str | None:
    """A note when a translation is under half as many tokens as a long source: small models trained on short
    sentences often end a long one early, and a class should not take the half for the whole. None for a short
    source, a decoder-only or encoder-only model, a user's own target and a partial result."""
    n_src, n_out = len(trace.src_tokens), len(trace.out_tokens)
    if (trace.schema.layout != ENCODER_DECODER or trace.meta.get("mode") == "teacher-forced"
            or trace.meta.get("partial") or n_src < LONG_SOURCE or 2 * n_out >= n_src):
        return None
    tokens = "token" if n_out == 1 else "tokens"
    return (f"The translation is much shorter than the sentence ({n_out} {tokens} for {n_src}): this small model "
            "may have stopped early. Try the sentence in shorter parts.")


def prompt_fills(trace, max_len: int) -> str | None:
    """A note when a decoder-only model's prompt took (nearly) all of its positions, so that it could write
    (almost) nothing: a 3,000-character paste generated one token, and only "the text was cut" was said."""
    given = trace.prompt_rows()
    if trace.schema.layout != DECODER_ONLY or trace.meta.get("partial") or given < max_len - 2:
        return None
    written = max(0, len(trace.out_tokens) - given)
    tokens = "token" if written == 1 else "tokens"
    return (f"The prompt fills the model's {max_len} positions: it had room to write {written} {tokens}. "
            "Shorten the text to see it continue.")


def first_step(trace) -> int:
    """The output row a run is best opened at: a decoder-only model's first written token (the rows before it
    read the prompt), a masked-word model's first mask (the rows before it repeat their own tokens); 0 else."""
    last = max(trace.n_steps - 1, 0)
    if trace.schema.layout == DECODER_ONLY:
        return min(trace.prompt_rows(), last)
    mask = trace.schema.special.get("mask")
    if trace.schema.layout == ENCODER_ONLY and mask:
        rows = trace.tokens(trace.schema.output_stack.tokens)
        return min(rows.index(mask), last) if mask in rows else 0
    return 0


def given_tokens(trace) -> list[str]:
    """The pieces the input was read as: the source's, or a decoder-only model's prompt's."""
    return trace.tgt_tokens[: trace.prompt_rows() + 1] if trace.schema.layout == DECODER_ONLY else trace.src_tokens


def unknown_pieces(trace) -> str | None:
    """A note when the input holds the model's unknown token: emoji and letters outside its vocabulary all reach it
    as that one token ("I love pizza 🍕" read "pizza <unk>"), and only an axis label showed it."""
    unk = trace.schema.special.get("unk", "<unk>")
    n = sum(t == unk for t in given_tokens(trace))
    forced = trace.meta.get("mode") == "teacher-forced" and trace.schema.layout != ENCODER_ONLY
    # the given target's pieces are the rows' next tokens: the rows' own tokens lack a decoder-only model's last one
    # ("zzz qqq" counted 1 unknown piece, QA)
    target = trace.out_tokens[trace.prompt_rows():] if trace.schema.layout == DECODER_ONLY else trace.out_tokens
    n_target = sum(t == unk for t in target) if forced else 0     # a target's emoji read "�", with no word
    if not n + n_target or trace.meta.get("partial"):
        return None
    parts = [f"{k} piece{'s' if k > 1 else ''} of the {where}"
             for k, where in ((n, "input"), (n_target, "given target")) if k]
    verb = "is" if n + n_target == 1 else "are"
    # a given target's unknown piece reads "�" in the translation's line (QA: the note said "<unk>" only)
    shown = f"shown as {unk}" + (", and as � in the text" if n_target else "")
    counts = Counter(str(u) for u in trace.meta.get("unknown") or []) if n else Counter()
    if n_target:                 # the target's unknown parts named too (it counted them and named none, QA)
        counts.update(str(u) for u in trace.meta.get("unknown_target") or [])
    distinct = list(counts)                     # in the order they came
    named = distinct[:MAX_NAMED]
    if named:                    # a teacher was told about emoji when the unknown characters were “ß” and “ä”
        # each with how often it came when more than once ("3 pieces … “ä” is" read as a miscount, QA)
        listed = ", ".join(quoted(u) + (f" ({counts[u]} times)" if counts[u] > 1 else "") for u in named)
        more = " …" if len(distinct) > MAX_NAMED else ""
        ending = "is outside its vocabulary: the model reads {unk} for it" if len(distinct) == 1 else \
            "are outside its vocabulary: the model reads the same {unk} for each"
        return f"{' and '.join(parts)} {verb} unknown to the model ({shown}): {listed}{more} {ending.format(unk=unk)}."
    # a word-level vocabulary's unknown words were blamed on emoji (QA)
    return (f"{' and '.join(parts)} {verb} unknown to the model ({shown}): words and characters outside its "
            "vocabulary (an emoji, a letter it never saw) all reach it as that one token.")


MAX_NAMED = 5              # unknown parts of an input a note names


LONGEST_QUOTED = 32          # characters of a word a note quotes whole; a longer one keeps its two ends


def quoted(text: str) -> str:
    """“text”, with right-to-left text isolated (U+2068 … U+2069) from the note around it: the bidi algorithm drew
    “ש”, “ל” as ”ל“ ,”ש“ (QA). A word longer than LONGEST_QUOTED keeps its ends around “…”: a note quoting a
    160-letter word ran past the window's edge, cut there mid-word with its end and the claim after it (QA)."""
    if text and all(unicodedata.category(c) in ("Cf", "Cc", "Mn", "Zs", "Zl", "Zp") for c in text):
        return " ".join(f"U+{ord(c):04X}" for c in text)       # an invisible one by its code point, not “”
    text = text.translate(str.maketrans(VISIBLE_CONTROLS))      # a tab inside a piece had been quoted “ x” (QA)
    if len(text) > LONGEST_QUOTED:
        keep = (LONGEST_QUOTED - 1) // 2
        text = f"{text[:keep]}…{text[-keep:]}"
    rtl = any(unicodedata.bidirectional(c) in ("R", "AL") for c in text)
    return f"“\u2068{text}\u2069”" if rtl else f"“{text}”"


def rare_words(trace) -> str | None:
    """A note naming the input's words that are in fewer than RARE (3) of the sentences the model learnt from
    (model/training_words.py): the bundled en-fr wrote "la célémme" for "cinema", a word in none of its 139,892
    English sentences, and a class read the attention of a guess as the model's knowledge. Its claim (before the
    colon, all a compact window shows, itself cut to a line in the most compact) names the words first, then how
    often the model read them; then what follows for a translation, or for the
    predictions along a given target (the target is the user's, not a guess). None for a model without word
    counts and a partial result."""
    rare, n = trace.meta.get("rare_words") or [], trace.meta.get("training_sentences")
    if not rare or not n or trace.meta.get("partial"):
        return None
    shown, left = rare[:MAX_NAMED], len(rare) - MAX_NAMED
    # the words first: a compact window cuts the claim to one line, and "In its 152,663 training sentences this …"
    # named none of them (QA in class)
    groups = [([quoted(w) for w, k in shown if k == c], c) for c in sorted({k for _, k in shown})]
    parts = []                # "“a” and “b” are in none of this model's 50 training sentences, and “c” in only one"
    for i, (names, c) in enumerate(groups):
        verb = (" is" if len(names) == 1 else " are") if i == 0 else ""
        where = f" of this model's {n:,} training sentences" if i == 0 else ""
        parts.append(f"{and_list(names)}{verb} in {TIMES.get(c, f'only {c:,}')}{where}")
    more = f" (and {left} more word{'s' if left > 1 else ''})" if left > 0 else ""
    one, unseen = len(rare) == 1, groups[-1][1] == 0
    if trace.meta.get("mode") == "teacher-forced":
        then = f"what it predicts for {'it' if one else 'them'} {'is a guess' if unseen and one else 'may be poor'}"
    else:
        then = (f"its translation {'is a guess' if unseen else 'may be wrong'}" if one else
                "their translations may be wrong")
    return f"{', and '.join(parts)}{more}: {then}."


TIMES = {0: "none", 1: "only one", 2: "only two"}


def rare_pieces(trace, which: str) -> set[int]:
    """The positions of a side's tokens ("src" or "tgt") that are pieces of a word the rare-word note names
    ("c ##ine ##ma" of “cinema”): the source's, the side the words were counted on; none for the target, a model
    without word counts or a partial result. The heatmaps mark them on their axes, so that a class sees which
    columns the guess is made of."""
    counts = _rare_counts(trace, which)
    if not counts:
        return set()
    tokens, spelled = trace.tokens(which), _spelled(trace, which)
    return {i for i in range(len(tokens)) if counts.keys() & words(word_of(tokens, i, spelled))}


def rare_word_at(trace, which: str, i: int) -> str | None:
    """What the rare-word note says of the word token i of a side belongs to, for a read-out of that token:
    "“cinema” is in none of the model's 139,892 training sentences"; None for a token of no such word."""
    counts = _rare_counts(trace, which)
    word = word_of(trace.tokens(which), i, _spelled(trace, which)) if counts else ""
    found = [counts[k] for k in words(word) if k in counts]
    if not found:
        return None
    many = f"{trace.meta.get('training_sentences') or 0:,}"
    amount = "none" if found[0] == 0 else f"only {found[0]}"
    return f"{quoted(word)} is in {amount} of the model's {many} training sentences"


def _spelled(trace, which: str) -> list[str]:
    """A side's pieces as the text they stand for: "<unk>" as the character it replaced ("Ω" of "Ωmega", which the
    source reads "␣ <unk> ##me ##g ##a"), so that such a word is found among its pieces too."""
    unknown = iter(str(u) for u in trace.meta.get("unknown") or []) if which == "src" else iter(())
    unk = trace.schema.special.get("unk", "<unk>")
    return [next(unknown, t) if t == unk else t for t in trace.tokens(which)]


def _rare_counts(trace, which: str) -> dict[str, int]:
    """The words the rare-word note names, as counted (casefolded), with their counts: the source's only."""
    if which != "src" or trace.meta.get("partial"):
        return {}
    return {k: n for w, n in trace.meta.get("rare_words") or [] for k in words(w)}


def and_list(items: list[str]) -> str:
    """“a”, “a and b”, “a, b and c”."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def nothing_written(trace) -> str | None:
    """A note when a generated output holds special tokens only ("<pad>" 24 times, or the end at once): the
    command printed an empty line and the window an empty translation, with no word on why. A model with random or
    untrained weights does this. None for a given target, an encoder-only model and a partial result."""
    if (trace.schema.layout == ENCODER_ONLY or trace.meta.get("mode") == "teacher-forced"
            or trace.meta.get("partial")):
        return None
    specials = set(trace.schema.special.values())
    written = trace.out_tokens[trace.prompt_rows():]
    if any(t not in specials for t in written):
        return None
    counts = ", ".join(f"“{t}” × {written.count(t)}" for t in dict.fromkeys(written))
    return (f"The model wrote no text, only special tokens ({counts or 'none'}): models with random or "
            "untrained weights do this.")


def cut_to_length(schema, length: str, truncated: int) -> str:
    """What the window and the commands say of a text cut to the model's length, naming it as the model reads it:
    a sentence (a translator), a prompt (a decoder-only model) or a text (a masked-word model). The commands had said
    "the text was cut to …" in lower case, the window "The sentence is longer …" of a prompt too (QA)."""
    what = {DECODER_ONLY: "prompt", ENCODER_ONLY: "text"}.get(schema.layout, "sentence")
    return f"The {what} is longer than {length}: the last {truncated} token(s) were cut."


def model_length(lm) -> str:
    """"the model's 128 tokens", and what sets that length where its positions do not (a local or sliding attention
    window: see the Hugging Face families' cut_by)."""
    why = getattr(lm.cfg, "cut_by", "")
    return f"the model's {lm.cfg.max_len} tokens" + (f" ({why})" if why else "")


def not_a_number(trace) -> str | None:
    """A note when the run computed NaN or infinite numbers (weights that hold them, a half-precision model that
    overflowed), naming the first array in the order the trace keeps them: the panels drew NaN attention as
    masked cells and the note blamed "random or untrained weights" (QA). None when every number is finite."""
    bad = [key for key, array in trace.arrays.items()
           if (a := np.asarray(array)).dtype.kind == "f" and a.size and not np.isfinite(a).all()]
    if not bad:
        return None
    return (f"The model computed NaN or infinite numbers, first in {first_place(trace.schema, bad)}: its weights hold "
            "such numbers, or a half-precision model overflowed. What the panels show from there on is not "
            "meaningful (attention heatmaps draw a NaN weight in cyan).")


def first_place(schema, keys: list[str]) -> str:
    """The first of the trace's keys in the pipeline's order, in the panels' words ("the encoder's layer 2,
    self-attention"): the note named "enc.1.self.residual", the trace's own 0-based name, and not the first array
    that held NaN (its q came before it; QA). A key of no stack and layer is named as it is."""
    stacks = list(schema.stacks)

    def place(key: str):
        parts = key.split(".")
        for i, st in enumerate(stacks):
            title = st.title.lower()
            if parts[0] == st.tokens:                                  # "src.x", "tgt.embedding"
                return (i, -1, 0), f"the {title}'s input embedding"
            if parts[0] != st.key:
                continue
            if len(parts) >= 3 and parts[1].isdigit():                 # "enc.1.self.q"
                subs = [sl.key for sl in st.sublayers]
                j = subs.index(parts[2]) if parts[2] in subs else len(subs)
                name = f", {st.sublayers[j].name}" if j < len(subs) else ""
                return (i, int(parts[1]), j), f"the {title}'s layer {int(parts[1]) + 1}{name}"
            return (i, st.n_layers, 0), f"the {title}'s output"          # "dec.out"
        return (len(stacks), 0, 0), "the output layer" if parts[0] in ("logits", "probs") else key
    return min((place(k) for k in keys), key=lambda p: p[0])[1]


REPEATS = 3               # a block of words written this many times in a row is a loop
MARK_REPEATS = 8          # … and a block of punctuation marks this many times (a GPT-2 wrote 20 dots; "!!!" is none)
PHRASE_REPEATS = 2        # … and a block of two words or more this many ("es regnet es regnet?" went unsaid, QA),
# when the text repeats no word but these: "Hand in hand in…", "What is done is done" ("Ce qui est fait est fait."),
# "Call a spade a spade" repeat theirs on purpose
GLUE_WORDS = frozenset("the a an and or of to in on at by for with from is are was it".split())
BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")    # a byte-fallback piece: no text of its own to name


def repeats_words(text: str) -> bool:
    """Whether a text has a word twice, but for GLUE_WORDS (casefolded)."""
    seen = Counter(w for w in words(text) if w not in GLUE_WORDS)
    return any(n > 1 for n in seen.values())


def worked_example(trace) -> str | None:
    """A note under every result of the built-in seed example: a class took it for a third translator ("sat sat
    sat …"), and what it is was a status-bar message of ten seconds, cut at the window's edge (QA)."""
    if trace.meta.get("model") != "seed-example" or trace.meta.get("partial"):
        return None
    return ("This is the math notes' worked example, not a translator: 2 numbers per token and one head, its weights "
            "set by hand for “The cat sat on the mat”. Its output is no translation; pick en-fr or en-de in Model "
            "to translate.")


HOT = 1.5                 # a sampling temperature from which a note says the output is mostly chance


def hot_sampling(trace) -> str | None:
    """A note when the output was sampled at a high temperature: QA sampled at T = 2.5 and got gibberish with no
    word on why. None for greedy and beam search (T only colours the output distribution there)."""
    found = re.fullmatch(r"sampled, T = ([0-9.]+).*", str(trace.meta.get("decoding", "")))
    if not found or float(found.group(1)) < HOT or trace.meta.get("partial"):
        return None
    return (f"Sampled at T = {found.group(1)}, the output is mostly chance: a high temperature flattens the "
            "output distribution, so unlikely tokens are often picked. T = 1 samples as the model learnt; below 1, "
            "closer to its first choices.")


def repeats_itself(trace) -> str | None:
    """A note when the output loops ("es regnet es regnet es regnet."): a block of 1 to 4 pieces written REPEATS
    times or more in a row (MARK_REPEATS for punctuation alone; never for byte pieces, which show no text). Small
    models do so on sentences unlike the ones they learned from; a class should see that it is the model's
    failure, not the language's. None for a given target, a partial result, or a masked-word model (it writes no
    sequence: its top token at every position, [CLS] and the words it was given included, read as a loop)."""
    if (trace.meta.get("mode") == "teacher-forced" or trace.meta.get("partial")
            or trace.schema.layout == ENCODER_ONLY):
        return None
    specials = set(trace.schema.special.values())     # "<pad>" 24 times is no text (see nothing_written)
    phrases = not repeats_words(str(trace.meta.get("sentence", "")))
    out = [t for t in trace.out_tokens[trace.prompt_rows():] if t not in specials]
    loops = []          # (pieces covered, -k, start, block, n): the loop that covers most is quoted ("vo" 8 times,
    for k in range(1, 5):                                    # not an "h" 3 times before it)
        for i in range(len(out) - k * PHRASE_REPEATS + 1):
            block = out[i:i + k]
            if any(BYTE_PIECE.fullmatch(t) for t in block):
                continue                                     # "<0x0B>": the printed text does not show it
            wordy = any(any(c.isalnum() for c in t) for t in block)
            # ("vous vous" is French, and "Bor ##a Bor ##a" one word twice: a phrase of two words is no such thing)
            phrase = phrases and sum(any(c.isalnum() for c in t) and not t.startswith("##") for t in block) >= 2
            n = 1
            while out[i + n * k:i + (n + 1) * k] == block:
                n += 1
            if n >= (PHRASE_REPEATS if phrase else REPEATS if wordy else MARK_REPEATS):  # "!!!" is no loop
                loops.append((n * k, -k, i, block, n))
    if not loops:
        return None
    _, _, _, block, n = max(loops, key=lambda loop: (loop[0], loop[1], -loop[2]))
    # quoted from a piece that starts a word where the loop has one: "-vo", not "o -v" (## o - ## v)
    starts = [j for j, piece in enumerate(block) if not piece.startswith("##")]
    block = block[starts[0]:] + block[:starts[0]] if starts else block
    words = " ".join(block).replace(" ##", "").removeprefix("##")
    return (f"The model repeats itself (“{words}” {n} times in a row): small models loop on "
            "sentences unlike the ones they learned from.")


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“'])")
# words with a full stop that end no sentence ("I met Mr. Smith at the station." read as two sentences, QA)
ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "prof", "jr", "sr", "mt", "vs", "etc", "e.g", "i.e", "no", "approx",
                 "u.s", "u.k", "a.m", "p.m", "mme", "mlle", "m"}


def direction_controls(trace) -> str | None:
    """A note when the text holds invisible direction controls: "The red \u202ecar is\u202c fast." shows as "The red
    si rac fast." in the field, while the model reads "car is", as the axes show (QA)."""
    sentence = str(trace.meta.get("sentence", ""))
    found = dict.fromkeys(DIRECTION_CONTROLS.findall(sentence))
    if not REORDERING_CONTROLS.search(sentence) or trace.meta.get("partial"):
        return None
    names = ", ".join(f"U+{ord(c):04X}" for c in found)
    which = "an invisible direction control" if len(found) == 1 else "invisible direction controls"
    return (f"The text holds {which} ({names}): the field shows part of it in another order than it was typed; "
            "the model reads it as typed, in the axes' order.")


# invisible characters that the model's reading removes (text.FORMAT): between two letters they join two words
HIDDEN_JOIN = re.compile(r"(\w+)([\u200b\u2060\ufeff]+)(\w+)")


def hidden_joins(trace) -> str | None:
    """A note when an invisible zero-width space (or word joiner) stands between two letters: the model reads the
    text without it, so "are\u200bplaying", pasted from a web page, was the one unknown word "areplaying", and
    nothing on screen showed why (QA)."""
    sentence = str(trace.meta.get("sentence", ""))
    found = HIDDEN_JOIN.findall(sentence)
    if not found or trace.meta.get("partial") or trace.schema.family != SEED:   # (others read them their own way)
        return None
    names = ", ".join(dict.fromkeys(f"U+{ord(c):04X}" for _, marks, _ in found for c in marks))
    read = and_list([quoted(a + b) for a, _, b in found[:3]]) + (" …" if len(found) > 3 else "")
    return (f"The text holds an invisible character ({names}) inside a word: the model reads {read} as one word; "
            "type a space there where two words are meant.")


def several_sentences(trace) -> str | None:
    """A note when a translator is given several sentences (a paste): it learned from one at a time, and merged
    three into one wrong translation. A break counts after . ! or ? that ends a part of two or more words and
    before a capital or a digit ("Mr. Smith" is one sentence)."""
    if trace.schema.layout != ENCODER_DECODER or trace.meta.get("partial"):
        return None
    parts: list[str] = []
    for part in SENTENCE_END.split(" ".join(str(trace.meta.get("sentence", "")).split())):
        if parts and parts[-1].split() and parts[-1].split()[-1].rstrip(".").lower() in ABBREVIATIONS:
            parts[-1] += " " + part                  # "I met Mr." goes on with "Smith at the station."
        else:
            parts.append(part)
    n = 1 + sum(len(p.split()) >= 2 for p in parts[:-1])
    if n < 2:
        return None
    return (f"The text holds {n} sentences: this model learned from one sentence at a time and may merge or drop "
            "some. Translate them one by one.")


UNLIKELY_TARGET = 0.05     # a given target whose tokens the model gives less than this, on average, gets a note


def unlikely_target(trace) -> str | None:
    """A note when a given target (teacher forcing) is far from anything the model would write for the sentence:
    the geometric mean of its tokens' probabilities under 0.05. A target typed for one sentence stayed when the
    sentence changed, and showed as its "translation" with p = 0.00005 in a corner of the output panel. (The
    bundled en-fr gives its own and other right translations 0.18 to 0.89, other sentences' 0.003 to 0.025.)"""
    if trace.meta.get("mode") != "teacher-forced" or trace.meta.get("partial") or "logits" not in trace.arrays:
        return None
    logs = []
    for step in range(trace.n_steps):
        i = trace.out_id(step)
        if i is None:
            return None
        logs.append(math.log(max(float(trace.probs(step)[i]), 1e-300)))
    if not logs:
        return None
    mean = math.exp(sum(logs) / len(logs))
    if mean >= UNLIKELY_TARGET:
        return None
    if trace.schema.layout == DECODER_ONLY:          # a continuation, not a translation (QA with GPT-2)
        return (f"The model finds the given target very unlikely after this prompt (its tokens get p = {mean:.2g} "
                "each, on average). Clear the target to see the model's own continuation.")
    return (f"The model finds the given target very unlikely for this sentence (its tokens get p = {mean:.2g} each, "
            "on average): is it this sentence's translation? Clear the target to see the model's own.")


HESITATION = 0.2           # a translation step whose chosen token had under this probability gets a note


def hesitated(trace) -> str | None:
    """A note when a greedy or beam translation chose a token with p under 0.2 at some step: where a small model
    hesitates it is often wrong, and a class took every translation for right. On 400 validation sentences the
    bundled en-fr hesitated on 43, whose sentence BLEU averaged 23 against 58 for the rest, none of them matching a
    reference (en-de, on 300 Multi30k sentences: 52, 27 against 45). None for a given target, sampling (it draws
    unlikely tokens on purpose), a partial result and models that do not translate."""
    if (trace.schema.layout != ENCODER_DECODER or trace.meta.get("mode") not in ("greedy", "beam")
            or trace.meta.get("partial") or "logits" not in trace.arrays):
        return None
    chosen, forced = [], trace.meta.get("forced_end")         # (a token generate forced is not a hesitation)
    for step in range(trace.n_steps):
        i = trace.out_id(step)
        if i is not None and step != forced:
            chosen.append((float(trace.probs(step)[i]), step))
    low = sorted(c for c in chosen if c[0] < HESITATION)
    if not low:
        return None
    p, step = low[0]
    where = (f"at generation step {step}" if len(low) == 1 else
             f"at {len(low)} generation steps, most at step {step}")
    piece, word = trace.out_tokens[step], word_of(trace.out_tokens, step, glued=True)
    token = f"“{piece}”" + (f" of “{word}”" if word != piece else "")    # "trop" alone was read as the word trop
    return (f"The model hesitated {where} ({token}, p = {probability(p)}): a small model's translation is often wrong "
            "where it hesitates. The output distribution there shows what else it weighed.")


def forced_end(trace) -> str | None:
    """A note when generate ended the output at its length limit with the end token the model's folder forces
    there (forced_eos_token_id): the last token is not the model's choice, and the output may be cut short."""
    step = trace.meta.get("forced_end")
    if step is None or trace.meta.get("partial"):
        return None
    token = trace.out_tokens[step] if step < len(trace.out_tokens) else "the end token"
    return (f"The output reached its length limit ({step + 1} tokens), where the model's settings force the end "
            f"token: its last token (“{token}”) was not the model's choice, and the output may be cut short.")


def cut_off(trace) -> str | None:
    """A note when a generated translation reached its length limit without the model's end token: T5 read a
    1,400-word text and wrote "book" 511 times, and nothing said that the output had been cut, not ended. None for
    a given target, a decoder-only model (its continuation's length is a setting), an encoder-only model, a partial
    result and an end forced at the limit (forced_end says so)."""
    eos = trace.schema.special.get("eos")
    if (trace.schema.layout != ENCODER_DECODER or trace.meta.get("mode") == "teacher-forced" or not eos
            or trace.meta.get("partial") or trace.meta.get("forced_end") is not None or not trace.out_tokens
            or trace.out_tokens[-1] == eos):
        return None
    return (f"The translation stopped at its length limit ({len(trace.out_tokens)} tokens) before the model wrote "
            f"its end token ({eos}): it is unfinished.")


GLUE = ("'", "’", "-")     # pieces a translation's text joins to their neighbours: "l'entrée", "est-ce"


def word_of(tokens: list[str], i: int, spelled: list[str] | None = None, glued: bool = False) -> str:
    """The word piece i belongs to, its pieces joined ("trophée" for "trop" in "trop ##hée"); spelled: the pieces
    as the text they stand for (_spelled), where an unknown piece is to be read as its character. A word goes on
    over "##" pieces, after a bare word start ("␣", when the next character is not in the vocabulary) and over an
    unknown piece that no word start comes before ("cinemaΩ": "c ##ine ##ma <unk>"). glued: also over an apostrophe
    or hyphen, as the translation's text writes them ("l'entrée", not "'entrée", for "l ' ##entrée"; QA)."""
    def goes_on(j: int) -> bool:     # piece j belongs to the word of piece j - 1
        return 0 < j < len(tokens) and (tokens[j].startswith("##") or tokens[j - 1] == "␣" or (
            tokens[j] == "<unk>" and not re.fullmatch(r"</?\w+>|\[\w+\]", tokens[j - 1])) or (
            glued and (tokens[j] in GLUE or tokens[j - 1] in GLUE) and not re.fullmatch(r"</?\w+>", tokens[j - 1])))
    start, end = i, i
    while goes_on(start):
        start -= 1
    while goes_on(end + 1):
        end += 1
    pieces = spelled if spelled is not None else tokens
    return "".join(t[2:] if t.startswith("##") else "" if t == "␣" else t for t in pieces[start:end + 1])


# words that mark a language; none of English's, and none that are English words too ("a", "on", "die", "son")
MARKERS = {
    "French": {"le", "la", "les", "des", "est", "une", "et", "je", "tu", "il", "elle", "nous", "vous", "ils", "pas",
               "ne", "du", "au", "aux", "ce", "cette", "sont", "suis", "avec", "pour", "dans", "sur", "qui", "que",
               "mon", "ma", "mes", "très", "c", "j", "l", "d", "qu", "n", "où", "être", "avez", "ai",
               # a class's words ("Il fait froid aujourd'hui.", "Bonjour le monde !" had one marker each)
               "fait", "aujourd", "hui", "bonjour", "monde", "merci", "oui", "chien", "maison", "école",
               "professeur", "aime", "mange", "voiture", "rouge", "petit", "petite", "froid", "chaud", "faim",
               "aussi", "mais", "leur", "leurs", "ces", "cet", "sa", "ses", "élève", "élèves", "livre", "tableau"},
    "German": {"der", "das", "und", "ist", "ich", "nicht", "ein", "eine", "mit", "den", "dem", "zu", "sie", "wir",
               "ihr", "auf", "für", "von", "im", "sind", "bin", "es", "wo", "heute", "sehr", "ja", "nein", "du",
               "einem", "einen", "einer", "mann", "frau", "zwei", "drei", "hund", "kinder", "junge", "mädchen",
               "aus", "bei", "nach", "vor", "über",
               # a class's words ("Der Lehrer schreibt an die Tafel.", "Wir gehen morgen ins Kino." had one each)
               "lehrer", "lehrerin", "schule", "morgen", "gehen", "geht", "gern", "gerne", "mein", "meine", "dein",
               "bruder", "schwester", "spielt", "spielen", "ins", "zum", "zur", "guten", "tafel", "schreibt",
               "klasse", "kino", "haus", "buch", "katze", "wie", "wer", "warum", "auch", "aber", "oder", "noch",
               "schon", "haben", "habe", "wird", "kann", "muss", "jetzt", "hier"},
    "Spanish": {"el", "los", "las", "y", "es", "está", "una", "por", "con", "para", "del", "mi", "yo", "muy",
                "son", "estoy", "qué", "cómo", "dónde", "tengo",
                "hola", "gracias", "buenos", "días", "perro", "gato", "hoy", "mañana", "también", "pero", "sus",
                "nosotros", "tiene", "quiero", "hace", "frío", "escuela", "maestro", "maestra", "libro",
                "profesor", "profesora", "escribe", "pizarra", "llamo", "clase", "niños", "niño", "niña", "hermano",
                "hermana", "bien", "gusta", "ella", "ellos", "tiempo", "ahora", "aquí", "siempre", "soy", "eres"},
}
# letters of a language that English words do not have (é is French's and Spanish's both): each word with one counts
LETTERS = {"French": set("èêëàâçùûœîï"), "German": set("äöüß"), "Spanish": set("ñáíóú¿¡")}
ENGLISH = {"the", "a", "an", "is", "are", "was", "were", "i", "you", "he", "she", "we", "they", "it", "not", "of",
           "to", "in", "on", "with", "for", "this", "that", "my", "your", "and", "be", "have", "has", "do", "does",
           "what", "where", "at", "am", "me", "his", "her", "our", "s", "t"}
# en-fr, en-de, opus-mt-en-fr: they read English (the group: the language they write)
ENGLISH_SOURCE = re.compile(r"(?:^|[-_/])en-([a-z]{2,3})$")


def other_language(trace) -> str | None:
    """A note when a translator from English is given a text in French, German or Spanish (a student typed the
    translation into the English box): two different words of the other language's commonest, a quarter of the
    words or more, and under a third as many of English's. The output of such a text means little, and a class
    should know why."""
    model = str(trace.meta.get("model", "")).lower().rstrip("/")
    if trace.schema.layout != ENCODER_DECODER or not ENGLISH_SOURCE.search(model):
        return None
    words = re.findall(r"[^\W\d_]+", str(trace.meta.get("sentence", "")).lower())
    if len(words) < 3:
        return None
    def marked(w: str, name: str) -> bool:
        return w in MARKERS[name] or bool(LETTERS[name] & set(w))

    language, hits = max(((name, sum(marked(w, name) for w in words)) for name in MARKERS), key=lambda pair: pair[1])
    english = sum(w in ENGLISH for w in words)            # "Il y a un chat": French's "a" is an English word too
    distinct = {w for w in words if marked(w, language)}  # "Der Hund läuft über die Straße.": der, läuft, über …
    if len(distinct) < 2 or 4 * hits < len(words) or 3 * english > hits:   # "La la land"
        return None
    return (f"The text looks like {language}, but this model translates from English: its output for it means "
            "little. Type an English sentence.")


NUMBER = re.compile(r"\d+(?:[.,]\d+)*")                # 2019, 1,500, 3.5
TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")               # 2:30, which French writes 14h30 or 14 h 30
AFTERNOON = re.compile(r"\b(\d{1,2})(?::\d{2})?\s*p\.?m\b", re.IGNORECASE)    # 6 p.m., which French writes 18h
DECADE = re.compile(r"\b(\d{2}[1-9]0)'?s\b")                  # the 1990s: "les années 90"
# the same in an output, where a space may group thousands ("1 500", "1\u202f500")
OUTPUT_NUMBER = re.compile(r"\d+(?:(?:[.,]|[ \u00a0\u202f](?=\d{3}(?!\d)))\d+)*")


def readings(number: str, english: bool = False) -> set[str]:
    """The values a number written with separators may have, as plain decimals: "1,500" is 1500 grouped in
    English, or 1.5 in French ("1500", "1.5"); "12,5" and "12.50" are "12.5"; "1 500" is "1500" (a space only groups);
    "02" is "2", "10.00" "10". A point dropped is a change: "3.5" is not "35" (en-fr wrote "La table est de 15
    mètres." for 1.5 metres, with no note: QA). english: written as English writes numbers, the comma grouping and
    the point a decimal one ("1,500" is 1500 only). A number no rule reads (a date "12.5.2019", a version "3.11.2",
    Indian grouping "1,50,000") is its digits, as written."""
    groups = re.split(r"[.,\s]", number)
    whole = lambda digits: digits.lstrip("0") or "0"
    found = set()
    if all(len(g) == 3 for g in groups[1:]) and not (english and "." in number):   # thousands groups (or none)
        found.add(whole("".join(groups)))
    last = number[-len(groups[-1]) - 1] if len(groups) > 1 else ""
    if last in (".", ) + (() if english else (",",)) and all(len(g) == 3 for g in groups[1:-1]):
        fraction = groups[-1].rstrip("0")                     # the last one a decimal point (or comma)
        found.add(whole("".join(groups[:-1])) + (f".{fraction}" if fraction else ""))
    return found or {whole("".join(groups))}


def changed_numbers(source: str, output: str, english: bool = False) -> list[str]:
    """The numbers in digits of source that output writes otherwise in digits: output lacks them (its separators
    aside: "1,500" is "1 500" or "1.500", "2.5" is "2,5": see readings) and holds a number in digits that source does
    not ("209" for "2019", "35" for "3.5").
    Not a change: a number written in words ("dix-huit ans" for "18 years"), an hour on the 24-hour clock ("14h30"
    for "2:30", "18h" for "6 p.m."), a decade's short form ("les années 90" for "the 1990s"): the ways the
    references of Tatoeba write numbers otherwise (0.7 % of the references of its English sentences with digits,
    6 of 885 in the 2019 release, are still taken for changes: miles in km, 911 as 112, a typo). english: the
    source writes numbers as English does ("1,500" is not 1.5: see readings)."""
    times = TIME.findall(source)
    source_numbers = NUMBER.findall(TIME.sub(" ", source)) + [n for hour, minutes in times for n in (hour, minutes)]
    hours = [h for h, _ in times] + AFTERNOON.findall(source)
    read = {n: readings(n, english) for n in source_numbers}
    accepted = (set().union(*read.values())
                | {str(int(h) + 12) for h in hours if int(h) <= 12}
                | {d[2:] for d in DECADE.findall(source)})
    written = [readings(n) for n in OUTPUT_NUMBER.findall(output)]
    if all(values & accepted for values in written):
        return []
    said = set().union(*written)
    return list(dict.fromkeys(n for n in source_numbers if not read[n] & said and read[n] != {"0"}))


def lost_numbers(trace) -> str | None:
    """A note when an encoder-decoder's output changes a number of the sentence (see changed_numbers): en-fr
    wrote "depuis 209" for "since 2019" and "100 livres" for "1,500 books", and a class believed it (QA as a
    teacher). None for a given target, a partial result, and other models (a continuation need not repeat the
    prompt's numbers)."""
    if (trace.schema.layout != ENCODER_DECODER or trace.meta.get("mode") == "teacher-forced"
            or trace.meta.get("partial")):
        return None
    english = bool(ENGLISH_SOURCE.search(str(trace.meta.get("model", "")).lower().rstrip("/")))
    lost = changed_numbers(str(trace.meta.get("sentence", "")), str(trace.meta.get("translation", "")), english)
    if not lost:
        return None
    what = "translation" if english else "output"
    many = len(lost) > 1
    return (f"The {what} changes the number{'s' if many else ''} {and_list([quoted(n) for n in lost])}: small "
            f"translators often garble numbers, so check {'them' if many else 'it'} against the sentence.")


def in_capitals(trace) -> str | None:
    """A note when the text is in capitals (two words or more, six letters or more, no lowercase letter) and the
    model reads case: a cased model read little such text. en-fr wrote "PNICORICORENIIIIIIN.DN" for a sentence in
    capitals and "J'ai le PDA." for "I LOVE IT", with a note on repetition at most, which did not say why (QA).
    None for a model that lowercases what it reads, and for words of a script without case (Arabic, Hebrew: QA)."""
    text = str(trace.meta.get("sentence", ""))
    if any(c.islower() for c in text) or trace.meta.get("partial") or reads_lowercase(trace):
        return None
    found = [w for w in re.findall(r"[^\W\d_]+", text) if any(c.isupper() for c in w)]
    if len(found) < 2 or sum(map(len, found)) < 6:             # "OK.", "NASA", "the BBC": names
        return None
    return ("The text is in capital letters, which this model rarely read: its output for it may be garbled. "
            "Type it in normal case (“The cat sat on the mat.”).")


LOWERCASE = ("This model lowercases what you type (it was trained on lowercased text), so it writes in lowercase "
             "too: “Berlin” and “berlin” are one word to it.")


def reads_lowercase(trace) -> bool:
    """Whether the model lowercased what was typed: the text has a capital letter and none of the pieces it was
    read as has one (en-de, trained on lowercased captions, or an uncased BERT). Its output is lowercase too, and
    nothing in the window said why "The dog runs in Berlin." came out "der hund rennt …"."""
    text = str(trace.meta.get("sentence", ""))
    if text == text.lower():
        return False
    if "lowercases" in trace.meta:                             # the tokenizer's normalizer, recorded by the run
        return bool(trace.meta["lowercases"])
    # a saved trace from before: read from its pieces (then an emoji's unk turns the check off)
    given, unk = given_tokens(trace), trace.schema.special.get("unk", "<unk>")
    specials = set(trace.schema.special.values())              # BERT's "[CLS]" stays in capitals
    pieces = [t for t in given if t not in specials and not BYTE_PIECE.fullmatch(t)]
    # a model that never saw a capital reads it as unk
    return unk not in given and bool(pieces) and all(t == t.lower() for t in pieces)


def no_mask(trace) -> str | None:
    """A note when a masked-word model has no mask to fill in: none typed (its "filled-in" text is the input), or
    every one cut off with the end of a text longer than its positions (the text printed without a word, QA); or when
    only some of the masks typed were read, the others cut off (the filled text printed them as if read, QA)."""
    mask = trace.schema.special.get("mask")
    if trace.schema.layout != ENCODER_ONLY or not mask or not trace.schema.has_output:
        return None
    read, typed = given_tokens(trace).count(mask), str(trace.meta.get("sentence", "")).count(mask)
    if read and typed > read and trace.meta.get("truncated"):        # the filled text went on as if all were read
        return (f"Only {read} of the {typed} {mask} typed {'was' if read == 1 else 'were'} read: the rest are past "
                f"the model's last position, cut off with the end of the text, and left as typed.")
    if read:
        return None
    if mask in str(trace.meta.get("sentence", "")) and trace.meta.get("truncated"):
        return (f"Every {mask} is past the model's last position and was cut off with the end of the text: nothing "
                f"is filled in. Shorten the text, or put the {mask} earlier.")
    if mask in str(trace.meta.get("sentence", "")):           # (it said "cut off" of an 8-token text, QA)
        return (f"The {mask} typed was read as ordinary text, not as a mask: this model's tokenizer has no {mask} "
                "token, so the model has nothing to fill in.")
    return f"The text has no {mask}: the model has nothing to fill in. Type {mask} for a word it should guess."


def blank_note(t, typed: str) -> str:
    """The note of a run on a blank input, by what the model does with it: a translator or a language model makes
    its output up from its start or end token alone; a masked-word model has nothing to fill in (it was told that
    its "translation is made up from nothing", QA)."""
    layout = t.schema.layout
    noun = "sentence" if layout not in (DECODER_ONLY, ENCODER_ONLY) else "prompt" if layout == DECODER_ONLY else "text"
    why = f"no {noun} is typed" if not typed.strip() else why_blank(typed, noun)
    if layout == ENCODER_ONLY:
        return f"Nothing to fill in: {why}, so the model reads only its own tokens ({' '.join(t.src_tokens)})."
    if layout == DECODER_ONLY:
        return f"The continuation is made up from nothing: {why}, so the model reads only its start token."
    return f"The translation is made up from nothing: {why}, so the model reads only its end-of-sentence token."


def result_notes(trace, max_len: int) -> list[str]:
    """Every note a result calls for, in the order a reader needs them (the window's notice, `translate`'s stderr).
    A run on blank text has one: its output is made up from the model's own tokens (blank_note; the Python API's
    run of "" had looked like a translation, QA)."""
    typed = str(trace.meta.get("sentence", ""))
    if blank(typed):
        return [blank_note(trace, typed)]
    # a hesitation adds nothing to a note that already says the output is not to be trusted
    example, broken = worked_example(trace), not_a_number(trace)
    language, capitals, hot = other_language(trace), in_capitals(trace), hot_sampling(trace)
    nothing = None if broken else nothing_written(trace)             # (not "untrained": NaN)
    loop = None if example else repeats_itself(trace)              # ("sat sat sat": it says why)
    cut = None if example or broken or nothing else cut_off(trace)
    early = None if cut else stopped_early(trace)             # a translation cut at its limit did not stop early
    doubted = any(n is not None for n in (example, broken, language, capitals, hot, nothing, loop, early))
    notes = (broken, example, language, capitals, hot, unlikely_target(trace), several_sentences(trace),
             direction_controls(trace), hidden_joins(trace), unknown_pieces(trace), rare_words(trace),
             lost_numbers(trace), no_mask(trace),
             nothing, loop, early,
             prompt_fills(trace, max_len), forced_end(trace), cut, None if doubted else hesitated(trace))
    return [n for n in notes if n is not None]
