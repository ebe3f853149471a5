"""Checks shared by the tests of commands given bad input (issue 19)."""
from __future__ import annotations

from pathlib import Path


def check_command_output(code: int, err: str) -> None:
    """What every command's end must look like: exit 0, 1 or 2; for 1 and 2 one `error:` line, the last on
    stderr (notes and warnings before it are allowed); never a traceback."""
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    if code:
        lines = [line for line in err.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("error:")]
        assert len(errors) == 1 and lines[-1] == errors[0], err[-2000:]


def snapshot(folder) -> dict:
    """{relative path: bytes} of every file under folder: to show that a command changed or deleted none."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def kept(before: dict, after: dict) -> bool:
    """Every file of before is still there, unchanged (new files may have been added)."""
    return all(after.get(name) == data for name, data in before.items())
