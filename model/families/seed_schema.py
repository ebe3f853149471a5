"""The seed family's schema, built from its config or read off an old Trace's arrays: no torch, and no import of the
model code (checkpoint.py and trace.py import this, model/families/seed.py opens and runs the models)."""
from __future__ import annotations

from pathlib import Path

from ..schema import Schema
from .shapes import encoder_decoder

NAME = "seed"
SPECIAL = {"pad": "<pad>", "unk": "<unk>", "bos": "<s>", "eos": "</s>"}


def schema(cfg) -> Schema:
    """The schema of a ModelConfig (model/config.py)."""
    return encoder_decoder(NAME, cfg.N_enc, cfg.N_dec, cfg.d_model, cfg.h, cfg.d_ff, SPECIAL, positions=cfg.pe,
                           scale_embedding=cfg.scale_embedding, scale_scores=cfg.scale_scores, tied=cfg.tie_output,
                           output_bias=not cfg.tie_output)       # the generator has a bias unless it is tied


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
