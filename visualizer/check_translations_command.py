"""`attention-visualizer check-translations FILE [--model M] [--beam N]`: translate each English sentence of a
list and compare with its accepted translations; print each miss (with its words the model rarely or never read
in training, when its folder counts them: model/training_words.py) and the count.

FILE holds `English<TAB>accepted translation|another accepted translation` lines (blank lines and lines starting
with # are skipped). A translation is right when it equals an accepted one ignoring case, the spacing before
punctuation (`?` and ` ?`, French spacing) and the apostrophe's shape (' and ’). Exit 0 when all are right,
1 otherwise (with `error: N of M translations missed` on stderr).
"""
from __future__ import annotations

import sys

from model.checks import is_right, read_checks
from model.command_line import ArgumentParser, CommandError, UsageError, beam_width, command, model_argument
from model.families import scoring_note, writes_text

from .translate_command import load_model_arg


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer check-translations",
                       description="Translate each sentence of a list and compare with its accepted translations.")
    p.add_argument("file", help="English<TAB>accepted|translations lines")
    model_argument(p)
    p.add_argument("--beam", type=beam_width, default=1, help="beam width (1 = greedy)")
    a = p.parse_args(argv)
    checks = read_checks(a.file)
    from model.evaluate import translate_all

    lm = load_model_arg(a.model)
    if (why := writes_text(lm)) is not None:
        raise UsageError(why)
    if (note := scoring_note(lm)) is not None:
        print(f"note: {note}", file=sys.stderr)
    outputs = translate_all(lm, [s for s, _ in checks], a.beam)
    right, counts = 0, getattr(lm, "training_words", None)
    for (source, accepted), output in zip(checks, outputs):
        if is_right(output, accepted):
            right += 1
            continue
        print(f"miss: {source}\n  got:      {output}\n  accepted: {' | '.join(accepted)}")
        if counts is not None and (rare := counts.rare(source)):      # a miss the data explains, said as such
            print(f"  rare:     {', '.join(f'{w} in {n:,}' if n else f'{w} in none' for w, n in rare)} of the "
                  f"{counts.sentences:,} training sentences")
    print(f"{right} of {len(checks)} right", flush=True)
    if right < len(checks):       # exit 1, with the one line every failing command ends with
        raise CommandError(f"{len(checks) - right} of {len(checks)} translations missed")
    return 0
