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
import contextlib
import datetime
import errno
import functools
import os
import signal
import sys
import threading
import traceback
from pathlib import Path
from typing import Callable

from .files import NOT_REGULAR, NotRegularFileError, can_create_in, write_target

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
        # a text that starts with "-" ("-hello") is read as options: "ignored explicit argument 'ello'" (QA)
        dash = "; a text that starts with '-' goes after --, as in: -- \"-hello\"" if (
            "ignored explicit argument" in message or "unrecognized arguments: -" in message) else ""
        raise UsageError(f"{message}{dash} (see {self.prog} --help)")


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


def decimal(text: str) -> float:
    """An argparse type for a number with a fraction, written with a point or, as in French or German, a comma
    ("2,5"), as the window's boxes read it: "--scale 2,5" was "invalid float value" (QA)."""
    plain = text.strip()
    if plain.count(",") == 1 and "." not in plain:
        plain = plain.replace(",", ".")
    try:
        return float(plain)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: write it as 2.5 (or 2,5)") from None


def model_name(text: str) -> str:
    """An argparse type for --model: a blank one is refused (a script's unset $M opened en-fr without a word, QA)."""
    if not text.strip():
        from .assets import bundled_models
        raise argparse.ArgumentTypeError(f"it is empty: give a bundled model ({', '.join(bundled_models())}) or a "
                                         "model folder, or leave --model out for the default")
    return text


def model_argument(p: argparse.ArgumentParser) -> None:
    """--model, as every command that runs a model takes it."""
    p.add_argument("--model", default=None, type=model_name,
                   help="bundled model name, model folder, or Hugging Face id in the local cache (default: en-fr if "
                        "bundled)")


def not_blank(path: str | Path, what: str) -> None:
    """UsageError for an empty path: Path("") is the current folder, where an export wrote its files (QA)."""
    if not str(path).strip():
        raise UsageError(f"{what} is empty: give a path")


def device_kind(p: argparse.ArgumentParser, value: str, instead: str) -> str:
    """"cpu" or "cuda" for a --device value; a usage error for another kind, or for cuda where torch sees no GPU
    (instead: what to do then, said in the message)."""
    import torch
    try:
        kind = torch.device(value).type
    except RuntimeError:
        kind = None
    if kind not in ("cpu", "cuda"):
        p.error(f"--device {value}: give cpu or cuda")
    if kind == "cuda" and not torch.cuda.is_available():
        p.error(f"--device cuda: torch sees no CUDA GPU on this machine ({instead})")
    return kind


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
    not_blank(path, what)
    try:
        return _writable_folder(Path(path), what)
    except OSError as e:            # (a name longer than the file system takes)
        raise UsageError(f"{what} {path}: {e.strerror or e}") from None


def _writable_folder(path: Path, what: str) -> Path:
    if path.exists() and not path.is_dir():
        raise UsageError(f"{what} {path}: is a file, not a folder")
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{what} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK) or not can_create_in(existing):
        raise UsageError(f"{what} {path}: {existing} is not writable")
    return path


def writable_file(path: str | Path, what: str) -> Path:
    """Check before the work that a file can be written into its folder, which must exist: UsageError if not."""
    not_blank(path, what)
    try:
        return _writable_file(Path(path), what)
    except OSError as e:            # a name longer than the folder takes had been "unexpected OSError" (QA)
        raise UsageError(f"{what} {path}: {e.strerror or e}") from None


def _writable_file(path: Path, what: str) -> Path:
    if path.is_dir():
        raise UsageError(f"{what} {path}: is a folder, not a file")
    try:
        folder = write_target(path).parent          # a link is written through, to its target
    except NotRegularFileError:
        raise UsageError(f"{what} {path}: {NOT_REGULAR}; give a file name") from None
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{what} {path}: {folder} is a file, not a folder")
    if not folder.is_dir():
        raise UsageError(f"{what} {path}: the folder {folder} does not exist")
    if (not os.access(folder, os.W_OK | os.X_OK) or not can_create_in(folder)
            or (path.exists() and not os.access(path, os.W_OK))):
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


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a kill, a closed terminal) during a command: raised as Ctrl+C is, so that what a
    half-done write holds is removed on the way out (files.atomic_write), and the exit code is 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_held = {"depth": 0, "signal": None}      # stops_between_steps' state: how deep, and a signal that came inside


def _stop(signum, _frame) -> None:
    if _held["depth"]:
        _held["signal"] = signum              # raised by check_stop, between two steps
        return
    raise Stopped(signum)


@contextlib.contextmanager
def stops_between_steps():
    """Inside, SIGTERM, SIGHUP and Ctrl+C are held until check_stop() (call it between two steps: two figures, two
    frames) or the end of the block. Work that draws with Qt needs it: Qt calls Python code from C++ (a paint, a
    layout), where an exception raised by a signal is printed, with its traceback, and lost, and the work goes on."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, _stop)
    _held["depth"] += 1
    try:
        yield
    finally:
        _held["depth"] -= 1
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    check_stop()


def check_stop() -> None:
    """Raise the stop a signal held by stops_between_steps asked for (KeyboardInterrupt for Ctrl+C)."""
    signum, _held["signal"] = _held["signal"], None
    if signum is not None:
        raise KeyboardInterrupt if signum == signal.SIGINT else Stopped(signum)


def drop_stop() -> bool:
    """Forget a stop stops_between_steps holds, after work it could no longer stop has finished whole (a folder
    renamed into place): whether there was one."""
    signum, _held["signal"] = _held["signal"], None
    return signum is not None


WRITE_ERRORS = {getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EIO", "EFBIG") if hasattr(errno, n)}
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def command(main: Callable[[list[str] | None], int] | None = None, *, signals: bool = True):
    """Wrap a command's main(argv): text arguments, UsageError/CommandError as one line, a full disk or a closed
    output as one line, and no traceback. signals: SIGTERM and SIGHUP stop it as Ctrl+C does (the window's own
    start says False: a Python exception cannot stop Qt's event loop)."""
    if main is None:
        return functools.partial(command, signals=signals)

    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        argv = text_args(list(sys.argv[1:] if argv is None else argv))
        for stream in (sys.stdout, sys.stderr):         # a terminal that cannot show "é" gets "?", not an error
            if hasattr(stream, "reconfigure") and getattr(stream, "errors", "strict") == "strict":
                stream.reconfigure(errors="replace")    # after the work was done (QA: PYTHONIOENCODING=ascii)
        previous = {}
        if signals and threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                previous[sig] = signal.signal(sig, _stop)
        try:
            code = main(argv)
            if sys.stdout is not None:                   # (None: started with stdout closed)
                sys.stdout.flush()                       # a full disk says so here, not at the interpreter's exit
            return code
        except (UsageError, CommandError) as e:
            return fail(str(e), e.code)
        except Stopped as e:
            return fail(f"stopped ({signal.Signals(e.signum).name})", 128 + e.signum)
        except KeyboardInterrupt:
            return fail("interrupted", 130)
        except BrokenPipeError:                          # `… | head`: the reader left; nothing to say
            return 1
        except OSError as e:
            if e.errno not in WRITE_ERRORS:
                return unexpected(e, main, argv)
            where = f" {e.filename}" if e.filename else " the output"
            return fail(f"could not write{where} ({e.strerror or e})")
        except Exception as e:                           # a bug: one line here, the whole report in the log
            return unexpected(e, main, argv)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            run._active = False
    return run


def process_exit(main: Callable[[], int]) -> None:
    """The process's own entry (the console script, `python -m visualizer`): exit with main()'s code. Once main is
    over, its last line said, a stop signal is let go (a handler that does nothing: a child process started later
    gets the default one back), so that the exit code stands: Ctrl+C just after `animate` wrote its file had ended
    the process with 130 and no line (QA). Not for main() called from a script or a notebook."""
    try:
        code = main()
    finally:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, *STOP_SIGNALS):
                signal.signal(sig, _let_go)
    sys.exit(code)


def _let_go(signum, frame) -> None:
    """A stop signal after the process's command is over: nothing more to stop."""


def unexpected(e: BaseException, main, argv: list[str]) -> int:
    where = write_report(e, main.__module__, argv)
    detail = f"{type(e).__name__}: {one_line(str(e))[:200]}"
    return fail(f"unexpected {detail}; "
                + (f"the full report is in {where}" if where else "no report could be written"))
