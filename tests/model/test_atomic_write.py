"""model.files.atomic_write: the one writer behind model folders, checkpoints, --hyps and the app's exports."""
from __future__ import annotations

import errno
import os
import stat

import pytest

import model.files as files
from model.files import TemporaryFileError, atomic_write


def test_a_finished_write_replaces_the_file_with_an_ordinary_mode(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    seen = []
    atomic_write(path, lambda tmp: (seen.append(tmp), open(tmp, "w").write("new")))
    assert path.read_text() == "new" and os.listdir(tmp_path) == ["a.txt"]
    assert os.path.basename(seen[0]).startswith("a.txt.") and seen[0].endswith(".part")
    assert stat.S_IMODE(path.stat().st_mode) == files.new_file_mode()


def test_a_failing_write_keeps_the_old_file_and_leaves_no_temporary_one(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")

    def half(tmp):
        open(tmp, "w").write("ne")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(OSError, match="No space left"):
        atomic_write(path, half)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]


def test_the_temporary_name_can_keep_the_files_ending(tmp_path):
    seen = []
    atomic_write(tmp_path / "fig.png", lambda tmp: (seen.append(tmp), open(tmp, "wb").write(b"x")),
                 prefix=".fig.", suffix=".png")
    name = os.path.basename(seen[0])
    assert name.startswith(".fig.") and name.endswith(".png")


@pytest.mark.parametrize("prefix, suffix", [(None, ".part"), (".{stem}.", ".gif")])
def test_a_name_near_the_longest_a_folder_takes_is_written(tmp_path, prefix, suffix):
    """A 246-byte name could be created, and its temporary name, 10 bytes longer, could not: a teacher's accented
    file name was refused after the whole animation (QA). A name longer than the folder takes is refused, for
    itself, with nothing left behind."""
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "é" * ((longest - 4) // 2) + "a" * ((longest - 4) % 2) + ".gif"     # the longest the folder takes
    assert len(os.fsencode(name)) == longest
    path = tmp_path / name
    seen = []
    kept = None if prefix is None else prefix.format(stem=path.stem)
    atomic_write(path, lambda tmp: (seen.append(tmp), open(tmp, "w").write("new")), prefix=kept, suffix=suffix)
    assert path.read_text() == "new" and os.listdir(tmp_path) == [name]
    assert os.path.basename(seen[0]).startswith((kept or f"{name}.")[:40]) and seen[0].endswith(suffix)
    with pytest.raises(OSError) as e:
        atomic_write(tmp_path / ("x" + name), lambda tmp: open(tmp, "w").write("new"), prefix=kept, suffix=suffix)
    assert e.value.errno == errno.ENAMETOOLONG and not isinstance(e.value, TemporaryFileError)
    assert os.listdir(tmp_path) == [name]


def test_a_folder_that_refuses_the_temporary_file_is_named(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(files.tempfile, "mkstemp", refuse)       # root may write anywhere: refuse as a folder would
    with pytest.raises(TemporaryFileError) as e:
        atomic_write(tmp_path / "a.txt", lambda tmp: None)
    assert e.value.errno == errno.EACCES and e.value.filename == str(tmp_path)
    assert os.listdir(tmp_path) == []


def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "heads.csv"
    target.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    atomic_write(link, lambda tmp: open(tmp, "w").write("new"))
    assert link.is_symlink() and target.read_text() == "new" and sorted(os.listdir(tmp_path / "real")) == ["heads.csv"]


def test_a_pipe_is_refused_before_anything_is_written(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    calls = []
    with pytest.raises(files.NotRegularFileError):
        atomic_write(fifo, calls.append)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and calls == [] and os.listdir(tmp_path) == ["pipe"]


def test_commands_refuse_a_device_and_the_file_being_scored(tmp_path, run_command):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, out, err = run_command(["metrics", "Hi.", "--out", str(fifo)])
    assert code == 2 and "not a regular file" in err and stat.S_ISFIFO(fifo.stat().st_mode)
    test = tmp_path / "test.tsv"
    test.write_text("a cat\tun chat\n", encoding="utf-8")
    code, out, err = run_command(["evaluate", "--tsv", str(test), "--hyps", str(test)])
    assert code == 2 and "is the file being scored" in err and test.read_text(encoding="utf-8") == "a cat\tun chat\n"


def test_writing_works_where_the_system_has_no_pathconf(tmp_path, monkeypatch):
    """Windows has no os.pathconf: the temporary name's cut had made every save fail there (a review)."""
    monkeypatch.delattr(os, "pathconf")
    atomic_write(tmp_path / "a.txt", lambda tmp: open(tmp, "w").write("new"))
    assert (tmp_path / "a.txt").read_text() == "new"


def test_a_name_longer_than_the_folder_takes_is_a_usage_error_before_the_work(tmp_path):
    """`animate --out <a 257-byte name>` was "unexpected OSError" with a crash report (QA): a usage error naming
    the file, before anything is computed; an --out folder of such a name too."""
    from model.command_line import UsageError, writable_file, writable_folder
    long = "é" * 126 + "a.gif"
    for check in (writable_file, writable_folder):
        with pytest.raises(UsageError, match="File name too long"):
            check(tmp_path / long, "--out")
