"""`attention-visualizer metrics TEXT [--model M] [--out FILE.csv]`: the per-head metrics table, no window."""
from __future__ import annotations

import sys
from pathlib import Path

from model.command_line import (ArgumentParser, CommandError, UsageError, beam_width, check_stop, command,
                                model_argument, stops_between_steps, writable_file)
from model.ablation import ablated_heads
from model.text import blank, why_blank

from .translate_command import (ABLATE_HELP, BEAM_HELP, PROMPT_ONLY_HELP, ablate_arg, load_model_arg, print_notes,
                                run_settings, run_translation, target_arg)


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer metrics",
                       description="Per-head attention metrics (entropy, distance, shares) of a sentence, as CSV.")
    p.add_argument("text", help="the source sentence")
    model_argument(p)
    p.add_argument("--target", default=None, type=target_arg, help="teacher-force the decoder through this translation")
    p.add_argument("--prompt-only", action="store_true", help=PROMPT_ONLY_HELP)
    p.add_argument("--beam", type=beam_width, default=1, help=BEAM_HELP)
    p.add_argument("--ablate", action="append", default=[], type=ablate_arg, metavar="KIND:LAYER:HEAD",
                   help=ABLATE_HELP)
    p.add_argument("--effects", action="store_true",
                   help="also measure each head's effect on the output: the head switched off alone, the output "
                        "forced the same, the mean change in its tokens' log-probability (column effect_logp, nats; "
                        "negative: the head helps write it). One run a head")
    p.add_argument("--out", default=None, help="write the CSV here (default: print it)")
    a = p.parse_args(argv)
    if blank(a.text):
        raise UsageError(f"nothing to measure: {why_blank(a.text)}")
    if a.out is not None:
        writable_file(a.out, "--out")
    from model.analysis.metrics import metrics_csv, trace_metrics

    from .export import ExportError, write_text
    lm = load_model_arg(a.model)
    settings = run_settings(lm, a)
    result = run_translation(lm, a.text, a.ablate, settings=settings, target=a.target)
    effects = None
    if a.effects:
        from model.analysis.head_effects import cannot_measure, head_effects
        if (why := cannot_measure(lm)) is not None:
            raise UsageError(f"--effects: {why}")
        with stops_between_steps():
            effects = head_effects(lm, result.trace, progress=lambda *_: check_stop())
    text = metrics_csv(trace_metrics(result.trace), ablated_heads(result.trace), effects)
    print_notes(result, lm)              # a text cut to the model's length is measured as cut: said, as translate does
    if a.out is None:
        sys.stdout.write(text)
        return 0
    try:
        write_text(Path(a.out), text)
    except ExportError as e:
        raise CommandError(str(e)) from None
    print(f"wrote {len(text.splitlines()) - 1} heads to {a.out}")
    return 0
