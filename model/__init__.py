"""The transformer of "Attention Is All You Need", traced: no Qt here, usable from notebooks and scripts.

    from model import load, translate
    lm = load("en-fr")
    result = translate(lm, "The red car is fast.")
    result.text, result.trace.attention("cross", layer=2, head=0)

Names are imported on first use, so that `import model.trace` (numpy only) does not import torch: the app
shows its window while torch is still loading.
"""
from __future__ import annotations

import importlib

_WHERE = {
    "Trace": "trace", "Schema": "schema", "Stage": "schema",
    "DecodingSettings": "config", "ModelConfig": "config",
    "ModelLoadError": "assets", "bundled_models": "assets",
    "LoadedModel": "checkpoint", "load_model": "checkpoint", "save_model": "checkpoint",
    "load": "families", "family_for": "families",
    "Translation": "decoding", "generate_steps": "families", "trace_run": "decoding", "translate": "families",
    "Transformer": "transformer",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
