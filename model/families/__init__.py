"""Model families behind one interface: a family opens a model folder and gives back a model with its schema,
its tokenizers and a traced run (sentence, decoding settings -> Translation whose Trace carries the schema).

    load(name_or_folder)            a bundled name ('en-fr', 'seed-example') or any folder, whatever its family
    translate(lm, text, ...)        the family's traced run
    generate_steps(lm, text, ...)   a Trace per token written, for every family

A family is a module with NAME, recognises(config: dict) -> bool, open(folder, name) -> model and
translate(lm, text, settings, target, positional, previous). Adding one is one module and one line in FAMILIES.
Nothing here imports torch until a model is opened.
"""
from __future__ import annotations

import difflib
import importlib
import json
from contextlib import contextmanager
from pathlib import Path

from ..ablation import AblationError
from ..assets import CONFIG, SRC_TOK, TGT_TOK, WEIGHTS, ModelLoadError, bundled_models, model_folder, reason

# modules under model/families/, asked in this order
FAMILIES = ("seed", "hf.gpt2", "hf.gpt_neo", "hf.gpt_neox", "hf.phi", "hf.opt", "hf.bert", "hf.roberta",
            "hf.distilbert", "hf.marian", "hf.bart", "hf.t5", "hf.llama", "hf.gemma")


def family(name: str):
    """A family's module by its name."""
    if name not in FAMILIES:
        raise ModelLoadError(f"unknown model family {name!r} (supported: {', '.join(FAMILIES)})")
    return importlib.import_module(f"{__name__}.{name}")


def family_for(folder: Path):
    """The family that can open a folder, from its config.json; raises ModelLoadError naming what is supported."""
    path = folder / CONFIG
    if not path.is_file():           # "…/config.json: file is missing" did not say what was wrong with the folder (QA)
        raise ModelLoadError(f"{folder}: not a model folder (it has no {CONFIG}). A model folder holds {CONFIG}, the "
                             "weights and the tokenizer: one the app's train command wrote, or a Hugging Face "
                             "model's, as save_pretrained writes it")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{path}: not valid JSON ({reason(e, 120)})") from None
    if not isinstance(config, dict):
        raise ModelLoadError(f"{path}: not a model config (a JSON object was expected)")
    for name in FAMILIES:
        fam = family(name)
        if fam.recognises(config):
            return fam
    kind = config.get("model_type")
    if not kind:                # "model type 'unknown'" read as a type of that name (QA)
        # and "model type ['GPT2LMHeadModel'] is not supported" of a GPT-2 whose model_type was removed (QA)
        archs = config.get("architectures")
        named = f" (its architectures: {', '.join(map(str, archs))})" if isinstance(archs, list) and archs else ""
        raise ModelLoadError(f"{path}: names no model_type{named}, and is not this app's own config (supported "
                             f"families: {supported()})")
    raise ModelLoadError(f"{path}: model type {kind!r} is not supported (supported families: {supported()})")


def supported() -> str:
    """The families by the names users know: 'seed (this app's), GPT-2, BERT, ...'."""
    return ", ".join(getattr(family(n), "TITLE", f"{n} (this app's)") for n in FAMILIES)


def _cached(name: str) -> Path | None:
    """The local Hugging Face cache folder of a model id ('gpt2', 'Helsinki-NLP/opus-mt-en-de'); None when the
    name cannot be an id; ModelLoadError when it can but is not in the cache."""
    from .hf.folder import cached_snapshot, looks_like_id
    if not looks_like_id(name):
        return None
    try:
        return cached_snapshot(name)
    except ModelLoadError:
        near = difflib.get_close_matches(name, bundled_models(), n=2, cutoff=0.6) if "/" not in name else []
        if near:          # a bundled name mistyped ("en-fe") was told how to download it from the Hub
            raise ModelLoadError(f"{name}: no such model; did you mean {' or '.join(near)}?") from None
        raise


def load(name_or_folder: str | Path):
    """Open a bundled model by name ('en-fr', 'seed-example') or any model folder by path."""
    if not str(name_or_folder).strip():        # "--model ' '" read "error: : no such model" (QA)
        raise ModelLoadError(f"no model named: give a bundled model ({', '.join(bundled_models())}) or a model folder")
    folder = model_folder(name_or_folder)
    if folder is None:
        from .seed import open_seed_example
        return open_seed_example()
    if folder != Path(name_or_folder):                   # a bundled name
        return family_for(folder).open(folder, str(name_or_folder))
    if not folder.exists():
        try:
            snapshot = _cached(str(name_or_folder))
        except ModelLoadError as e:
            raise ModelLoadError(f"{e} (bundled: {', '.join(bundled_models())})") from None
        if snapshot is None:
            raise ModelLoadError(f"{name_or_folder}: no such model (bundled: {', '.join(bundled_models())})")
        return family_for(snapshot).open(snapshot, str(name_or_folder))
    if not folder.is_dir():
        raise ModelLoadError(f"{folder}: not a model folder (it does not exist or is not a directory)")
    return family_for(folder).open(folder, None)


def existing_folder(name_or_folder: str | Path) -> Path | None:
    """The folder a name opens (a bundled one, a path, a cached id), if it is one on disk; no torch. ModelLoadError
    for a name that can only be a model id and is not in the local cache."""
    folder = model_folder(name_or_folder)
    if folder is not None and not folder.exists():
        folder = _cached(str(name_or_folder)) or folder
    return folder if folder is not None and folder.is_dir() else None


def schema_of(name_or_folder: str | Path):
    """A model's schema from its folder's config alone (no weights, no torch for folders); raises ModelLoadError."""
    folder = existing_folder(name_or_folder)
    if folder is None:
        return load(name_or_folder).schema
    return family_for(folder).schema_of_folder(folder)


def check(name_or_folder: str | Path) -> None:
    """What can be checked before a model is opened, in a moment and without torch: the folder, its config and,
    for Hugging Face folders, the files (safetensors only and whole, a tokenizer, the memory it needs).
    ModelLoadError (one line) when opening it would fail for one of these."""
    folder = existing_folder(name_or_folder) if str(name_or_folder).strip() else None
    if folder is None:
        schema_of(name_or_folder)
        return
    fam = family_for(folder)
    fam.schema_of_folder(folder)
    if fam.NAME.startswith("hf."):
        from .hf.folder import auto_class_name, check_folder, read_config
        # the conversion a pickle-only folder is told to run keeps the model's head (AutoModel dropped BERT's)
        check_folder(folder, auto_class_name(fam, read_config(folder)))
    else:                           # this app's folders: the files model.checkpoint reads
        pickled = [p.name for p in (folder / "pytorch_model.bin", folder / "model.pt") if p.is_file()]
        if pickled and not (folder / WEIGHTS).is_file():
            raise ModelLoadError(f"{folder}: only {pickled[0]} (a pickle, which can run code when loaded); this app "
                                 f"loads {WEIGHTS} only")
        from ..assets import check_safetensors, required_file   # (model.checkpoint would import torch)
        for name in (WEIGHTS, SRC_TOK, TGT_TOK):
            required_file(folder, name)
        check_safetensors(folder / WEIGHTS)        # whole: a weights file cut short failed only once loaded (QA)


@contextmanager
def positions_kept(lm):
    """lm's positional switch as it was once the block is over (translate's positional= lasts from a run on): the
    seed family keeps it on its torch module, a Hugging Face model on itself."""
    holder = lm if hasattr(lm, "positional") else lm.model
    before = holder.positional
    try:
        yield
    finally:
        holder.positional = before


def translate(lm, text: str, *args, **kwargs):
    """The traced run of lm's family: translate(lm, text, settings=None, target=None, positional=None,
    ablations=None, forced_ids=None); see model.decoding.translate for what each means. TypeError, in one line, for
    arguments of the wrong kind (a model's name for the model, a dict for the settings: QA had AttributeErrors)."""
    from ..config import DecodingSettings
    if not hasattr(lm, "family"):
        raise TypeError(f"translate takes a model opened with model.load (load({lm!r})), not a {type(lm).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"translate takes the text as a str, not a {type(text).__name__}")
    settings = args[0] if args else kwargs.get("settings")
    if settings is None:            # the default, as the docstring says (None had raised an AttributeError: a review)
        if args:
            args = (DecodingSettings(), *args[1:])
        else:
            kwargs = {**kwargs, "settings": DecodingSettings()}
    elif not isinstance(settings, DecodingSettings):
        raise TypeError(f"settings: a DecodingSettings (DecodingSettings(method='beam', beam=4)), not a "
                        f"{type(settings).__name__}")
    return family(lm.family).translate(lm, text, *args, **kwargs)


def generate_steps(lm, text: str, settings=None):
    """One Trace per token the model writes, for any family: the t-th holds the state after t+1 tokens were chosen
    (its rows those of the whole run's first t+1, its meta's "step" t). Each is the run forced through the tokens
    chosen so far, labelled with the settings that chose them. (It had been the seed models' alone: a GPT-2 or T5
    raised AttributeError, QA as a researcher.) An encoder-only model writes no tokens: ValueError saying so."""
    from ..config import DecodingSettings
    from ..trace import Trace
    settings = settings or DecodingSettings()
    refusal = writes_text(lm)
    if refusal is not None:
        raise ValueError(refusal)
    whole = translate(lm, text, settings)
    label = {"mode": settings.method, "decoding": whole.trace.meta.get("decoding", settings.describe())}
    for t in range(1, len(whole.out_ids) + 1):
        step = translate(lm, text, settings, forced_ids=whole.out_ids[:t]).trace
        yield Trace(step.src_tokens, step.tgt_tokens, step.out_tokens, step.arrays,
                    dict(step.meta, **label, step=t - 1, translation=whole.text), step.schema)


def output_pieces(lm) -> list[str]:
    """The pieces of lm's output vocabulary, by id: what the window labels the output distribution with."""
    return lm.tgt_tok.pieces(range(lm.tgt_tok.vocab_size))


def title(lm) -> str:
    """The family's name as users know it ('BERT', 'GPT-2'; this app's translators: 'seed')."""
    return getattr(family(lm.family), "TITLE", "seed")


def writes_text(lm) -> str | None:
    """None when lm writes text of its own (a translator, a decoder-only model); else one line saying why not: an
    encoder-only model reads its input and predicts masked words, so a translation would only echo the input."""
    from ..schema import ENCODER_ONLY
    if getattr(getattr(lm, "schema", None), "layout", None) != ENCODER_ONLY:
        return None
    return (f"{lm.name} is an encoder-only model ({title(lm)}): it reads a text but writes none, so there is no "
            "translation to give or score; open it in the window to see its attention and masked-word predictions, "
            "or use `metrics` and `export`")


def scoring_note(lm) -> str | None:
    """A note for commands that score translations (evaluate, check-translations) when lm is decoder-only: what
    is scored is its continuation of each source sentence, which a language model does not mean as a
    translation (a GPT-2 got "BLEU 1.14" with no word said)."""
    from ..schema import DECODER_ONLY
    if getattr(getattr(lm, "schema", None), "layout", None) != DECODER_ONLY:
        return None
    return (f"{lm.name} is a decoder-only model ({title(lm)}): what is scored is its continuation of each source "
            "sentence (the sentence itself left out), a translation only if the model learned to write one there")


def can_preview(lm) -> bool:
    """Whether translate(lm, ..., preview=callback) shows a first, partial run before generating (large Hugging Face
    models: see hf/loaded.py)."""
    return bool(getattr(lm, "previews", False))


def can_ablate(lm) -> bool:
    """Whether the family that opened lm can switch heads off (its module says CAN_ABLATE = True)."""
    return bool(getattr(family(lm.family), "CAN_ABLATE", False))


def require(lm, ablations) -> None:
    """AblationError (one line) when heads are to be switched off in a model whose family cannot."""
    if ablations and not can_ablate(lm):
        raise AblationError(f"switching heads off is not available for {lm.family} models yet "
                            "(only the seed transformer's heads can be ablated)")
