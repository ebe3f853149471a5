"""`attention-visualizer convert MODEL --to-hf DIR [--force]`: write one of this app's models as a Hugging Face
Marian folder (model/families/hf/to_marian.py), no window."""
from __future__ import annotations

from model.command_line import ArgumentParser, CommandError, UsageError, command

from .translate_command import load_model_arg


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer convert",
                       description="Write a model of this app (a bundled name or a model folder) as a Hugging Face "
                                   "Marian folder: MarianMTModel.from_pretrained(DIR) then translates as the app does "
                                   "(greedy, the same tokens); the target tokenizer is in DIR/target_tokenizer. "
                                   'Needs transformers: pip install -e ".[hf]".')
    p.add_argument("model", help="bundled model name or model folder (this app's own models)")
    p.add_argument("--to-hf", required=True, metavar="DIR", help="the folder to write (it must not exist or be empty)")
    p.add_argument("--force", action="store_true", help="replace DIR when it holds a model this command wrote")
    a = p.parse_args(argv)
    import importlib.util
    if importlib.util.find_spec("transformers") is None:     # before the model loads (it said so after, and of
        from model.families.hf.folder import INSTALL          # "opening" a Hugging Face model, QA)
        raise UsageError(f"convert writes a folder for the transformers package, which is not installed: {INSTALL}")
    from model.families.hf.to_marian import ConvertError, ConvertFailed, check_destination, convert, refusal
    try:
        check_destination(a.to_hf, a.force)          # before the model loads; again with its folder in convert
    except ConvertError as e:
        raise UsageError(str(e)) from None
    lm = load_model_arg(a.model)
    why = refusal(lm)
    if why:
        raise UsageError(why)
    from model import ModelLoadError
    try:
        done = convert(lm, a.to_hf, force=a.force)
    except ModelLoadError as e:                       # transformers is not installed
        raise CommandError(str(e)) from None
    except ConvertFailed as e:
        raise CommandError(str(e)) from None
    except ConvertError as e:
        raise UsageError(str(e)) from None
    print(f"wrote {done.folder} (Marian, {done.parameters / 1e6:.1f} M parameters; its logits differ from the app's "
          f"by at most {done.difference:.1g}); open it with MarianMTModel.from_pretrained and AutoTokenizer, or "
          f"attention-visualizer --model {done.folder}")
    return 0
