"""The input rows' words by the open model (its layout, family and name): "English" and its "Translation", a
"Prompt" and its "Continuation", a "Text" and what is "Filled in", a "Source" and its "Output". The window's rows
and the commands' output lines (`translate`, `export`) name a run's text the same way. No Qt here: the commands
import it."""
from __future__ import annotations

from model.schema import DECODER_ONLY, ENCODER_DECODER, ENCODER_ONLY, OUTPUT_WORDS

from .examples import target_code

# the input rows' words by the open model's layout (model.schema.LAYOUTS): (input, output, input's placeholder,
# target's placeholder; None: the model takes no target)
LAYOUT_WORDS = {
    ENCODER_DECODER: ("&English:", f"{OUTPUT_WORDS[ENCODER_DECODER].capitalize()}:", "Type an English sentence…",
                      "Optional: a translation to force through the decoder (teacher forcing)"),
    DECODER_ONLY: ("&Prompt:", f"{OUTPUT_WORDS[DECODER_ONLY].capitalize()}:", "Type the start of a text…",
                   "Optional: a continuation to force through the model (teacher forcing)"),
    ENCODER_ONLY: ("&Text:", f"{OUTPUT_WORDS[ENCODER_ONLY].capitalize()}:",
                   "Type a sentence; [MASK] marks a word to guess…", None),
}
TRANSLATORS = ("seed", "marian")           # the families that translate (this app's own models, OPUS-MT)


def encoder_decoder_words(family: str, model: str) -> tuple[str, str, str, str]:
    """An encoder-decoder's rows (as LAYOUT_WORDS): English and its translation for this app's own models and a
    model whose name says it reads English ("opus-mt-en-de"); a source and its translation for another
    translator (OPUS-MT from German); a source and its output for the rest (BART, T5: summaries, answers; QA: a
    BART's rows read "English" and "Translation")."""
    if family == "seed" or target_code(model):
        return LAYOUT_WORDS[ENCODER_DECODER]
    if family in TRANSLATORS:
        return ("&Source:", "Translation:", "Type a sentence in the model's source language…",
                LAYOUT_WORDS[ENCODER_DECODER][3])
    return ("&Source:", "Output:", "Type a text…",
            "Optional: an output to force through the decoder (teacher forcing)")


def output_word(layout: str, family: str, model: str) -> str:
    """The output's name in lower case ("translation", "output", "continuation", "filled in"), as the window's row
    names it: `export` printed "translation:" for a T5 whose row reads "Output:" (QA)."""
    words = encoder_decoder_words(family, model) if layout == ENCODER_DECODER else LAYOUT_WORDS[layout]
    return words[1].rstrip(":").lower()
