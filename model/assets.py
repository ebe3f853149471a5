"""Where models live and what their folders hold; nothing here imports torch, so the app can start without it."""
from __future__ import annotations

import json
import struct
from pathlib import Path

from .files import NOT_REGULAR, not_regular

WEIGHTS, CONFIG, SRC_TOK, TGT_TOK, CARD = "model.safetensors", "config.json", "tokenizer_src.json", "tokenizer_tgt.json", "MODEL_CARD.md"
ASSETS = Path(__file__).resolve().parent.parent / "assets"
MODELS_DIR = ASSETS / "models"


class ModelLoadError(Exception):
    """A model folder that cannot be used; str() is one line naming the file and the problem."""


def reason(e: BaseException, limit: int = 200) -> str:
    """A library's error as the one line of a ModelLoadError: its first line, and the next too where the first ends
    in a colon (pydantic's "Validation error for field 'x':" said nothing more, QA); its type where it has no text."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    first = lines[0] + (f" {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else "")
    return first[:limit]


def required_file(folder: Path, name: str) -> Path:
    """folder/name, which must be a regular file; ModelLoadError saying what it is otherwise (a FIFO or a folder
    read "file is missing": QA)."""
    path = folder / name
    if not_regular(path):
        raise ModelLoadError(f"{path}: {NOT_REGULAR}")
    if not path.is_file():
        raise ModelLoadError(f"{path}: file is missing")
    return path


def check_safetensors(path: Path) -> list[str]:
    """A safetensors file whose header is valid JSON and whose tensors all lie inside the file: its tensors' names."""
    size = path.stat().st_size
    if size == 0:                            # "damaged header" did not say what to do (QA)
        raise ModelLoadError(f"{path}: the file is empty (0 bytes): copy the weights again")
    try:
        with path.open("rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if n > size - 8:
                raise ValueError("header longer than the file")
            header = json.loads(f.read(n))
        end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
    except (struct.error, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        raise ModelLoadError(f"{path}: not a valid safetensors file (damaged header)") from None
    if 8 + n + end != size:
        raise ModelLoadError(f"{path}: truncated or damaged safetensors file ({size:,} bytes, its header "
                             f"describes {8 + n + end:,})")
    return [k for k in header if k != "__metadata__"]


def bundled_models() -> list[str]:
    """Names of the model folders shipped in assets/models, plus the built-in seed example."""
    names = sorted(p.name for p in MODELS_DIR.iterdir() if (p / CONFIG).is_file()) if MODELS_DIR.is_dir() else []
    return names + ["seed-example"]


def model_folder(name_or_folder: str | Path) -> Path | None:
    """The folder a bundled name or a path stands for (None for the seed example, built in code)."""
    if str(name_or_folder) == "seed-example":
        return None
    candidate = MODELS_DIR / str(name_or_folder)
    path = Path(name_or_folder)
    # a bundled name, unless a model folder of that name is here (an export's folder "en-fr" in the working folder
    # hid the bundled en-fr: "en-fr/config.json: file is missing", QA); "./en-fr" is always that folder
    here = path.exists() and ((path / CONFIG).is_file() or str(name_or_folder).startswith((".", "/", "\\"))
                              or len(path.parts) > 1)
    if candidate.is_dir() and not here:
        return candidate
    return path


def lasting_name(name: str) -> str:
    """A model's name as a file that outlives the working folder keeps it (a session): a folder given by a relative
    path made absolute (model_folder takes an existing path before a bundled name); a bundled name, a hub id and an
    absolute path as they are."""
    path = Path(name)
    if path.is_absolute() or not path.is_dir() or model_folder(name) != path:
        return name      # a bundled name stays one beside a folder of that name that is no model (an export's: QA)
    return str(path.resolve())


def short_name(name: str) -> str:
    """A model's name for labels and figure titles: a bundled name or a hub id as it is, a folder of the Hugging
    Face cache (…/models--org--name/snapshots/<commit>) by its id, another folder by its last two path parts."""
    parts = Path(name).parts
    for i, part in enumerate(parts[:-1]):
        if part.startswith("models--") and parts[i + 1] == "snapshots":
            return part[len("models--"):].replace("--", "/")
    return str(Path(*parts[-2:]))


def model_data_licence(name: str) -> str:
    """The "Data and licence" section of a bundled model's card (markdown, without its heading): the data it was
    trained on, the licence and the attribution that licence asks for; "" when there is none."""
    folder = model_folder(name)
    try:
        card = (folder / "MODEL_CARD.md").read_text(encoding="utf-8") if folder else ""
    except (OSError, UnicodeDecodeError):
        return ""
    section = card.split("\n## Data and licence\n", 1)[1] if "\n## Data and licence\n" in card else ""
    return section.split("\n## ", 1)[0].strip()


SEED_SUMMARY = ("the math notes' worked example by hand: d_model 2, one head, numbers chosen to give the note's; "
                "made for “The cat sat on the mat”, not a translator")


def model_summary(name: str) -> str:
    """One line saying what a bundled model is, for its entry in the window's model list: its card's title after the
    name ("English → German (image captions of Multi30k, lowercased)"); "" when it has none. A class saw bare names
    (en-de, en-fr, seed-example), and typed sentences to a lowercased image-caption model and to the 2-d example;
    "(Multi30k, lowercased)" did not say that en-de learnt from picture captions alone (QA)."""
    if name == "seed-example":
        return SEED_SUMMARY
    folder = model_folder(name)
    try:
        first = (folder / "MODEL_CARD.md").read_text(encoding="utf-8").splitlines()[0] if folder else ""
    except (OSError, UnicodeDecodeError, IndexError):
        return ""
    title = first.lstrip("# ").strip()
    return title.split(": ", 1)[1] if title.startswith(f"{name}: ") else ""
