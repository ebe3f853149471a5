"""The transformer of "Attention Is All You Need", traced: no Qt here, usable from notebooks and scripts.

    from model import load, translate
    lm = load("en-fr")
    result = translate(lm, "The red car is fast.")
    result.text, result.trace.attention("cross", layer=2, head=0)
"""
from .checkpoint import LoadedModel, ModelLoadError, bundled_models, load, load_model, save_model
from .config import ModelConfig
from .decoding import DecodingSettings, Translation, generate_steps, trace_run, translate
from .trace import ATTENTION_KINDS, Trace
from .transformer import Transformer

__all__ = ["ATTENTION_KINDS", "DecodingSettings", "LoadedModel", "ModelConfig", "ModelLoadError", "Trace",
           "Transformer", "Translation", "bundled_models", "generate_steps", "load", "load_model",
           "save_model", "trace_run", "translate"]
