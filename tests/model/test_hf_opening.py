"""Opening Hugging Face models the ways a user can, and every way it can go wrong in one line: a model id in a local
cache laid out as the hub lays it out (never downloaded), an id that is not there, a pickled pytorch_model.bin,
an unknown model type, no tokenizer, a truncated safetensors file, transformers not installed; and the app's
start does not import transformers."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("transformers")

import hf_tiny  # noqa: E402
from model.assets import ModelLoadError  # noqa: E402
from model.families import load, schema_of, translate  # noqa: E402


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    return hf_tiny.build("gpt2", tmp_path_factory.mktemp("gpt2") / "model")


def _copy(src, dst, drop=()):
    shutil.copytree(src, dst)
    for name in drop:
        (dst / name).unlink()
    return dst


def test_a_model_id_in_the_local_cache_opens_offline(gpt2_folder, tmp_path, monkeypatch):
    cache = hf_tiny.hub_cache(tmp_path / "hub", "tiny-org/tiny-gpt2", gpt2_folder)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = load("tiny-org/tiny-gpt2")
    assert lm.name == "tiny-org/tiny-gpt2" and lm.family == "hf.gpt2"
    assert schema_of("tiny-org/tiny-gpt2") == lm.schema
    direct = translate(load(gpt2_folder), "the cat").trace
    np.testing.assert_array_equal(translate(lm, "the cat").trace.attention("self", 1), direct.attention("self", 1))


def test_a_missing_model_id_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelLoadError) as e:
        load("some-org/not-here")
    msg = str(e.value)
    assert "\n" not in msg and "hf download some-org/not-here" in msg and str(tmp_path) in msg


SIZES = {"a count as words": ("n_layer", "two"), "no heads": ("n_head", 0), "no layers": ("n_layer", 0),
         "a width as words": ("n_inner", "x"), "a negative width": ("n_embd", -4),
         "a fractional count": ("n_layer", 2.5), "a null head count": ("n_head", None)}


@pytest.mark.parametrize("case", ["bin only", "unknown family", "no model type", "no tokenizer", "truncated", "bad header",
                                  "a layer missing", "another model's weights", "a larger tokenizer",
                                  "a count as words", "no heads", "a width as words", "a smaller vocabulary",
                                  "no layers", "only architectures", "a null tokenizer", "a bad generation config",
                                  "a missing shard", "a negative width", "a fractional count",
                                  "heads that do not split the width", "no head count", "a null head count",
                                  "an empty weights file", "a layer's tensor missing", "a hundred million layers"])
def test_bad_folders_are_one_line(gpt2_folder, tmp_path, case):
    from safetensors.torch import load_file, save_file
    folder = _copy(gpt2_folder, tmp_path / "m")
    weights = folder / "model.safetensors"
    if case == "a layer missing":       # transformers would fill them at random and say nothing
        save_file({k: v for k, v in load_file(weights).items() if ".h.1." not in k}, weights, {"format": "pt"})
        expect = f"{folder / 'config.json'}: n_layer is 2, but the weights hold at most 1 layer"
    elif case == "a layer's tensor missing":
        save_file({k: v for k, v in load_file(weights).items() if k != "transformer.h.1.attn.c_attn.weight"},
                  weights, {"format": "pt"})
        expect = "weights lack 1 of the model's tensors (transformer.h.1.attn.c_attn.weight)"
    elif case == "a hundred million layers":   # built layer after layer for minutes, to 23 GB (QA)
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "n_layer": 100_000_000}))
        expect = f"{folder / 'config.json'}: n_layer is 100,000,000, but the weights hold at most 2 layers"
    elif case == "another model's weights":
        shutil.copy(hf_tiny.build("bert", tmp_path / "bert") / "model.safetensors", weights)
        expect = "they would be random"
    elif case == "a larger tokenizer":  # its last ids would index past the embedding table
        config = json.loads((folder / "config.json").read_text())
        size = config["vocab_size"]
        (folder / "config.json").write_text(json.dumps({**config, "vocab_size": size - 5}))
        save_file({k: (v[: size - 5] if v.shape[0] == size else v) for k, v in load_file(weights).items()}, weights,
                  {"format": "pt"})
        expect = f"the tokenizer has {size} tokens but the model's embedding table only {size - 5} rows"
    elif case in SIZES:   # "unexpected TypeError / ZeroDivisionError / IndexError", "'<' not supported between
        key, value = SIZES[case]      # instances of 'str' and 'int'", "negative dimension -4", a tokenizer blamed
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, key: value}))
        expect = f"{folder / 'config.json'}: {key} is {json.dumps(value)}; a size must be a whole number, 1 or more"
    elif case == "heads that do not split the width":    # "cannot load the weights (`embed_dim` must be divisible…"
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "n_head": 5}))
        expect = (f"{folder / 'config.json'}: n_embd {config['n_embd']} cannot be split among n_head 5 heads (each "
                  f"head takes n_embd / heads of it")
    elif case == "no head count":          # the family's default, 12, does not split 32
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({k: v for k, v in config.items() if k != "n_head"}))
        expect = (f"a width of {config['n_embd']} cannot be split among 12 heads (config.json gives no head count, "
                  "and 12 is the family's default)")
    elif case == "a smaller vocabulary":  # "…look at the above report!", a report printed to nobody
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "vocab_size": 10}))
        expect = "cannot load the weights (the tensors' shapes do not match config.json's sizes"
    elif case == "bin only":
        weights.rename(folder / "pytorch_model.bin")
        expect = "pytorch_model.bin"
    elif case == "unknown family":
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "model_type": "xlnet"}))
        expect = ("GPT-2, GPT-Neo, GPT-NeoX/Pythia, Phi, OPT, BERT, RoBERTa/XLM-RoBERTa/CamemBERT, DistilBERT, Marian, "
                  "BART/mBART, T5, Llama/Mistral/Qwen/Phi-3, Gemma/Gemma 2/Gemma 3")
    elif case == "no model type":          # read "model type 'unknown' is not supported"
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({k: v for k, v in config.items()
                                                        if k not in ("model_type", "architectures")}))
        expect = "config.json: names no model_type, and is not this app's own config (supported families: "
    elif case == "only architectures":     # read "model type ['GPT2LMHeadModel'] is not supported" (QA)
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**{k: v for k, v in config.items() if k != "model_type"},
                                                        "architectures": ["GPT2LMHeadModel"]}))
        expect = "config.json: names no model_type (its architectures: GPT2LMHeadModel), and is not this app's"
    elif case == "a null tokenizer":       # read "cannot read its tokenizer ('NoneType' object has no attribute…"
        (folder / "tokenizer.json").write_text("null")
        expect = f"{folder / 'tokenizer.json'}: a JSON object was expected, it holds NoneType"
    elif case == "a bad generation config":    # read "cannot load the weights (…max_new_tokens…)"
        (folder / "generation_config.json").write_text(json.dumps({"max_new_tokens": -5}))
        expect = f"{folder / 'generation_config.json'}: not valid for transformers ("
    elif case == "a missing shard":        # read "no *.safetensors weights"
        weights.rename(folder / "model-00001-of-00002.safetensors")
        (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
        expect = "names model-00002-of-00002.safetensors, which is not in the folder"
    elif case == "no tokenizer":
        (folder / "tokenizer.json").unlink()
        expect = "no tokenizer"
    elif case == "an empty weights file":  # read "damaged header" (QA)
        weights.write_bytes(b"")
        expect = f"{weights}: the file is empty (0 bytes): copy the weights again"
    elif case == "truncated":
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) - 100])
        expect = "truncated"
    else:
        weights.write_bytes(b"\xff" * 64)
        expect = "not a valid safetensors"
    with pytest.raises(ModelLoadError) as e:
        load(folder)
    assert "\n" not in str(e.value) and expect in str(e.value)


def test_a_token_added_past_the_embedding_table_is_named_not_an_index_error(gpt2_folder, tmp_path):
    """tokenizer.add_tokens without model.resize_token_embeddings: the folder opens (its other tokens work), and a
    text with the added token is refused naming it, in the input and in a forced continuation."""
    from transformers import AutoTokenizer
    folder = _copy(gpt2_folder, tmp_path / "m")
    tok = AutoTokenizer.from_pretrained(str(folder))
    rows = len(tok)
    tok.add_tokens(["<|new|>"])
    tok.save_pretrained(folder)
    lm = load(folder)
    assert translate(lm, "the cat").trace.tgt_tokens[:2] == ["the", "cat"]
    for text, target, side in (("the cat <|new|>", None, "input"), ("the cat", "<|new|> sat", "target")):
        with pytest.raises(ValueError) as e:
            translate(lm, text, target=target)
        assert str(e.value).startswith(f"the {side} has the token “<|new|>” (id {rows:,})") and "\n" not in str(e.value)


def test_without_transformers_opening_says_which_command_installs_it(gpt2_folder, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)         # import transformers raises ImportError
    with pytest.raises(ModelLoadError) as e:
        load(gpt2_folder)
    assert 'pip install -e ".[hf]"' in str(e.value) and "\n" not in str(e.value)


def test_opening_a_seed_model_or_asking_a_schema_imports_no_transformers(gpt2_folder):
    code = ("import sys; from model.families import load, schema_of; load('seed-example'); "
            f"print(schema_of({str(gpt2_folder)!r}).describe()); print('transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.split("\n")[-2:] == ["False", ""] and "2 layers, 4 heads, d_model 32" in out.stdout


def test_evaluate_scores_an_hf_translator_with_its_own_translations(tmp_path, capsys):
    from model.evaluate import main as evaluate
    folder = hf_tiny.build("marian", tmp_path / "marian")
    (tmp_path / "test.tsv").write_text("the cat sat\tle chat\nthe dog runs\tle chien court\n", encoding="utf-8")
    assert evaluate(["--model", str(folder), "--tsv", str(tmp_path / "test.tsv"), "--hyps",
                     str(tmp_path / "hyps.txt")]) == 0
    assert "BLEU" in capsys.readouterr().out.splitlines()[-1]
    lm = load(folder)
    assert (tmp_path / "hyps.txt").read_text(encoding="utf-8").splitlines() == [
        translate(lm, s).text for s in ("the cat sat", "the dog runs")]


def test_a_mistyped_bundled_name_is_answered_with_the_names_it_is_close_to(tmp_path, monkeypatch):
    """"--model en-fe" was told to run `huggingface-cli download en-fe`; a bare id far from every bundled name
    still is; and the window's check before opening says the same."""
    from model.families import check
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    for opening in (load, check):
        with pytest.raises(ModelLoadError) as e:
            opening("en-fe")
        assert str(e.value).startswith("en-fe: no such model; did you mean en-fr or en-de?")
    with pytest.raises(ModelLoadError, match="hf download gpt3"):
        load("gpt3")


def test_ids_of_a_table_padded_past_its_tokenizer_read_as_ids_not_as_unknown(gpt2_folder, tmp_path):
    """Many folders pad the embedding table past the tokenizer (to a multiple of 64): the Output panel's top tokens
    named those rows "<unk>", the unknown token they are not."""
    from transformers import AutoModelForCausalLM
    folder = _copy(gpt2_folder, tmp_path / "padded")
    model = AutoModelForCausalLM.from_pretrained(str(folder))
    rows = model.get_input_embeddings().weight.shape[0]
    model.resize_token_embeddings(rows + 8)
    model.save_pretrained(folder)
    lm = load(folder)
    assert lm.tgt_tok.vocab_size == rows + 8
    assert lm.tgt_tok.pieces(range(rows, rows + 8)) == [f"<id {i}>" for i in range(rows, rows + 8)]
    assert lm.tgt_tok.pieces([1]) == ["<unk>"]                  # the tokenizer's own unknown token stays itself


def test_a_librarys_error_ending_in_a_colon_keeps_its_reason():
    """transformers' config validation says "Validation error for field 'x':" on its first line and why on the
    next: the one-line message ended in a bare colon (QA, a T5 with relative_attention_num_buckets "32")."""
    from model.assets import reason
    e = ValueError("Validation error for field 'relative_attention_num_buckets':\n  TypeError: expected int, got str\n"
                   "more detail")
    assert reason(e) == ("Validation error for field 'relative_attention_num_buckets': TypeError: expected int, "
                         "got str")
    assert reason(ValueError("one line\nsecond")) == "one line" and reason(KeyError()) == "KeyError"
    assert reason(ValueError("x" * 300), 120) == "x" * 120
