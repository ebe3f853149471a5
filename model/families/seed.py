"""The seed family: the encoder-decoder transformer of the notes (model/transformer.py), post-LN, sinusoidal or
learned positions, special ids 0..3, two BPE tokenizers. Its schema is built without torch (seed_schema.py)."""
from __future__ import annotations

from pathlib import Path

from .seed_schema import NAME, SPECIAL, schema, schema_from_arrays, schema_of_folder  # noqa: F401 (the interface)

CAN_ABLATE = True        # translate(..., ablations=...) switches heads off (model/ablation.py)


def recognises(config: dict) -> bool:
    return "N_enc" in config and "model_type" not in config


def open(folder: Path, name: str | None = None):
    from ..checkpoint import load_model
    return load_model(folder, name)


def open_seed_example():
    from ..seed_example import build_seed_example
    return build_seed_example()


def translate(lm, text: str, *args, **kwargs):
    from ..decoding import translate as run
    return run(lm, text, *args, **kwargs)
