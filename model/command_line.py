"""What every command shares at its door: one-line usage errors (exit 2), one-line failures (exit 1), arguments
that are text, and an unexpected error reported in one line that names the full report written to a log file
in the user's state folder. No Qt and no torch here (the app's start imports it first).

    @command
    def main(argv=None) -> int: ...

Inside a command, raise UsageError (exit 2: the arguments or input files are wrong) or CommandError (exit 1: the
work failed); either prints `error: <message>` on stderr.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import os
import sys
import traceback
from pathlib import Path
from typing import Callable

from .files import NOT_REGULAR, NotRegularFileError, write_target

APP = "attention-visualizer"


class UsageError(Exception):
    """Wrong arguments or input files: one line, exit code 2."""
    code = 2


class CommandError(Exception):
    """The work could not be done: one line, exit code 1."""
    code = 1


class ArgumentParser(argparse.ArgumentParser):
    """argparse with its usage error on one line (`error: … (see PROG --help)`), exit code 2."""

    def error(self, message: str):
        raise UsageError(f"{message} (see {self.prog} --help)")


MAX_BEAM = 64       # the session files' limit too (visualizer/file_schema.py)


def beam_width(text: str) -> int:
    """An argparse type for --beam: a whole number from 1 (greedy) to MAX_BEAM; 0 is an error, not greedy."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid beam width {text!r}: a whole number from 1 to {MAX_BEAM}") from None
    if not 1 <= value <= MAX_BEAM:
        raise argparse.ArgumentTypeError(f"invalid beam width {value}: a whole number from 1 (greedy) to {MAX_BEAM}")
    return value


def model_argument(p: argparse.ArgumentParser) -> None:
    """--model, as every command that runs a model takes it."""
    p.add_argument("--model", default=None, help="bundled model name, model folder, or Hugging Face id in the local "
                                                 "cache (default: en-fr if bundled)")


def one_line(text: str) -> str:
    lines = [s.strip() for s in str(text).splitlines() if s.strip()]
    return " ".join(lines) if lines else ""


def fail(message: str, code: int = 1) -> int:
    """Print `error: message` on one line on stderr and give the exit code back."""
    print(f"error: {one_line(message)}", file=sys.stderr, flush=True)
    return code


def text_args(argv: list[str], out=None) -> list[str]:
    """Arguments as text: bytes that are not UTF-8 (kept by Python as surrogates) become U+FFFD, with a notice."""
    fixed = []
    for i, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            arg = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            print(f"note: argument {i} is not valid UTF-8 text; its undecodable bytes were replaced by \ufffd",
                  file=out or sys.stderr)
        fixed.append(arg)
    return fixed


def writable_folder(path: str | Path, what: str = "--out") -> Path:
    """Check before the work that a folder can be written (created later if missing): UsageError if not."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{what} {path}: is a file, not a folder")
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{what} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: {existing} is not writable")
    return path


def writable_file(path: str | Path, what: str) -> Path:
    """Check before the work that a file can be written into its folder, which must exist: UsageError if not."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{what} {path}: is a folder, not a file")
    try:
        folder = write_target(path).parent          # a link is written through, to its target
    except NotRegularFileError:
        raise UsageError(f"{what} {path}: {NOT_REGULAR}; give a file name") from None
    if not folder.is_dir():
        raise UsageError(f"{what} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{what} {path}: not writable")
    return path


def state_dir() -> Path:
    """Where the app keeps logs: $XDG_STATE_HOME/attention-visualizer (~/.local/state/… by default) on Linux and
    other Unix systems, ~/Library/Logs/… on macOS, %LOCALAPPDATA%\\… on Windows."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / APP
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Logs" / APP
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "state"
    return base / APP


def write_report(exc: BaseException, name: str, argv: list[str]) -> Path | None:
    """Append the traceback of an unexpected error to the log file; its path, or None if it could not be written."""
    path = state_dir() / "errors.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(f"--- {datetime.datetime.now().isoformat(timespec='seconds')} {name} {argv!r}\n")
            f.write("".join(traceback.format_exception(exc)))
        return path
    except OSError:
        return None


def command(main: Callable[[list[str] | None], int]) -> Callable[[list[str] | None], int]:
    """Wrap a command's main(argv): text arguments, UsageError/CommandError as one line, and no traceback."""
    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        argv = text_args(list(sys.argv[1:] if argv is None else argv))
        try:
            return main(argv)
        except (UsageError, CommandError) as e:
            return fail(str(e), e.code)
        except KeyboardInterrupt:
            return fail("interrupted", 130)
        except BrokenPipeError:                          # `… | head`: the reader left; nothing to say
            return 1
        except Exception as e:                           # a bug: one line here, the whole report in the log
            where = write_report(e, main.__module__, argv)
            detail = f"{type(e).__name__}: {one_line(str(e))[:200]}"
            return fail(f"unexpected {detail}; "
                        + (f"the full report is in {where}" if where else "no report could be written"))
        finally:
            run._active = False
    return run
