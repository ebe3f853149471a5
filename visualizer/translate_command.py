"""`attention-visualizer translate "text" [--model NAME] [--beam K]`: print the translation, no window."""
from __future__ import annotations

import sys

from model.command_line import ArgumentParser, UsageError, beam_width, command


def load_model_arg(name: str | None):
    """The model of --model (default: en-fr if bundled); UsageError when it cannot be opened."""
    from model import ModelLoadError, load

    from .state import default_model
    try:
        return load(name or default_model())
    except ModelLoadError as e:
        raise UsageError(str(e)) from None


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer translate", description="Print the translation of a text.")
    p.add_argument("text")
    p.add_argument("--model", default=None, help="bundled model name or model folder (default: en-fr if bundled)")
    p.add_argument("--beam", type=beam_width, default=1, help="beam width (1 = greedy)")
    a = p.parse_args(argv)
    if not a.text.strip():
        raise UsageError("nothing to translate: the text is empty")
    from model import DecodingSettings, translate

    lm = load_model_arg(a.model)
    settings = DecodingSettings(method="beam", beam=a.beam) if a.beam > 1 else DecodingSettings()
    result = translate(lm, a.text, settings)
    if result.truncated:
        print(f"note: the text was cut to the model's {lm.cfg.max_len} tokens", file=sys.stderr)
    print(result.text)
    return 0
