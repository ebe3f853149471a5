"""`attention-visualizer translate "text" [--model NAME] [--beam K]`: print the translation, no window."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="attention-visualizer translate", description="Print the translation of a text.")
    p.add_argument("text")
    p.add_argument("--model", default=None, help="bundled model name or model folder (default: en-fr if bundled)")
    p.add_argument("--beam", type=int, default=1, help="beam width (1 = greedy)")
    a = p.parse_args(argv)
    from model import DecodingSettings, ModelLoadError, load, translate

    from .state import default_model
    try:
        lm = load(a.model or default_model())
    except ModelLoadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    settings = DecodingSettings(method="beam", beam=a.beam) if a.beam > 1 else DecodingSettings()
    result = translate(lm, a.text, settings)
    if result.truncated:
        print(f"note: the text was cut to the model's {lm.cfg.max_len} tokens", file=sys.stderr)
    print(result.text)
    return 0
