"""Attention Visualizer: the Qt app (the model side, without Qt, is the `model` package)."""
from importlib import metadata


def version() -> str:
    """The installed package's version (pyproject.toml's), for --version and Help ▸ About."""
    try:
        return metadata.version("attention-visualizer")
    except metadata.PackageNotFoundError:        # run from a source tree that was never installed
        return "(not installed)"
