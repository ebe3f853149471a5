"""`attention-visualizer translate "text" [--model NAME] [--beam K [--tree]] [--ablate KIND:LAYER:HEAD ...]`: print
the translation (and with --tree the beam search's tree of hypotheses), no window."""
from __future__ import annotations

import argparse
import sys

from model.ablation import AblationError, expand, parse_spec
from model.families import require, title, writes_text
from model.command_line import ArgumentParser, CommandError, UsageError, beam_width, command, model_argument
from model.text import blank, why_blank


def load_model_arg(name: str | None):
    """The model of --model (default: en-fr if bundled); UsageError when it cannot be opened."""
    from model import ModelLoadError, load
    from model.families import check

    from .state import default_model
    try:
        check(name or default_model())          # what the window checks first, in the window's words
        lm = load(name or default_model())
    except ModelLoadError as e:
        raise UsageError(str(e)) from None
    if (problem := getattr(lm, "training_words_problem", None)) is not None:
        print(f"note: {problem}", file=sys.stderr)
    return lm


def target_arg(text: str) -> str:
    """An argparse type for --target: a translation to force; a blank one is refused (it meant no target, silently)."""
    if blank(text):
        raise argparse.ArgumentTypeError("it is empty: give a translation to force, or leave --target out")
    return text


# one help for every command's --ablate (metrics and animate had not said that layers and heads count from 1, QA)
ABLATE_HELP = "switch a head off; layers and heads from 1, 'all' for every one (repeatable; e.g. cross:all:all)"


def ablate_arg(text: str):
    """An argparse type for --ablate: KIND:LAYER:HEAD, 1-based, 'all' for every layer or head."""
    try:
        return parse_spec(text)
    except AblationError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run_translation(lm, text: str, specs, settings=None, target: str | None = None):
    """model.translate with the heads of --ablate switched off; UsageError when they are not in the model or
    its family cannot switch heads off."""
    from model import DecodingSettings, translate
    from model.families import can_preview
    from model.threads import one_torch_thread
    one_torch_thread(large=can_preview(lm))     # as the window runs it: the same floats (7th digit) as its exports
    try:
        ablations = expand(specs, lm.schema)
        require(lm, ablations)
    except AblationError as e:
        raise UsageError(f"--ablate: {e}") from None
    from model.schema import ENCODER_ONLY
    settings = settings or DecodingSettings()
    if lm.schema.layout == ENCODER_ONLY:        # the options were taken and silently ignored (QA)
        if target is not None:
            raise UsageError(f"--target: {lm.name} is an encoder-only model, which reads the text alone and takes no "
                             "target")
        if settings.method == "beam":
            raise UsageError(f"--beam: {lm.name} is an encoder-only model, which fills in every mask at once, "
                             "with no search")
    extra = {"ablations": ablations} if ablations else {}      # a family that cannot ablate never gets the word
    return translate(lm, text, settings, target=target, **extra)


PROMPT_ONLY_HELP = ("a decoder-only model's rows are the text alone, not the text and a continuation it writes "
                    "(one row a token of the text, the last choosing what would come next)")


BEAM_HELP = "beam width (1 = greedy), as the window's Decoding ▸ Beam search"


def run_settings(lm, a):
    """The decoding settings of a command's --beam and --prompt-only (either, or None: greedy), as the window's
    beam runs could not be drawn or measured again from the command line (QA as a researcher). UsageError for
    --beam with a given target (it is read, not searched for) or with --prompt-only (one new token)."""
    beam, prompt_only = getattr(a, "beam", 1), getattr(a, "prompt_only", False)
    if beam > 1 and a.target is not None:
        raise UsageError("--beam and --target: a given target is read as it is, not searched for; give one")
    if beam > 1 and prompt_only:
        raise UsageError("--beam and --prompt-only: --prompt-only writes no text to search for; give one")
    if beam > 1:
        from model import DecodingSettings
        return DecodingSettings(method="beam", beam=beam)
    return prompt_only_settings(lm, prompt_only, a.target)


def prompt_only_settings(lm, prompt_only: bool, target: str | None):
    """The decoding settings of --prompt-only: one new token, so that the rows are the text's tokens (a GPT-2's
    metrics measured 9 rows of the text and 19 of the dots it wrote); None without it. UsageError for a model
    that is not decoder-only, or with --target."""
    if not prompt_only:
        return None
    from model import DecodingSettings
    from model.schema import DECODER_ONLY
    if lm.schema.layout != DECODER_ONLY:
        raise UsageError(f"--prompt-only is for decoder-only models: {lm.name} is {lm.schema.layout}, and its "
                         "encoder's rows are the text alone already")
    if target is not None:
        raise UsageError("--prompt-only and --target: give one (the text alone, or the text and a continuation)")
    return DecodingSettings(max_new=1)


def print_notes(result, lm) -> None:
    """The notes a result calls for, on stderr ("note: …"), as the window shows them under the translation; first
    that the text was cut to the model's length (what every command then shows or measures is the cut text's)."""
    from model.ablation import ablated_heads, describe
    from model.notes import cut_to_length, model_length, result_notes
    if result.truncated:
        print(f"note: {cut_to_length(result.trace.schema, model_length(lm), result.truncated)}", file=sys.stderr)
    if off := ablated_heads(result.trace):       # QA: `--ablate cross:all:all` printed its output with no word
        print(f"note: {describe(off, result.trace.schema)}", file=sys.stderr)    # in the window's words (QA)
    for note in result_notes(result.trace, lm.cfg.max_len):
        print(f"note: {note}", file=sys.stderr)


def output_line(result) -> str | None:
    """What `export` says of the run it drew: the output named as the window names it ("translation", "output",
    "continuation", "filled in"); None for an encoder-only model's text without a mask, which has nothing filled in
    (it printed "translation: " and the input again)."""
    from model.schema import ENCODER_ONLY

    from .row_words import output_word
    schema = result.trace.schema
    mask = schema.special.get("mask")
    if schema.layout == ENCODER_ONLY and not (mask and mask in result.trace.src_tokens and schema.has_output):
        return None
    if result.trace.meta.get("mode") == "teacher-forced":      # it read "translation: " and the user's own text
        return f"given target: {result.text}"
    return f"{output_word(schema.layout, schema.family, result.trace.meta.get('model', ''))}: {result.text}"


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer translate", description="Print the translation of a text.")
    p.add_argument("text", help="the sentence to translate (a prompt to continue, a text with masks to fill in)")
    model_argument(p)
    p.add_argument("--beam", type=beam_width, default=1, help=BEAM_HELP)
    p.add_argument("--ablate", action="append", default=[], type=ablate_arg, metavar="KIND:LAYER:HEAD",
                   help=ABLATE_HELP)
    p.add_argument("--tree", action="store_true",
                   help="also print the beam search's tree: every hypothesis kept or finished, with its log p")
    a = p.parse_args(argv)
    if blank(a.text):
        raise UsageError(f"nothing to translate: {why_blank(a.text)}")
    if a.tree and a.beam < 2:
        raise UsageError("--tree shows a beam search: give --beam 2 or more")
    from model import DecodingSettings

    lm = load_model_arg(a.model)
    mask = getattr(getattr(lm, "tokenizer", None), "mask_token", None)
    why = writes_text(lm)
    # a model without its head first: it was told to type a mask, then that it cannot fill one in (QA)
    if why is not None and not (mask and mask in a.text) and lm.schema.has_output:
        raise UsageError(why + (f"; `translate` prints the text with its {mask} words filled in, when it has some"
                                if mask else ""))
    if why is not None and not lm.schema.has_output:      # it printed an empty line
        raise UsageError(f"{lm.name} has no masked-word head (its weights are the encoder's alone, or its head is "
                         f"another task's, as a classifier's is), so it cannot fill in {mask}; open it in the window "
                         "to see its attention, or use `metrics` and `export`")
    settings = DecodingSettings(method="beam", beam=a.beam) if a.beam > 1 else DecodingSettings()
    result = run_translation(lm, a.text, a.ablate, settings=settings)
    print_notes(result, lm)
    print(result.text)
    if a.tree:
        from model.beam_tree import BeamTreeError, format_tree, tree_of
        try:
            tree = tree_of(result.trace)
        except BeamTreeError as e:
            raise CommandError(str(e)) from None
        if tree is None:
            raise CommandError(f"{title(lm)} models do not record their search (no tree to print)")
        print(format_tree(tree))
    return 0
