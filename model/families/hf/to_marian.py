"""A seed-family model written as a transformers Marian folder (MarianMTModel + fast tokenizers), translating as the
app does: `MarianMTModel.from_pretrained(folder).generate(...)` chooses the app's greedy token ids.

What differs between the two, and how each is carried over:

- Positions: the seed model interleaves its sinusoids (sin in even dimensions, cos in odd ones); Marian puts every
  sin first and every cos second, pair by pair at the same frequencies. Reordering the residual stream's
  dimensions (residual_order: the even ones first) maps one onto the other exactly: every tensor that reads the
  residual stream (embeddings, W_Q, W_K, W_V, W_1, the output layer) has its d_model columns reordered, every one
  that writes it (W_O, W_2 and their biases) its rows, and LayerNorm's γ and β follow; LayerNorm's mean and variance
  do not depend on the order.
- Scores: Marian always divides q·kᵀ by √d_k; a model that does not has √d_k folded into W_Q and its bias.
- The output layer's bias becomes final_logits_bias; a tied output layer stays tied (tie_word_embeddings), two
  vocabularies stay two (share_encoder_decoder_embeddings false, decoder_vocab_size), one shared table stays one.
- Generation: the decoder starts with <s> (decoder_start_token_id), stops at </s>, never chooses <pad>
  (bad_words_ids, as the app's decoding masks it), is never forced to end (forced_eos_token_id null), and makes at
  most max_len - 1 tokens. The app also stops at 2 × (source tokens with </s>) + 10 new tokens; `generate` has no
  rule of that shape, so pass max_new_tokens for that (the app's own Marian family does).
- Tokenizers: each becomes a fast tokenizer whose normaliser first does what the app's clean_text does (NFKC,
  invisible characters and runs of white space to one space, stripped; the typographic quotes and dashes its
  vocabulary lacks as plain ones) and whose post-processor appends </s>, so
  `tokenizer(text)["input_ids"]` is the app's source ids; the target tokenizer goes to target_tokenizer/ (Marian's
  own tokenizer class reads SentencePiece files, which these are not). <unk> is left an ordinary token that
  decodes to "�", as the app shows it (a tokenizer that names it its unk_token drops it when decoding).

Refused, in one line (ConvertError): learned or no positions (Marian's are fixed sinusoids), a LayerNorm ε other
than torch's 1e-5 (Marian's is fixed), a model of another family.
"""
from __future__ import annotations

import glob
import json
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from safetensors import SafetensorError

from ...assets import CONFIG
from ...config import BOS, EOS, PAD, UNK
from ...text import CONTROL, FORMAT
from ...tokenizer import SPECIALS
from .folder import TARGET_TOKENIZER, transformers

MARIAN_LN_EPS = 1e-5                      # torch's default, which Marian's LayerNorms use and cannot change
TOLERANCE = 1e-3                          # largest |Δ logit| the check after converting accepts


class ConvertError(Exception):
    """A model that cannot become a Marian folder, or a destination that must not be written: one line."""


class ConvertFailed(ConvertError):
    """The conversion was tried and failed (the check found other logits, the disk refused a file): one line."""


def refusal(lm) -> str | None:
    """Why lm cannot become a Marian model (one line), or None when it can."""
    if getattr(lm, "family", "seed") != "seed":
        from .. import family
        title = getattr(family(lm.family), "TITLE", lm.family)
        return f"{lm.name}: only this app's own models convert (this one is already a {title} model)"
    cfg = lm.cfg
    if cfg.pe != "sinusoidal":
        kind = "learned positional encodings" if cfg.pe == "learned" else "no positional encoding"
        return (f"{lm.name}: a model with {kind} cannot become a Marian model "
                "(Marian's positions are fixed sinusoids)")
    if cfg.ln_eps != MARIAN_LN_EPS:
        return (f"{lm.name}: its LayerNorm ε is {cfg.ln_eps:g}; Marian's is fixed at {MARIAN_LN_EPS:g}, "
                "so it cannot become a Marian model")
    return None


def residual_order(d_model: int):
    """order, where Marian's residual dimension i is the seed model's dimension order[i]: the even ones, then the odd
    ones."""
    import torch
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def marian_config(cfg) -> dict:
    """MarianConfig's fields for a ModelConfig."""
    return dict(
        vocab_size=cfg.src_vocab_size, decoder_vocab_size=cfg.tgt_vocab_size, d_model=cfg.d_model,
        encoder_layers=cfg.N_enc, decoder_layers=cfg.N_dec, encoder_attention_heads=cfg.h,
        decoder_attention_heads=cfg.h, encoder_ffn_dim=cfg.d_ff, decoder_ffn_dim=cfg.d_ff,
        max_position_embeddings=cfg.max_len, activation_function="relu", scale_embedding=cfg.scale_embedding,
        dropout=cfg.dropout, attention_dropout=cfg.dropout, activation_dropout=cfg.dropout,
        share_encoder_decoder_embeddings=cfg.share_embeddings, tie_word_embeddings=cfg.tie_output,
        pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS, decoder_start_token_id=BOS, forced_eos_token_id=None,
        architectures=["MarianMTModel"])


def generation_config(cfg) -> dict:
    """GenerationConfig's fields: greedy decoding as the app's (see the module's docstring)."""
    return dict(decoder_start_token_id=BOS, bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD,
                forced_eos_token_id=None, bad_words_ids=[[PAD]], max_length=cfg.max_len, num_beams=1, do_sample=False)


def marian_tensors(model) -> dict:
    """{the Marian module's parameter path: tensor} for a seed Transformer, in Marian's residual order."""
    import torch
    cfg = model.cfg
    order = residual_order(cfg.d_model)
    q_scale = 1.0 if cfg.scale_scores else math.sqrt(cfg.d_k)     # Marian always divides by √d_k

    def reads(w):        # (out, d_model): its input is the residual stream
        return w.detach()[:, order]

    def writes(w):       # (d_model, in) weight or (d_model,) bias: its output is the residual stream
        return w.detach()[order]

    def attention(prefix: str, a) -> dict:
        return {f"{prefix}.q_proj.weight": reads(a.W_Q.weight) * q_scale,
                f"{prefix}.q_proj.bias": a.W_Q.bias.detach() * q_scale,
                f"{prefix}.k_proj.weight": reads(a.W_K.weight), f"{prefix}.k_proj.bias": a.W_K.bias.detach(),
                f"{prefix}.v_proj.weight": reads(a.W_V.weight), f"{prefix}.v_proj.bias": a.W_V.bias.detach(),
                f"{prefix}.out_proj.weight": writes(a.W_O.weight), f"{prefix}.out_proj.bias": writes(a.W_O.bias)}

    def norm(prefix: str, n) -> dict:
        return {f"{prefix}.weight": writes(n.gamma), f"{prefix}.bias": writes(n.beta)}

    def ffn(prefix: str, f) -> dict:
        return {f"{prefix}fc1.weight": reads(f.W_1.weight), f"{prefix}fc1.bias": f.W_1.bias.detach(),
                f"{prefix}fc2.weight": writes(f.W_2.weight), f"{prefix}fc2.bias": writes(f.W_2.bias)}

    out: dict = {}
    if cfg.share_embeddings:
        out["model.shared.weight"] = reads(model.src_embed.weight)
    else:
        out["model.encoder.embed_tokens.weight"] = reads(model.src_embed.weight)
        out["model.decoder.embed_tokens.weight"] = reads(model.tgt_embed.weight)
    for i, layer in enumerate(model.encoder):
        p = f"model.encoder.layers.{i}."
        out |= attention(p + "self_attn", layer.self_attn) | norm(p + "self_attn_layer_norm", layer.norm1)
        out |= ffn(p, layer.ffn) | norm(p + "final_layer_norm", layer.norm2)
    for i, layer in enumerate(model.decoder):
        p = f"model.decoder.layers.{i}."
        out |= attention(p + "self_attn", layer.self_attn) | norm(p + "self_attn_layer_norm", layer.norm1)
        out |= attention(p + "encoder_attn", layer.cross_attn) | norm(p + "encoder_attn_layer_norm", layer.norm2)
        out |= ffn(p, layer.ffn) | norm(p + "final_layer_norm", layer.norm3)
    if not cfg.tie_output:
        out["lm_head.weight"] = reads(model.generator.weight)
    bias = model.generator.bias
    out["final_logits_bias"] = (bias.detach() if bias is not None else torch.zeros(cfg.tgt_vocab_size))[None]
    return {k: v.to(torch.float32).contiguous() for k, v in out.items()}


def marian_model(lm):
    """A transformers MarianMTModel (eval mode, float32) computing what lm's seed Transformer computes."""
    import torch

    tf = transformers()
    model = tf.MarianMTModel(tf.MarianConfig(**marian_config(lm.cfg)))
    model.generation_config = tf.GenerationConfig(**generation_config(lm.cfg))
    tensors = marian_tensors(lm.model)
    with torch.no_grad():
        for name, value in tensors.items():
            target = model.get_parameter(name) if name != "final_logits_bias" else model.final_logits_bias
            if tuple(target.shape) != tuple(value.shape):
                raise ConvertFailed(f"{lm.name}: {name} has shape {tuple(value.shape)}, "
                                    f"Marian's is {tuple(target.shape)}")
            target.copy_(value)
    return model.eval()


def _char_class(codepoints: list[int]) -> str:
    """A regular expression class (Oniguruma, as `tokenizers` reads it) of the given code points, as ranges."""
    parts, i = [], 0
    while i < len(codepoints):
        j = i
        while j + 1 < len(codepoints) and codepoints[j + 1] == codepoints[j] + 1:
            j += 1
        parts.append(f"\\x{{{codepoints[i]:X}}}" + (f"-\\x{{{codepoints[j]:X}}}" if j > i else ""))
        i = j + 1
    return "[" + "".join(parts) + "]"


@lru_cache(maxsize=1)
def _blank_class() -> str:
    """The characters clean_text turns into one space, or drops at either end: white space as str.split() sees it
    (Python's \\s is str.isspace) and control characters."""
    every = "".join(map(chr, range(0x110000)))
    return _char_class(sorted({ord(c) for c in re.findall(r"\s|" + CONTROL.pattern, every)}))


def fast_tokenizer(tok, max_len: int):
    """A transformers fast tokenizer whose tokenizer(text)["input_ids"] is tok.encode(text) + [</s>] and whose
    decode(ids, skip_special_tokens=True) is tok.decode(ids) (tok: model/tokenizer.py's TextTokenizer)."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, processors

    state = json.loads(tok.to_str())
    for added in state["added_tokens"]:
        # matched after normalising, as clean_text runs on the whole text before the app's tokenizer sees it
        added["normalized"] = True
        if added["content"] == SPECIALS[UNK]:
            added["special"] = False          # <unk> decodes as "�", as the app shows it, instead of vanishing
    t = Tokenizer.from_str(json.dumps(state))
    clean = [normalizers.NFKC(), normalizers.Replace(Regex(FORMAT.pattern), ""),          # as clean_text does
             normalizers.Replace(Regex(_blank_class() + "+"), " "), normalizers.Strip()]
    clean += [normalizers.Replace(c, plain) for c, plain in tok.plain_forms().items()]    # as tok.plain_form
    t.normalizer = normalizers.Sequence(clean + ([t.normalizer] if t.normalizer is not None else []))
    eos = SPECIALS[EOS]
    t.post_processor = processors.TemplateProcessing(single=f"$A {eos}", pair=f"$A $B {eos}",
                                                     special_tokens=[(eos, EOS)])
    if t.decoder is not None:
        t.decoder = decoders.Sequence([decoders.Replace(SPECIALS[UNK], "\ufffd"), t.decoder])
    tf = transformers()
    return tf.PreTrainedTokenizerFast(tokenizer_object=t, pad_token=SPECIALS[PAD], bos_token=SPECIALS[BOS],
                                      eos_token=eos, model_max_length=max_len, clean_up_tokenization_spaces=False,
                                      model_input_names=["input_ids", "attention_mask"])   # 4.x adds token_type_ids


def _save_tokenizer(fast, folder: Path) -> None:
    fast.save_pretrained(str(folder))
    path = folder / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["tokenizer_class"] = "PreTrainedTokenizerFast"     # the name every transformers release since 4 knows
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def probe_ids(cfg) -> tuple[list[int], list[int]]:
    """A source and a decoder input of ordinary token ids, spread over both vocabularies, for the check."""
    def spread(n: int, vocab: int, step: int) -> list[int]:
        return [len(SPECIALS) + (step * i) % max(1, vocab - len(SPECIALS)) for i in range(n)]
    n = min(12, cfg.max_len - 1)
    return spread(n, cfg.src_vocab_size, 7) + [EOS], [BOS] + spread(n, cfg.tgt_vocab_size, 11)


def logit_difference(lm, marian) -> float:
    """max |Δ logit| between lm's model and marian on a teacher-forced pass over probe_ids."""
    import torch
    src, tgt = (torch.tensor([ids]) for ids in probe_ids(lm.cfg))
    with torch.no_grad():
        ours = lm.model(src, tgt)
        theirs = marian(input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=tgt).logits
    return float((ours - theirs).abs().max())


@dataclass
class Converted:
    folder: Path
    parameters: int
    difference: float      # max |Δ logit| of the check


def check_destination(folder: Path, force: bool, source: Path | None = None) -> None:
    """Refuse (ConvertError) a destination that cannot or must not be written: a file, a folder with files in it
    (unless force, and then only a folder this command wrote), the model's own folder or one holding it, a
    parent folder that cannot be written."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ConvertError(f"{folder}: is a file, not a folder")
    if source is not None and folder.exists():
        src, dst = Path(source).resolve(), folder.resolve()
        if src == dst or dst in src.parents:
            raise ConvertError(f"{folder}: holds the model being converted; choose another folder")
    if folder.is_dir() and any(folder.iterdir()):
        if not force:
            raise ConvertError(f"{folder}: exists and is not empty (add --force to replace a folder this command "
                               "wrote)")
        if not _is_marian_folder(folder):
            raise ConvertError(f"{folder}: exists and holds other files than a converted Marian model; --force "
                               "replaces only such a folder")
    parent = folder.absolute().parent
    if not parent.is_dir():
        raise ConvertError(f"{folder}: its folder {parent} " + ("is a file" if parent.exists() else "does not exist"))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConvertError(f"{folder}: its folder {parent} is not writable")


def _is_marian_folder(folder: Path) -> bool:
    try:
        return json.loads((folder / CONFIG).read_text(encoding="utf-8")).get("model_type") == "marian"
    except (OSError, ValueError, AttributeError):
        return False


def convert(lm, folder: str | Path, force: bool = False) -> Converted:
    """Write lm (a seed-family model) as a Marian folder: built beside folder in a temporary folder, checked
    against lm (max |Δ logit| at most TOLERANCE), then renamed into place; nothing is left behind on failure."""
    folder = Path(folder)
    why = refusal(lm)
    if why:
        raise ConvertError(why)
    check_destination(folder, force, lm.path)
    marian = marian_model(lm)
    difference = logit_difference(lm, marian)
    if not difference <= TOLERANCE:
        raise ConvertFailed(f"{lm.name}: the converted model's logits differ from the app's by {difference:.3g} "
                           f"(more than {TOLERANCE:g}); nothing was written")
    parent = folder.absolute().parent
    remove_leftovers(folder)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".part", dir=parent))
    except OSError as e:
        raise ConvertError(f"{folder}: cannot write there ({e.strerror or e})") from None
    try:
        marian.save_pretrained(str(tmp), safe_serialization=True)
        _save_tokenizer(fast_tokenizer(lm.src_tok, lm.cfg.max_len), tmp)
        _save_tokenizer(fast_tokenizer(lm.tgt_tok, lm.cfg.max_len), tmp / TARGET_TOKENIZER)
        _usual_permissions(tmp)
        _replace(tmp, folder)
    except (OSError, SafetensorError) as e:     # safetensors' own error for a full disk: "… I/O error: No space…"
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e).split("I/O error: ")[-1]
        raise ConvertFailed(f"{folder}: cannot write there ({why}); nothing was written") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Converted(folder, sum(p.numel() for p in lm.model.parameters()), difference)


def _usual_permissions(folder: Path) -> None:
    """The permissions a new folder and files get under the user's umask (a temporary folder is private)."""
    probe = folder / ".mode"
    probe.touch(mode=0o666)                        # created with 0o666 less the umask (os.umask would set it)
    files = probe.stat().st_mode & 0o666
    probe.unlink()
    for path in [folder, *folder.rglob("*")]:
        path.chmod(files | (files & 0o444) >> 2 if path.is_dir() else files)     # folders: x where r


def _replace(tmp: Path, folder: Path) -> None:
    """Rename tmp to folder; an existing folder is moved aside first and removed once the new one is in place. A
    stop (Ctrl+C, SIGTERM) waits for the swap, and is then dropped, the new folder being whole: one in its middle
    had left a half-removed ".NAME.….old" folder and said "interrupted" over a finished folder (QA)."""
    from ...command_line import drop_stop, stops_between_steps
    with stops_between_steps():
        if not folder.exists():
            os.rename(tmp, folder)
        else:
            aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=folder.absolute().parent))
            os.rename(folder, aside / "previous")
            try:
                os.rename(tmp, folder)
            except BaseException:
                os.rename(aside / "previous", folder)
                raise
            finally:
                shutil.rmtree(aside, ignore_errors=True)
        drop_stop()


def remove_leftovers(folder: Path) -> list[Path]:
    """The folders this command builds beside folder and renames (".NAME.xxxx.part", ".NAME.xxxx.old"), left by a
    run killed outright (SIGKILL, a power cut), removed; they are never another program's: their names are ours."""
    parent = folder.absolute().parent
    ours = re.compile(rf"\.{re.escape(folder.name)}\.[a-z0-9_]{{8}}\.(part|old)")     # tempfile.mkdtemp's names
    stale = [p for p in parent.glob(f".{glob.escape(folder.name)}.*") if p.is_dir() and ours.fullmatch(p.name)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return stale
