"""File facts shared by the model and the app (no torch here: the export command imports it)."""
from __future__ import annotations

import os


def new_file_mode() -> int:
    """The mode an ordinary new file gets, 0666 less the umask. A file written through tempfile.mkstemp and renamed
    would otherwise keep mkstemp's 0600, readable by its owner alone."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
