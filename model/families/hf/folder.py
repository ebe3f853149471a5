"""What a Hugging Face model folder must hold before anything is loaded, and where a model id is in the local cache.

Each problem is one line (ModelLoadError): a folder with only a pickled `pytorch_model.bin` (never unpickled; the line
says how to convert it), a truncated or damaged safetensors file, no tokenizer (or an OPUS-MT folder without one of
its three tokenizer files), a model too big for the memory that is free, an id that is not in the cache,
transformers not installed."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ...assets import ModelLoadError, check_safetensors, reason

INSTALL = 'pip install -e ".[hf]"'
TARGET_TOKENIZER = "target_tokenizer"      # the target side's tokenizer, in a folder with two vocabularies
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "vocab.txt", "spiece.model", "source.spm", "sentencepiece.bpe.model",
                   "tokenizer.model")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def transformers():
    """The transformers package, imported on first use; one line naming the install command when it is missing."""
    try:
        import transformers as tf
    except ImportError:
        raise ModelLoadError(f"opening Hugging Face models needs the transformers package: {INSTALL}") from None
    tf.logging.set_verbosity_error()
    tf.utils.logging.disable_progress_bar()         # no "Loading weights" bars on stderr, where commands say one line
    return tf


def looks_like_id(name: str) -> bool:
    """'gpt2' or 'Helsinki-NLP/opus-mt-en-de': what a model id can look like (a path with more parts cannot)."""
    return bool(_ID.match(name)) and not name.startswith(".")


def cache_dir() -> Path:
    """The hub cache as huggingface_hub finds it: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def cached_snapshot(model_id: str) -> Path:
    """The folder of a model id in the local cache (nothing is downloaded); one line saying how to fetch it when
    it is not there."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        raise ModelLoadError(f"{model_id}: no such model folder; to open it as a Hugging Face model id from the "
                             f"local cache, install transformers: {INSTALL}") from None
    try:
        return Path(snapshot_download(model_id, cache_dir=str(cache_dir()), local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        raise ModelLoadError(
            f"{model_id}: no such model folder, and no model of that id in the local Hugging Face cache "
            f"({cache_dir()}); nothing is downloaded here: on a connected machine run "
            f"`hf download {model_id}` (`huggingface-cli download` before huggingface_hub 1.0) and copy its cache "
            f"folder, or pass a folder") from None


def auto_class_name(fam, config: dict) -> str:
    """The transformers class that opens a family's folder with its head (BertForMaskedLM, not BertModel)."""
    return fam.auto_class(config) if hasattr(fam, "auto_class") else fam.AUTO


def check_folder(folder: Path, auto: str = "AutoModel", source: str | None = None) -> list[Path]:
    """The folder's safetensors files, after checking everything that can be checked without loading them. auto: the
    transformers class that opens the family; source: the model id the folder was found under (for the message that
    says how to convert pickled weights)."""
    weights = sorted(folder.glob("*.safetensors"))
    check_index(folder)
    if not weights:
        if any((folder / n).is_file() for n in ("pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5")):
            raise ModelLoadError(f"{folder}: only pytorch_model.bin (a pickle, which can run code when loaded); this "
                                 f"app loads safetensors only: {convert_command(auto, source or str(folder))}")
        raise ModelLoadError(f"{folder}: no *.safetensors weights")
    check_layers(folder, [name for path in weights for name in check_safetensors(path)])
    marian = marian_files_missing(folder)
    if marian:
        raise ModelLoadError(marian)
    if not any((folder / n).is_file() for n in TOKENIZER_FILES):
        raise ModelLoadError(f"{folder}: no tokenizer (none of {', '.join(TOKENIZER_FILES)})")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        check_json_object(folder / name)       # a "null" read "cannot read its tokenizer ('NoneType' object …)" (QA)
    check_memory(folder, sum(p.stat().st_size for p in weights))
    return weights


def convert_command(auto: str, source: str) -> str:
    """How to turn pickled weights into safetensors where the file is trusted (an id needs a connected machine): the
    model and its tokenizer saved again into a folder beside the source, which then opens here."""
    out = f"{Path(source).name}-safetensors"
    if not looks_like_id(source):
        out = str(Path(source).with_name(out))
    return (f"convert it where you trust the file{' (on a connected machine)' if looks_like_id(source) else ''}: "
            f"python -c \"from transformers import AutoTokenizer as T, {auto} as M; "
            f"M.from_pretrained({source!r}).save_pretrained({out!r}, safe_serialization=True); "
            f"T.from_pretrained({source!r}).save_pretrained({out!r})\" and open {out}")


def check_json_object(path: Path) -> dict | None:
    """A JSON file of a model folder that must hold an object, read; None if there is none. ModelLoadError naming it
    when it is not valid JSON or not an object."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{path}: not valid JSON ({reason(e, 120)})") from None
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path}: a JSON object was expected, it holds {type(data).__name__}")
    return data


def check_index(folder: Path) -> None:
    """Weights split in shards: every shard the index names is in the folder (a missing one read "no *.safetensors
    weights", or a load error, without its name: QA)."""
    index = check_json_object(folder / "model.safetensors.index.json")
    if index is None:
        return
    shards = index.get("weight_map")
    if not isinstance(shards, dict):
        raise ModelLoadError(f"{folder / 'model.safetensors.index.json'}: has no weight_map")
    missing = sorted({str(v) for v in shards.values()} - {p.name for p in folder.glob("*.safetensors")})
    if missing:
        raise ModelLoadError(f"{folder / 'model.safetensors.index.json'}: names {', '.join(missing[:3])}"
                             f"{' …' if len(missing) > 3 else ''}, which {'is' if len(missing) == 1 else 'are'} "
                             "not in the folder")


LAYER_KEYS = ("n_layer", "n_layers", "num_hidden_layers", "num_layers", "num_decoder_layers", "encoder_layers",
              "decoder_layers")


def check_layers(folder: Path, names: list[str]) -> None:
    """ModelLoadError when config.json gives a stack more layers than the weights can hold, before transformers builds
    them: a GPT-2 of n_layer 100,000,000 built layer after layer for minutes, to 23 GB (QA). A layer's tensors are
    numbered ("h.11.attn…", "block.5.layer.1…"), so no stack has more layers than 1 + the largest number in them."""
    held = 1 + max((int(part) for name in names for part in name.split(".") if part.isdigit()), default=-1)
    config = read_config(folder)
    for key in LAYER_KEYS:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > held:
            raise ModelLoadError(f"{folder / 'config.json'}: {key} is {value:,}, but the weights hold "
                                 f"{'no numbered layers' if held == 0 else f'at most {held} layer' + 's' * (held > 1)}")


def check_memory(folder: Path, weight_bytes: int) -> None:
    """Refuse, with the figures, a model whose float32 weights would not fit in the memory that is free."""
    config = read_config(folder)
    dtype = str(config.get("torch_dtype") or config.get("dtype") or "float32")
    need = weight_bytes * (2 if dtype in ("float16", "bfloat16") else 1) * 1.2     # float32 copy + activations
    try:
        with open("/proc/meminfo") as f:
            free = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return
    if need > free:
        raise ModelLoadError(f"{folder}: the model needs about {need / 2**30:.1f} GiB of memory and "
                             f"{free / 2**30:.1f} GiB are free")


def read_config(folder: Path) -> dict:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{folder / 'config.json'}: {reason(e, 160)}") from None
    if not isinstance(config, dict):
        raise ModelLoadError(f"{folder / 'config.json'}: not a model config (a JSON object was expected)")
    return config


MARIAN_FILES = ("source.spm", "target.spm", "vocab.json")


def marian_files_missing(folder: Path) -> str | None:
    """The line naming the files an OPUS-MT folder's tokenizer lacks (one of its sentencepiece models gone read
    "Either model_file or model_proto must be specified."); None when it is not such a folder or lacks none."""
    if (folder / "tokenizer.json").is_file() or not any((folder / n).is_file() for n in MARIAN_FILES[:2]):
        return None
    gone = [n for n in MARIAN_FILES if not (folder / n).is_file()]
    if not gone:
        return None
    return (f"{folder}: its Marian (OPUS-MT) tokenizer needs {', '.join(MARIAN_FILES[:-1])} and {MARIAN_FILES[-1]} "
            f"(the two languages' sentencepiece models and the vocabulary); {' and '.join(gone)} "
            f"{'is' if len(gone) == 1 else 'are'} missing: copy the whole model folder again")
