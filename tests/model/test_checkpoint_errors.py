"""Model folders: a round trip, and a one-line ModelLoadError naming the file for every kind of breakage."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model import ModelLoadError, load, load_model, translate

WEIGHTS = "model.safetensors"


@pytest.fixture
def copy(tiny_model_dir, tmp_path):
    """A fresh copy of the tiny model folder, to break."""
    return shutil.copytree(tiny_model_dir, tmp_path / "m")


def expect_error(folder, file_name: str, *words: str) -> str:
    with pytest.raises(ModelLoadError) as err:
        load_model(folder)
    msg = str(err.value)
    assert "\n" not in msg, msg
    assert file_name in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def rewrite_weights(folder, change) -> None:
    state = load_file(str(folder / WEIGHTS))
    change(state)
    save_file(state, str(folder / WEIGHTS))


def test_round_trip_translates_identically(tiny_model_dir, tiny_lm):
    again = load(tiny_model_dir)
    a, b = translate(tiny_lm, "the cat sat"), translate(again, "the cat sat")
    assert a.out_ids == b.out_ids
    for k in ("logits", "enc.1.self.weights"):
        assert (a.trace[k] == b.trace[k]).all()


def test_a_saved_folder_is_readable_as_any_new_file_is(tiny_lm, tmp_path):
    """Files are written through a temporary file and a rename; they must not keep the temporary file's 0600."""
    import os
    from model.checkpoint import save_model
    old = os.umask(0o022)
    try:
        save_model(tmp_path / "m", tiny_lm.model, tiny_lm.src_tok, tiny_lm.tgt_tok)
    finally:
        os.umask(old)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in (tmp_path / "m").iterdir()}
    assert modes == dict.fromkeys([WEIGHTS, "config.json", "tokenizer_src.json", "tokenizer_tgt.json"], oct(0o644))


@pytest.mark.parametrize("name", [WEIGHTS, "config.json", "tokenizer_src.json", "tokenizer_tgt.json"])
def test_missing_file(copy, name):
    (copy / name).unlink()
    expect_error(copy, name, "missing")


def test_missing_folder(tmp_path):
    expect_error(tmp_path / "nothing-here", "nothing-here", "not a model folder")


def test_a_file_instead_of_a_folder(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"x")
    expect_error(tmp_path / "weights.bin", "weights.bin")


def test_wrong_tensor_shape(copy):
    rewrite_weights(copy, lambda s: s.__setitem__("encoder.0.self_attn.W_Q.weight", torch.zeros(3, 3)))
    expect_error(copy, WEIGHTS, "encoder.0.self_attn.W_Q.weight", "shape", "(3, 3)")


def test_missing_tensor(copy):
    rewrite_weights(copy, lambda s: s.pop("generator.weight"))
    expect_error(copy, WEIGHTS, "missing tensors", "generator.weight")


def test_unexpected_tensor(copy):
    rewrite_weights(copy, lambda s: s.__setitem__("decoder.9.extra", torch.zeros(2)))
    expect_error(copy, WEIGHTS, "unexpected tensors", "decoder.9.extra")


def test_a_config_of_more_layers_than_the_weights_hold_is_refused_before_any_is_built(copy, monkeypatch):
    """A config.json claiming 100,000,000 layers built them all (23 GB, the machine stalled) before the weights were
    found to lack them (QA). The layers the weights hold are counted first."""
    import model.checkpoint as checkpoint
    cfg = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    cfg["N_dec"] = 100_000_000
    (copy / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    built = []
    monkeypatch.setattr(checkpoint, "Transformer", lambda *a, **k: built.append(a) or pytest.fail("built"))
    msg = expect_error(copy, "config.json", "N_dec is 100,000,000", f"{WEIGHTS} holds 2 decoder layers")
    assert not built, msg


def test_non_finite_weights(copy):
    def poison(state):
        state["decoder.1.norm2.gamma"][3] = float("nan")
    rewrite_weights(copy, poison)
    expect_error(copy, WEIGHTS, "decoder.1.norm2.gamma", "NaN")


@pytest.mark.parametrize("keep", [0.5, 0.99, 8, 0], ids=["half", "last-bytes-cut", "8-bytes", "empty"])
def test_truncated_weights(copy, keep):
    data = (copy / WEIGHTS).read_bytes()
    n = int(len(data) * keep) if isinstance(keep, float) else keep
    (copy / WEIGHTS).write_bytes(data[:n])
    expect_error(copy, WEIGHTS, "not a readable safetensors file")


@pytest.mark.parametrize("zipfile", [True, False], ids=["zip-pickle", "legacy-pickle"])
def test_a_pickle_renamed_to_safetensors_is_refused_and_never_unpickled(copy, tmp_path, zipfile):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))                          # runs only if someone unpickles

    torch.save({"x": Evil()}, copy / WEIGHTS, _use_new_zipfile_serialization=zipfile)
    expect_error(copy, WEIGHTS, "not a readable safetensors file")
    assert not marker.exists()


@pytest.mark.parametrize("text,words", [
    ("{ broken", ()), ("", ()), ("[]", ()), ("null", ()), ("\xff\xfe", ()),
    ('{"src_vocab_size": 10}', ("tgt_vocab_size",)),
], ids=["bad-json", "empty", "list", "null", "not-utf8", "missing-key"])
def test_bad_config_json(copy, text, words):
    (copy / "config.json").write_bytes(text.encode("latin-1"))
    expect_error(copy, "config.json", *words)


@pytest.mark.parametrize("change,words", [
    ({"d_model": 15}, ("divisible",)), ({"scale_scores": "false"}, ("scale_scores",)),
    ({"colour": "red"}, ("unknown config keys", "colour")), ({"tgt_vocab_size": 7}, ("tokenizer_tgt.json", "7")),
])
def test_config_with_bad_values(copy, tiny_model_dir, change, words):
    cfg = json.loads((tiny_model_dir / "config.json").read_text()) | change
    (copy / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    msg = expect_error(copy, "tokenizer_tgt.json" if "tgt_vocab_size" in change else "config.json", *words)
    assert "Traceback" not in msg


def test_bad_tokenizer(copy):
    (copy / "tokenizer_tgt.json").write_text("[]", encoding="utf-8")
    expect_error(copy, "tokenizer_tgt.json", "not a valid tokenizer")


def test_unknown_bundled_name():
    with pytest.raises(ModelLoadError) as err:
        load("klingon")
    assert "klingon" in str(err.value) and "seed-example" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("pe,tie_output", [("sinusoidal", True), ("learned", False)])
def test_round_trip_of_tied_and_learned_position_models(tmp_path, tiny_model_factory, pe, tie_output):
    """The positional table and the tied projection come out of a saved folder as they went in."""
    from model.transformer import Transformer

    folder = tiny_model_factory(tmp_path / "m", pe=pe, tie_output=tie_output)
    lm = load(folder)
    m = lm.model
    assert (m.generator.weight is m.tgt_embed.weight) == tie_output
    fresh = Transformer(lm.cfg)
    if pe == "sinusoidal":
        assert torch.equal(m.pe, fresh.pe)
    saved = load_file(str(folder / WEIGHTS))
    for k, v in m.state_dict().items():
        if k in saved:
            assert torch.equal(v, saved[k].float()), k
    assert m.training is False
    a = translate(lm, "the cat sat")
    assert a.out_ids == translate(load(folder), "the cat sat").out_ids


def test_a_folder_without_a_config_is_said_to_be_no_model_folder(tmp_path):
    """QA opened a folder of notes as a model and read "…/config.json: file is missing"."""
    folder = tmp_path / "lesson notes"
    folder.mkdir()
    (folder / "notes.txt").write_text("attention", encoding="utf-8")
    with pytest.raises(ModelLoadError) as err:
        load(folder)
    msg = str(err.value)
    assert msg.startswith(f"{folder}: not a model folder (it has no config.json).") and "\n" not in msg
    assert "weights and the tokenizer" in msg


def test_a_config_of_absurd_sizes_is_refused_by_its_shapes_before_any_memory_is_asked(copy, monkeypatch):
    """d_model 1048576 and d_ff 16777216 in config.json asked for 33 GB: "unexpected RuntimeError: … can't allocate
    memory", and the window kept no model (QA). The weights' shapes are compared first, on a model without memory."""
    cfg = json.loads((copy / "config.json").read_text())
    cfg.update(d_model=1048576, h=1, d_ff=16777216)
    (copy / "config.json").write_text(json.dumps(cfg))
    built = []
    real_init = torch.nn.Linear.__init__

    def watch(self, *args, **kwargs):
        built.append(torch.empty(1).device)                 # the device a factory would allocate on
        real_init(self, *args, **kwargs)
    monkeypatch.setattr(torch.nn.Linear, "__init__", watch)
    expect_error(copy, WEIGHTS, "config needs", "1048576")
    assert built and all(d.type == "meta" for d in built)          # nothing of that size was allocated


def test_a_file_of_the_folder_that_is_a_pipe_or_a_folder_is_called_so_not_missing(copy):
    """A FIFO or a folder in place of tokenizer_src.json read "file is missing" (QA)."""
    import os
    from model.families import check
    (copy / "tokenizer_src.json").unlink()
    os.mkfifo(copy / "tokenizer_src.json")
    for opening in (load_model, check):
        with pytest.raises(ModelLoadError) as err:
            opening(copy)
        assert str(err.value) == (f"{copy / 'tokenizer_src.json'}: not a regular file (a folder, a device, a pipe "
                                  "or a socket)")


def test_checking_a_folder_before_it_opens_imports_no_torch():
    """The window checks --model before it opens and loads torch in the background: the check's file test (once
    in model.checkpoint) imported torch at the start."""
    import subprocess
    import sys
    code = ("import sys, model.families as f; f.check('en-fr'); f.check('en-de'); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr[-500:]
