"""A command stopped by SIGTERM or SIGHUP (a kill, a closed terminal) cleans up as after Ctrl+C and exits 128 + the
signal; inside stops_between_steps the stop waits for the step's end (Qt swallows exceptions raised in its paint
callbacks); a full disk on the output is one line, not an "unexpected" error."""
from __future__ import annotations

import os
import signal

import pytest

from model.command_line import check_stop, command, stops_between_steps
from model.files import atomic_write


def test_sigterm_during_a_write_leaves_no_file_and_exits_143(tmp_path, capsys):
    target = tmp_path / "figure.png"

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(b"half a picture")
            os.kill(os.getpid(), signal.SIGTERM)      # delivered here, inside the write
            f.write(b"the other half")

    @command
    def main(argv):
        atomic_write(target, write)
        return 0

    assert main([]) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []            # neither the file nor its temporary
    assert capsys.readouterr().err.strip() == "error: stopped (SIGTERM)"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL       # the handler before is back


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this system")
def test_sighup_stops_as_sigterm_does(capsys):
    @command
    def main(argv):
        os.kill(os.getpid(), signal.SIGHUP)
        raise AssertionError("not reached")

    assert main([]) == 128 + signal.SIGHUP and "stopped (SIGHUP)" in capsys.readouterr().err


def test_a_stop_inside_a_step_waits_for_the_step_to_end(capsys):
    steps = []

    @command
    def main(argv):
        with stops_between_steps():
            for n in range(3):
                if n == 1:
                    os.kill(os.getpid(), signal.SIGTERM)   # in the middle of step 1 (a Qt paint, say)
                steps.append(n)                            # step 1 still ends
                check_stop()
        return 0

    assert main([]) == 143 and steps == [0, 1]


def test_ctrl_c_inside_a_step_is_held_too_and_says_interrupted(capsys):
    @command
    def main(argv):
        with stops_between_steps():
            os.kill(os.getpid(), signal.SIGINT)
            return 0                                       # the block's end raises it

    before = signal.getsignal(signal.SIGINT)               # (Python's own, or SIG_IGN in a job started with &)
    assert main([]) == 130 and "interrupted" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before


def test_a_full_output_is_one_line_naming_what_could_not_be_written(capsys):
    import errno

    @command
    def main(argv):
        raise OSError(errno.ENOSPC, "No space left on device")

    assert main([]) == 1
    assert capsys.readouterr().err.strip() == "error: could not write the output (No space left on device)"


def test_a_stop_after_the_processs_command_is_over_changes_nothing(tmp_path):
    """Ctrl+C just after `animate` had written its file and said so ended the process with 130 and no line (QA): once
    the process's own command is over (process_exit, the console script's and `python -m visualizer`'s entry), a
    stop signal is let go, and the command's exit code stands."""
    import subprocess
    import sys
    from pathlib import Path
    script = ("import atexit, os, signal\n"
              "from model.command_line import command, process_exit\n"
              "@command\n"
              "def main(argv):\n"
              "    print('wrote it')\n"
              "    return 0\n"
              "stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)\n"
              "atexit.register(lambda: [os.kill(os.getpid(), s) for s in stops])\n"
              "process_exit(main)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert (done.returncode, done.stdout, done.stderr) == (0, "wrote it\n", "")


def test_a_command_called_from_a_script_leaves_the_signals_as_they_were():
    """Called from a script or a notebook (argv None too), a command leaves Ctrl+C and SIGTERM as they were: the
    process goes on, and a child process it starts must get the default handlers (QA, a review)."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    @command
    def main(argv):
        return 0
    assert main() == 0
    assert {sig: signal.getsignal(sig) for sig in before} == before
