"""Hugging Face folders whose tokenizer is a sentencepiece model, as the hub ships them (OPUS-MT's source.spm,
target.spm and vocab.json, with one vocabulary or separate ones; T5's spiece.model alone; Llama's tokenizer.model),
built tiny with sentencepiece models trained here: opened as a folder and as a cached model id, the output is
transformers' own generate, every label is the tokenizer's own piece (word starts bare, as every family shows them),
the attention is transformers' output_attentions; the folder's generation settings apply where the window has none;
a pickled folder gets a command that converts it; a missing sentencepiece gets one line naming the install."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

import hf_tiny  # noqa: E402
from model.assets import ModelLoadError  # noqa: E402
from model.config import DecodingSettings  # noqa: E402
from model.families import load, translate  # noqa: E402

SENTENCE = "the cat sat on the mat ."
TARGET = "le chat était assis sur le tapis ."
ROOT = Path(__file__).resolve().parents[2]
_BUILT: dict = {}


def _folder(family, tmp_path_factory):
    if family not in _BUILT:
        _BUILT[family] = hf_tiny.build(family, tmp_path_factory.mktemp(family) / "model")
    return _BUILT[family]


@pytest.fixture(params=hf_tiny.SENTENCEPIECE)
def built(request, tmp_path_factory):
    return request.param, _folder(request.param, tmp_path_factory)


@pytest.fixture(params=["marian-spm", "marian-separate"])
def marian(request, tmp_path_factory):
    return request.param, _folder(request.param, tmp_path_factory)


def shown(token: str, specials) -> str:
    """A piece as every family labels it: specials as stored, sentencepiece's ▁ read as a space and the ends
    stripped (a lone ▁ as ␣), a byte-fallback piece as its byte; a piece with a letter and no ▁ continues the word
    before it: "##" in front, as the seed's and BERT's."""
    if token in specials:
        return token
    if re.fullmatch(r"<0x[0-9A-F]{2}>", token):
        text = bytes([int(token[3:5], 16)]).decode("utf-8", "replace")
    else:
        text = token.replace("\u2581", " ")
    text = text.strip() or "␣"
    return "##" + text if not token.startswith("\u2581") and any(c.isalnum() for c in text) else text


def shown_text(tokens: list[str], specials) -> list[str]:
    """A text's pieces in order: the first, and one after a special or a lone ▁, continue nothing."""
    out = [shown(t, specials) for t in tokens]
    return [p[2:] if p.startswith("##") and (i == 0 or tokens[i - 1] in specials or tokens[i - 1] == "\u2581")
            else p for i, p in enumerate(out)]


def _generated(family, folder, ids: list[int], **kw) -> list[int]:
    """transformers' own generate on the ids, the output cut after the first end token."""
    ref = hf_tiny.reference_model(family, folder)
    x = torch.tensor([ids])
    with torch.no_grad():
        seq = ref.generate(x, attention_mask=torch.ones_like(x), **kw)[0].tolist()
    new = seq[1:] if family in hf_tiny.ENCODER_DECODER else seq[len(ids):]
    eos = ref.generation_config.eos_token_id
    return new[: new.index(eos) + 1] if eos in new else new


def test_the_output_labels_and_attention_are_transformers_own(built):
    family, folder = built
    lm = load(folder)
    result = translate(lm, SENTENCE, DecodingSettings(max_new=8))
    t, tok = result.trace, hf_tiny.tokenizer(folder)
    specials = set(tok.all_special_tokens)
    ids = tok(SENTENCE)["input_ids"]
    assert result.out_ids == _generated(family, folder, ids, num_beams=1, do_sample=False, max_new_tokens=8)
    assert result.text == tok.decode(result.out_ids, skip_special_tokens=True).strip()
    if family in hf_tiny.ENCODER_DECODER:
        start = lm.model.generation_config.decoder_start_token_id
        source = tok.tokenize(SENTENCE) + [tok.eos_token]               # the pieces the tokenizer cut the text into
        rows, chosen = [start] + result.out_ids[:-1], result.out_ids
        assert t.src_tokens == shown_text(source, specials)
    else:                                   # one row a token of the prompt and the output, each choosing the next
        source = tok.convert_ids_to_tokens(ids)
        rows, chosen = (ids + result.out_ids)[:-1], (ids + result.out_ids)[1:]
    assert t.tgt_tokens == shown_text(tok.convert_ids_to_tokens(rows), specials)
    # each row's choice read as the text goes on, as the next row reads it (not each piece alone)
    assert t.out_tokens == shown_text(tok.convert_ids_to_tokens(rows[:1] + chosen), specials)[1:]
    assert any(p.startswith("\u2581") for p in source) and not any("\u2581" in p for p in t.src_tokens + t.tgt_tokens)
    ref, logits = hf_tiny.reference(family, folder, result)
    for kind, layers in ref.items():
        for layer, expected in enumerate(layers):
            np.testing.assert_allclose(t.attention(kind, layer), expected, atol=1e-6)
    np.testing.assert_allclose(t["logits"], logits, atol=1e-4)


def test_each_marian_side_is_labelled_from_its_own_vocabulary(marian):
    """vocab.json names the source's ids, target_vocab.json (when the vocabularies are separate) the decoder's: the
    rows, the output and the output panel's vocabulary; a target is read with the target's sentencepiece model."""
    family, folder = marian
    source = {i: p for p, i in json.loads((folder / "vocab.json").read_text(encoding="utf-8")).items()}
    target_file = folder / ("target_vocab.json" if family == "marian-separate" else "vocab.json")
    target = {i: p for p, i in json.loads(target_file.read_text(encoding="utf-8")).items()}
    lm = load(folder)
    specials = {"</s>", "<unk>", "<pad>"}
    tok = hf_tiny.tokenizer(folder)
    result = translate(lm, SENTENCE, target=TARGET)
    forced = tok(text_target=TARGET)["input_ids"]
    assert result.out_ids == forced and result.trace.meta["mode"] == "teacher-forced"
    ids = tok(SENTENCE)["input_ids"]
    assert result.trace.src_tokens == shown_text([source[i] for i in ids], specials)
    # read as the text goes on: "é" after a lone "␣", as the rows read it (it was "##é" in the chips; QA)
    assert result.trace.out_tokens == shown_text(["<pad>"] + [target[i] for i in forced], specials)[1:]
    assert result.trace.tgt_tokens == shown_text(["<pad>"] + [target[i] for i in forced[:-1]], specials)
    assert lm.tgt_tok.pieces(range(lm.tgt_tok.vocab_size)) == [shown(target[i], specials) for i in range(len(target))]
    assert lm.tgt_tok.vocab_size == result.trace["logits"].shape[-1] == len(target)
    assert lm.src_tok.decode(ids) == SENTENCE and result.text == TARGET
    if family == "marian-separate":      # the two vocabularies name these ids differently: a mix-up would show
        assert [source[i] for i in ids] != [target.get(i) for i in ids]


def test_a_cached_opus_mt_id_opens_as_its_folder(tmp_path, monkeypatch, tmp_path_factory):
    folder = _folder("marian-spm", tmp_path_factory)
    monkeypatch.setenv("HF_HUB_CACHE", str(hf_tiny.hub_cache(tmp_path / "hub", "Helsinki-NLP/opus-mt-tiny", folder)))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = load("Helsinki-NLP/opus-mt-tiny")
    assert lm.name == "Helsinki-NLP/opus-mt-tiny" and lm.family == "hf.marian"
    cached, direct = translate(lm, SENTENCE), translate(load(folder), SENTENCE)
    assert cached.out_ids == direct.out_ids and cached.trace.src_tokens == direct.trace.src_tokens
    np.testing.assert_array_equal(cached.trace.attention("cross", 1), direct.trace.attention("cross", 1))


def _copy_with(folder: Path, dst: Path, edit) -> Path:
    """The folder again, its model changed by edit(model) and saved (safetensors)."""
    import shutil
    shutil.copytree(folder, dst)
    model = tf.MarianMTModel.from_pretrained(str(dst))
    edit(model)
    model.save_pretrained(str(dst))
    return dst


def test_the_folders_generation_settings_apply_where_the_window_has_none(tmp_path, tmp_path_factory):
    """OPUS-MT's generation_config says bad_words_ids [[pad]], num_beams 4: the pad token is never chosen even when
    the model scores it highest; the window's method and beam width replace num_beams; the folder's max_new_tokens
    bounds the app's default length, and the window's max_new replaces it."""
    folder = _folder("marian-spm", tmp_path_factory)
    pad = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))["<pad>"]

    def prefer_pad(model):
        with torch.no_grad():
            model.final_logits_bias[0, pad] = 50.0
        model.generation_config.max_new_tokens = 3
    changed = _copy_with(folder, tmp_path / "m", prefer_pad)
    lm = load(changed)
    ids = hf_tiny.tokenizer(changed)(SENTENCE)["input_ids"]
    greedy = translate(lm, SENTENCE)
    assert len(greedy.out_ids) <= 3 and pad not in greedy.out_ids
    assert int(greedy.trace["logits"][0].argmax()) == pad           # the model alone would have chosen pad
    assert greedy.out_ids == _generated("marian", changed, ids, num_beams=1)
    longer = translate(lm, SENTENCE, DecodingSettings(max_new=6))
    assert len(longer.out_ids) == 6 and longer.out_ids == _generated("marian", changed, ids, num_beams=1,
                                                                     max_new_tokens=6)
    beam = translate(lm, SENTENCE, DecodingSettings(method="beam", beam=2, max_new=6))
    assert beam.out_ids == _generated("marian", changed, ids, num_beams=2, max_new_tokens=6)


@pytest.mark.slow
def test_a_pickled_folder_is_refused_with_a_command_that_converts_it(tmp_path, tmp_path_factory):
    import shutil

    from safetensors.torch import load_file
    folder = _folder("marian-spm", tmp_path_factory)
    pickled = tmp_path / "opus"
    shutil.copytree(folder, pickled)
    torch.save(load_file(pickled / "model.safetensors"), pickled / "pytorch_model.bin")
    (pickled / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError) as e:
        load(pickled)
    msg = str(e.value)
    assert "\n" not in msg and "pytorch_model.bin" in msg and "safe_serialization=True" in msg
    command = msg.split(": python -c ", 1)[1].rsplit(" and open ", 1)
    out = subprocess.run([sys.executable, "-c", shlex.split(command[0])[0]], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    converted = load(command[1])
    assert Path(command[1]) == tmp_path / "opus-safetensors"
    assert translate(converted, SENTENCE).out_ids == translate(load(folder), SENTENCE).out_ids


@pytest.mark.slow
@pytest.mark.parametrize("family, blocked, package", [("marian-spm", "sentencepiece", "sentencepiece"),
                                                     ("t5-spm", "google.protobuf", "protobuf")])
def test_without_its_package_a_sentencepiece_folder_says_how_to_install_it(family, blocked, package,
                                                                             tmp_path_factory):
    folder = _folder(family, tmp_path_factory)
    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            "from model.assets import ModelLoadError\nfrom model.families import load\n"
            f"try:\n    load({str(folder)!r})\nexcept ModelLoadError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and f"pip install {package}" in lines[0] and str(folder) in lines[0], out.stdout


def test_a_given_targets_unknown_piece_reads_as_a_replacement_mark_in_the_translation(marian):
    """A target with an emoji: the decoder reads <unk> for it, and the translation's line read "le chat était assis"
    with no trace of it, while the note said it was "shown as <unk>, and as � in the text" (QA)."""
    from model.notes import result_notes
    _, folder = marian
    lm = load(folder)
    target = "le chat 🍕 était assis"
    result = translate(lm, SENTENCE, target=target)
    unk = lm.tgt_tok.tok.unk_token_id
    assert unk in result.out_ids
    assert result.text.split() == ["le", "chat", "�", "était", "assis"]
    assert any("and as � in the text" in n for n in result_notes(result.trace, lm.cfg.max_len))
    assert "�" not in translate(lm, SENTENCE, target=TARGET).text


@pytest.mark.parametrize("gone", [("target.spm",), ("source.spm", "vocab.json")])
def test_an_opus_mt_folder_without_one_of_its_tokenizer_files_names_it(gone, tmp_path, tmp_path_factory):
    """QA: a folder copied without target.spm read "cannot read its tokenizer (Either model_file or model_proto must
    be specified.)"."""
    import shutil
    folder = shutil.copytree(_folder("marian-spm", tmp_path_factory), tmp_path / "opus")
    for name in gone:
        (folder / name).unlink()
    with pytest.raises(ModelLoadError) as e:
        load(folder)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{folder}: its Marian (OPUS-MT) tokenizer needs source.spm, target.spm "
                                              "and vocab.json")
    assert f"; {' and '.join(gone)} {'is' if len(gone) == 1 else 'are'} missing" in msg


def test_a_given_targets_unknown_piece_reads_as_the_tokenizer_spaces_it(tmp_path_factory):
    """An unknown piece was read "�" between spaces added around it: a T5's "אמרתי" with an unknown letter read
    "א � רתי" (QA). It is decoded with its neighbours, spaced as the tokenizer spaces them."""
    lm = load(_folder("t5-spm", tmp_path_factory))
    run = translate(lm, SENTENCE, DecodingSettings(), target="le chat😀noir")
    assert "<unk>" in run.trace.out_tokens and run.text == "le chat�noir"
