"""File facts shared by the model and the app (no torch here: the export command imports it)."""
from __future__ import annotations

import codecs
import errno
import os
import tempfile
from pathlib import Path
from typing import Callable


NOT_REGULAR = "not a regular file (a folder, a device, a pipe or a socket)"


class NotRegularFileError(OSError):
    """The path names something that is not a file: writing would replace it."""


class TemporaryFileError(OSError):
    """The folder refused the temporary file (no permission, read-only, full): nothing was written."""


def new_file_mode() -> int:
    """The mode an ordinary new file gets, 0666 less the umask. A file written through tempfile.mkstemp and renamed
    would otherwise keep mkstemp's 0600, readable by its owner alone."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def not_regular(path: str | Path) -> bool:
    """Whether path is there but is no regular file (a folder, a device, a pipe or a socket): /dev/zero read as a
    list ran until the memory was gone, a FIFO for a tokenizer read "file is missing" (QA)."""
    path = Path(path)
    return path.exists() and not path.is_file()


def write_target(path: str | Path) -> Path:
    """The file a write to path changes: a symbolic link's target, else path itself; NotRegularFileError when that
    is a folder, a device, a pipe or a socket (a write would replace it)."""
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    if not_regular(path):
        raise NotRegularFileError(errno.EINVAL, NOT_REGULAR, str(path))
    return path


def can_create_in(folder: str | Path) -> bool:
    """Whether a file can be created in folder, tried: os.access says yes to root everywhere, /proc and /sys
    included, where the writing fails only after the work."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".attention-visualizer-", suffix=".probe"):
            return True
    except OSError:
        return False

def fitted_prefix(prefix: str, suffix: str, folder: Path) -> str:
    """prefix cut so that a temporary name (prefix, mkstemp's 8 random letters, suffix) fits the folder's longest file
    name: "<a 246-byte name>.gif" could be written, and its temporary name, 10 bytes longer, could not (QA: a
    teacher's accented file name, refused as "cannot write here (File name too long)" after the whole animation)."""
    try:
        longest = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):        # (Windows has no pathconf: 255 there too)
        longest = 255
    if not longest or longest < 0:          # no limit said
        return prefix
    room = longest - 8 - len(os.fsencode(suffix))
    while len(os.fsencode(prefix)) > room and prefix:
        prefix = prefix[:-1]
    return prefix


def atomic_write(path: str | Path, write: Callable[[str], None], prefix: str | None = None,
                 suffix: str = ".part") -> None:
    """Write path through a temporary file in its folder that is renamed over path at the end: a reader sees the old
    file or the new one, never half of one, and a write that fails removes its temporary file and re-raises.

    write(tmp) fills the temporary file, named prefix + random + suffix: by default "NAME.<random>.part", which
    model.train sweeps away after a run was killed mid-write; writers that pick a format by the file's ending pass
    its suffix. The file gets an ordinary new file's mode (new_file_mode).

    A symbolic link is written through (its target gets the new content and the link stays); a path that is a device,
    a pipe or a socket is refused with an OSError before anything is written (renaming over it would replace it)."""
    path = write_target(path)
    try:
        prefix = fitted_prefix(path.name + "." if prefix is None else prefix, suffix, path.parent)
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    except OSError as e:
        raise TemporaryFileError(e.errno, e.strerror, str(path.parent)) from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def utf8_problem(path: Path, error: UnicodeDecodeError) -> str:
    """Why a file is not UTF-8 text, in words: what it is instead where its first bytes say (encoding_hint), else
    where it first fails, counted in the whole file (line and byte: a file read a chunk at a time gave the byte
    in the chunk), and whether it reads as Windows-1252 (Latin-1), as older Windows programs save text."""
    hint = encoding_hint(path)
    if hint:
        return hint
    try:
        data = Path(path).read_bytes()
    except OSError:
        return error.reason
    body = data[len(codecs.BOM_UTF8):] if data.startswith(codecs.BOM_UTF8) else data
    try:
        body.decode("utf-8")
        return error.reason
    except UnicodeDecodeError as whole:
        start = whole.start + len(data) - len(body)
        reason = whole.reason
    line = data.count(b"\n", 0, start) + 1
    where = f"{reason} at byte {start + 1}, line {line}"
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return where
    return f"{where}; it reads as Windows-1252 (Latin-1) text, as older Windows programs save it: save it as UTF-8"


def encoding_hint(path: Path) -> str:
    """What a file that is not UTF-8 looks like, when its first bytes say (a spreadsheet's "Unicode text")."""
    try:
        with open(path, "rb") as f:
            start = f.read(2)
    except OSError:
        return ""
    return "it is UTF-16, as a spreadsheet's \"Unicode text\" is: save it as UTF-8" \
        if start in (b"\xff\xfe", b"\xfe\xff") else ""
