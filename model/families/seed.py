"""The seed family: the encoder-decoder transformer of the notes (model/transformer.py), post-LN, sinusoidal or
learned positions, special ids 0..3, two BPE tokenizers. Its schema is built without torch."""
from __future__ import annotations

from pathlib import Path

from ..schema import Schema
from .shapes import encoder_decoder

NAME = "seed"
CAN_ABLATE = True        # translate(..., ablations=...) switches heads off (model/ablation.py)
SPECIAL = {"pad": "<pad>", "unk": "<unk>", "bos": "<s>", "eos": "</s>"}


def recognises(config: dict) -> bool:
    return "N_enc" in config and "model_type" not in config


def schema(cfg) -> Schema:
    """The schema of a ModelConfig (model/config.py)."""
    return encoder_decoder(NAME, cfg.N_enc, cfg.N_dec, cfg.d_model, cfg.h, cfg.d_ff, SPECIAL, positions=cfg.pe,
                           scale_embedding=cfg.scale_embedding)


def schema_of_folder(folder: Path) -> Schema:
    """The schema of a model folder, from its config.json (raises ModelLoadError when it is not valid)."""
    import json
    from ..assets import CONFIG, ModelLoadError
    from ..config import ModelConfig
    try:
        return schema(ModelConfig.from_dict(json.loads((folder / CONFIG).read_text(encoding="utf-8"))))
    except (OSError, ValueError, TypeError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{folder / CONFIG}: {e}".splitlines()[0]) from None


def schema_from_arrays(arrays: dict, meta: dict | None = None) -> Schema:
    """The schema of a Trace saved before traces carried one (its layer and head counts read off its arrays)."""
    def layers(stack: str) -> int:
        return len({k.split(".")[1] for k in arrays if k.startswith(stack + ".") and k.split(".")[1].isdigit()})
    h = arrays["enc.0.self.weights"].shape[0]
    d_model = arrays["src.x"].shape[-1]
    d_ff = arrays["enc.0.ffn.hidden"].shape[-1] if "enc.0.ffn.hidden" in arrays else 4 * d_model
    return encoder_decoder(NAME, layers("enc"), layers("dec"), d_model, h, d_ff, SPECIAL)


def open(folder: Path, name: str | None = None):
    from ..checkpoint import load_model
    return load_model(folder, name)


def open_seed_example():
    from ..seed_example import build_seed_example
    return build_seed_example()


def translate(lm, text: str, *args, **kwargs):
    from ..decoding import translate as run
    return run(lm, text, *args, **kwargs)
