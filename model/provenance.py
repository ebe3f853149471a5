"""What a figure's reader needs to compute it again: which weights exactly (each weights file's size and SHA-256),
which model type, which library versions. Written into an export's run.json (QA as a researcher: two different
weight files saved at one path gave the same run.json). No Qt, no torch import."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

WEIGHT_FILES = "*.safetensors"       # the only weights this app opens (never a pickle)


@lru_cache(maxsize=64)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """The file's SHA-256, read once while its size and time stay (a 2 GB file takes seconds)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def weights_files(folder: str | Path) -> list[dict]:
    """Each weights file of the folder: {"file", "bytes", "sha256"}, by name; [] where it has none or they cannot
    be read (the record then says nothing of them rather than fail an export)."""
    out = []
    for path in sorted(Path(folder).glob(WEIGHT_FILES)):
        try:
            stat = path.stat()
            out.append({"file": path.name, "bytes": stat.st_size,
                        "sha256": _sha256(str(path.resolve()), stat.st_size, stat.st_mtime_ns)})
        except OSError:
            continue
    return out


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def model_provenance(lm) -> dict:
    """The model behind a run, for run.json: its family, its Hugging Face model type where it has one, its weights
    files (or that they are built in code), and the versions of the libraries that ran it."""
    from .families import title
    record: dict = {"family": title(lm)}
    model_type = getattr(getattr(getattr(lm, "model", None), "config", None), "model_type", None)
    if isinstance(model_type, str):
        record["model_type"] = model_type
    path = getattr(lm, "path", None)
    record["weights"] = weights_files(path) if path is not None else "built in code (the notes' worked example)"
    libraries = ("torch", "transformers") if str(getattr(lm, "family", "")).startswith("hf.") else ("torch",)
    record["versions"] = {name: v for name in libraries if (v := _version(name)) is not None}
    return record
