"""`attention-visualizer convert MODEL --to-hf DIR [--force]`: a folder transformers opens and that translates as the
app does; every refusal is one line (exit 2), a failure while writing one line (exit 1), and neither leaves a file or
folder behind nor changes one that was there."""
from __future__ import annotations

import errno
import os

import pytest

pytest.importorskip("transformers")

from command_checks import kept, snapshot  # noqa: E402


def entries(folder) -> list[str]:
    """What a folder holds (the temporary .part or .old folders of a conversion would show here)."""
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def work(tmp_path):
    """An empty folder for the command's output (tmp_path also holds the commands' log folder)."""
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


@pytest.fixture
def converted(run_command, tiny_model_dir, work):
    out = work / "hf"
    code, stdout, _ = run_command(["convert", str(tiny_model_dir), "--to-hf", str(out)])
    assert code == 0 and stdout.strip().splitlines()[-1].startswith(f"wrote {out} (Marian")
    return out


def test_convert_writes_a_folder_transformers_opens_and_that_translates_as_the_app(converted, tiny_lm, run_command):
    import transformers as tf

    from model.decoding import encode_source
    assert entries(converted) == ["config.json", "generation_config.json", "model.safetensors", "target_tokenizer",
                                  "tokenizer.json", "tokenizer_config.json"]
    assert entries(converted / "target_tokenizer") == ["tokenizer.json", "tokenizer_config.json"]
    assert entries(converted.parent) == ["hf"]
    assert oct(converted.stat().st_mode & 0o777) == oct(0o777 & ~_umask())         # not the temporary folder's 0o700
    src_tok = tf.AutoTokenizer.from_pretrained(str(converted))
    assert src_tok("the cat sat")["input_ids"] == encode_source(tiny_lm, "the cat sat").ids
    code, ours, _ = run_command(["translate", "the cat sat", "--model", str(tiny_lm.path)])
    code2, theirs, _ = run_command(["translate", "the cat sat", "--model", str(converted)])
    assert code == code2 == 0 and theirs == ours


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_force_replaces_a_folder_convert_wrote_and_nothing_else_is_left(converted, run_command, tiny_model_dir):
    (converted / "stale.txt").write_text("from before")
    code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", str(converted)])
    assert code == 2 and "--force" in err and (converted / "stale.txt").exists()
    code, _, _ = run_command(["convert", str(tiny_model_dir), "--to-hf", str(converted), "--force"])
    assert code == 0 and not (converted / "stale.txt").exists() and (converted / "model.safetensors").is_file()
    assert entries(converted.parent) == ["hf"]


@pytest.mark.parametrize("model, words", [("seed-example", "learned positional encodings cannot become a Marian"),
                                          ("no-such-model", "no such model")])
def test_models_that_cannot_convert_are_refused_in_one_line(run_command, work, model, words):
    code, _, err = run_command(["convert", model, "--to-hf", str(work / "hf")])
    assert code == 2 and words in err and entries(work) == []


def test_a_model_without_positions_is_refused(run_command, tiny_model_factory, tmp_path):
    folder = tiny_model_factory(tmp_path / "nope", pe="none")
    code, _, err = run_command(["convert", str(folder), "--to-hf", str(tmp_path / "hf")])
    assert code == 2 and "no positional encoding" in err and not (tmp_path / "hf").exists()


def test_a_hugging_face_folder_is_not_converted_again(converted, run_command, tmp_path):
    code, _, err = run_command(["convert", str(converted), "--to-hf", str(tmp_path / "again")])
    assert code == 2 and "already a Marian model" in err and not (tmp_path / "again").exists()


def test_an_existing_folder_with_other_files_is_never_replaced(run_command, tiny_model_dir, work):
    mine = work / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    before = snapshot(mine)
    for extra in ([], ["--force"]):
        code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", str(mine), *extra])
        assert code == 2 and str(mine) in err
        assert kept(before, snapshot(mine)) and entries(mine) == ["notes.txt"]
    assert entries(work) == ["mine"]


def test_an_empty_existing_folder_is_filled(run_command, tiny_model_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, _ = run_command(["convert", str(tiny_model_dir), "--to-hf", str(tmp_path / "empty")])
    assert code == 0 and (tmp_path / "empty" / "config.json").is_file()


def test_the_models_own_folder_is_refused_even_with_force(run_command, tiny_model_factory, tmp_path):
    folder = tiny_model_factory(tmp_path / "models" / "tiny")
    before = snapshot(tmp_path / "models")
    for target in (folder, folder.parent):
        code, _, err = run_command(["convert", str(folder), "--to-hf", str(target), "--force"])
        assert code == 2 and "error:" in err
    assert kept(before, snapshot(tmp_path / "models")) and entries(tmp_path / "models") == ["tiny"]


def test_a_file_or_a_missing_parent_is_refused(run_command, tiny_model_dir, tmp_path):
    (tmp_path / "file").write_text("x")
    for target, words in ((tmp_path / "file", "is a file"), (tmp_path / "file" / "hf", "is a file"),
                          (tmp_path / "missing" / "hf", "does not exist")):
        code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", str(target), "--force"])
        assert code == 2 and words in err, err
    assert (tmp_path / "file").read_text() == "x" and not (tmp_path / "missing").exists()


def test_an_unwritable_folder_is_refused_before_the_model_loads(run_command, tiny_model_dir, work, monkeypatch):
    parent = work / "locked"
    parent.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(parent) else real(p, mode, **kw))
    monkeypatch.setattr("model.load", lambda *a: pytest.fail("the model was loaded"), raising=False)
    code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", str(parent / "hf")])
    assert code == 2 and "is not writable" in err and entries(parent) == []


def test_a_folder_the_system_will_not_write_is_one_line(run_command, tiny_model_dir):
    if not os.path.isdir("/proc/self"):   # /proc itself passes os.access for root
        pytest.skip("needs Linux's /proc, a folder even root cannot write")
    code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", "/proc/hf"])
    assert code == 2 and "cannot write there" in err


def test_a_disk_that_fills_up_leaves_nothing_and_keeps_the_old_folder(converted, run_command, tiny_model_dir,
                                                                      monkeypatch):
    from model.families.hf import to_marian
    before = snapshot(converted)

    def full(fast, folder):
        (folder / "tokenizer.json").write_text("half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(to_marian, "_save_tokenizer", full)
    code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", str(converted), "--force"])
    assert code == 1 and "No space left on device" in err and "nothing was written" in err
    assert snapshot(converted) == before and entries(converted.parent) == ["hf"]
    fresh = converted.parent / "fresh"
    code, _, _ = run_command(["convert", str(tiny_model_dir), "--to-hf", str(fresh)])
    assert code == 1 and entries(converted.parent) == ["hf"]


def test_a_stop_during_the_swap_waits_for_it_and_leftovers_of_a_killed_run_are_cleared(converted, run_command,
                                                                                        tiny_model_dir, monkeypatch):
    """Ctrl+C while --force swapped the folders left a half-removed ".hf.….old" folder that no later run cleared, and
    said "interrupted" over a finished folder (QA). The stop waits for the swap; a killed run's folders go next time."""
    import shutil
    import signal
    from model.families.hf import to_marian
    real = shutil.rmtree

    def stopped_while_removing(path, *args, **kwargs):
        if str(path).endswith(".old"):
            signal.raise_signal(signal.SIGINT)       # Ctrl+C as the old folder is being removed
        return real(path, *args, **kwargs)
    monkeypatch.setattr(to_marian.shutil, "rmtree", stopped_while_removing)
    code, out, _ = run_command(["convert", str(tiny_model_dir), "--to-hf", str(converted), "--force"])
    assert code == 0 and out.strip().startswith(f"wrote {converted}") and entries(converted.parent) == ["hf"]
    monkeypatch.setattr(to_marian.shutil, "rmtree", real)
    # ours: tempfile.mkdtemp's 8 characters between the name and .part or .old; not another folder's ("hf.v2"'s),
    # nor a user's ".hf.backup.old"
    for left in (".hf.k1ll3d_x.old/previous", ".hf.k1ll3d_y.part", ".hf.v2.k1ll3d_z.part", ".hf.backup.old"):
        (converted.parent / left).mkdir(parents=True)
    (converted.parent / ".hf.note.txt").write_text("not ours")
    code, _, _ = run_command(["convert", str(tiny_model_dir), "--to-hf", str(converted), "--force"])
    assert code == 0 and entries(converted.parent) == [".hf.backup.old", ".hf.note.txt", ".hf.v2.k1ll3d_z.part", "hf"]


def test_without_transformers_it_says_how_to_install_it(run_command, tiny_model_dir, tmp_path, monkeypatch):
    from model import ModelLoadError
    from model.families.hf import to_marian

    def missing():
        raise ModelLoadError('opening Hugging Face models needs the transformers package: pip install -e ".[hf]"')
    monkeypatch.setattr(to_marian, "transformers", missing)
    code, _, err = run_command(["convert", str(tiny_model_dir), "--to-hf", str(tmp_path / "hf")])
    assert code == 1 and "pip install" in err and not (tmp_path / "hf").exists()


def test_without_transformers_convert_says_what_to_install_before_it_loads_the_model(run_command, monkeypatch,
                                                                                     tmp_path):
    """It loaded the model for 4 s, then said "opening Hugging Face models needs the transformers package" (QA):
    convert writes one, and says so first, as a usage error."""
    import importlib.util

    import visualizer.translate_command as translate_command
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "transformers" else real(name, *a))
    monkeypatch.setattr(translate_command, "load_model_arg", lambda *a: pytest.fail("the model was loaded"))
    code, _, err = run_command(["convert", "en-fr", "--to-hf", str(tmp_path / "out")], check=False)
    assert code == 2 and err.splitlines()[-1] == (
        "error: convert writes a folder for the transformers package, which is not installed: "
        'pip install -e ".[hf]"')
    assert not (tmp_path / "out").exists()
