"""Write a bundled model's MODEL_CARD.md: data, licence, attribution, config, training, scores, examples.

    python -m model.model_card --model runs/en-fr/model --run runs/en-fr --data tatoeba-en-fr \
        --tsv ../shared/data/tatoeba-en-fr/test.tsv --beam 5
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from .assets import MODELS_DIR, ModelLoadError
from .checkpoint import CARD, WEIGHTS, step_counts
from .command_line import ArgumentParser, UsageError, command
from .families import load
from .training_words import FILE as WORDS_FILE, RARE, read_word_counts
from .data import CorpusError, read_aligned, read_tsv
from .evaluate import group_references, score, translate_all

CLASSROOM = ["The cat sat on the mat.", "The red car is fast.", "I love you.", "Where is the station?",
             "The black dog is sleeping under the table.", "She gave her brother a book.",
             "We will go to the beach tomorrow if it does not rain.", "I don't know what he wants.",
             "Two men are playing football in the park.", "The little girl is eating an apple."]

DATA = {
    "tatoeba-en-fr": ("English → French sentence pairs of the Tatoeba Project, as released by manythings.org/anki "
                      "(file dated 2017-09-29): train.tsv, 133,981 pairs of 92,659 English sentences.",
                      "CC-BY 2.0 FR. Attribution: **www.manythings.org/anki and tatoeba.org**."),
    "tatoeba-en-fr+2019": ("English → French sentence pairs of the Tatoeba Project, as released by manythings.org/anki: "
                           "first the file dated 2017-09-29 (train.tsv, 133,981 pairs of 92,659 English sentences), "
                           "then the later release dated 2019-04-07 (158,348 pairs of 110,901 English sentences, the "
                           "valid and test English sentences of the 2017 split removed).",
                           "CC-BY 2.0 FR. Attribution: **www.manythings.org/anki and tatoeba.org**."),
    "tatoeba-en-fr-2019+translations": (
        "English → French sentence pairs of the Tatoeba Project, as released by manythings.org/anki: the release "
        "dated 2019-04-07 (158,348 pairs of 110,901 English sentences, the valid and test English sentences of the "
        "2017-09-29 split removed), and an earlier bundled model's translations of those English sentences (that "
        "model was trained on the 2017 and 2019 releases).",
        "CC-BY 2.0 FR. Attribution: **www.manythings.org/anki and tatoeba.org**."),
    "tatoeba-en-fr-2019+translations+multi30k": (
        "English → French sentence pairs of the Tatoeba Project, as released by manythings.org/anki: the release "
        "dated 2019-04-07 (158,348 pairs of 110,901 English sentences, the valid and test English sentences of the "
        "2017-09-29 split removed), an earlier bundled model's translations of those English sentences, and "
        "Multi30k's 29,000 English → French image captions (train split).",
        "Tatoeba: CC-BY 2.0 FR. Attribution: **www.manythings.org/anki and tatoeba.org**. Multi30k: provided for "
        "non-commercial research and educational purposes; cite Elliott, Frank, Sima'an and Specia (2016), "
        "*Multi30K: Multilingual English-German Image Descriptions*, and for the French captions Elliott, Frank, "
        "Barrault, Bougares and Specia (2017), *Findings of the Second Shared Task on Multimodal Machine "
        "Translation and Multilingual Image Description*."),
    "multi30k-en-de": ("Multi30k (WMT16 multimodal task 1) English → German image captions: train, 29,000 pairs.",
                       "Provided for non-commercial research and educational purposes. Cite: Elliott, Frank, "
                       "Sima'an and Specia (2016), *Multi30K: Multilingual English-German Image Descriptions*, "
                       "Proceedings of the 5th Workshop on Vision and Language."),
}


POSITIONS = {"sinusoidal": "sinusoidal positions", "learned": "learned positions", "none": "no positions"}
OWN = "own"          # --data for a corpus of one's own, described by --data-note and --licence


def train_log(run: Path) -> list[str]:
    """The lines of the run's train.log (none without one)."""
    log = run / "train.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


WHEN = r"(?:step (\d+)|final \(average of (\d+)\):)"      # where a validation line was logged


def _when(m: re.Match) -> str:
    return f"{int(m.group(1)):,}" if m.group(1) else f"the average of the last {m.group(2)} checkpoints"


def validation_curve(run: Path) -> str:
    """The run's validation figures (steps -> BLEU, and a --check list's count where the log has one) from its
    train.log, as a markdown table ("" without any)."""
    rows: list[list[str]] = []
    counts: list[str] = []            # the --check count logged after each row's validation ("" where none was)
    check_name = ""
    for line in train_log(run):
        m = re.match(WHEN + r" valid loss ([\d.]+) BLEU ([\d.]+) chrF ([\d.]+)", line)
        if m:
            rows.append([_when(m), m.group(3), m.group(4), m.group(5)])
            counts.append("")
        c = re.match(WHEN + r" check (\d+ of \d+) right \((.*)\)$", line)
        if c and rows and rows[-1][0] == _when(c):
            counts[-1], check_name = c.group(3), c.group(4)
        done = re.match(r"finished: (\d+) steps", line)
        if done and rows and rows[-1][0].startswith("the average"):      # where the run stopped: say at which update
            rows[-1][0] += f", at {int(done.group(1)):,}"
    if not rows:
        return ""
    head = ["updates (of this run)", "valid loss", "valid BLEU (greedy)", "valid chrF"]
    if any(counts):
        head.append(f"right of {check_name} (greedy)")
        rows = [r + [n] for r, n in zip(rows, counts)]
    return "\n".join("| " + " | ".join(r) + " |" for r in [head, ["---"] * len(head), *rows])


def vocabulary(cfg) -> str:
    """The card's words for the model's vocabularies: one joint table, or one per language."""
    if cfg.share_embeddings:
        return (f"one joint BPE vocabulary (`tokenizers`) of {cfg.src_vocab_size:,} pieces for both languages, "
                "one embedding table for source, target and output")
    return f"BPE vocabularies (`tokenizers`): {cfg.src_vocab_size:,} source, {cfg.tgt_vocab_size:,} target"


def word_counts_line(folder: Path) -> str:
    """The card's line on the folder's training_words.tsv (model/training_words.py), "" without one."""
    counts = read_word_counts(folder)
    if counts is None:
        return ""
    return (f"\n- `{WORDS_FILE}`: in how many of the {counts.sentences:,} source sentences it learnt from each of their "
            f"{len(counts.counts):,} words comes (casefolded), so that the app names a typed word that is in "
            f"fewer than {RARE} of them.")


def trained_updates(model: Path) -> str:
    """The card's line on the updates the weights had over all their runs ("" when the metadata does not say)."""
    updates = step_counts(model)[1]
    return f"\n- {updates:,} updates in all (every training run that led to these weights)." if updates else ""


def training_summary(run: Path) -> str:
    """The log's summary lines, each once: a resumed run repeats its corpus and model lines at every start."""
    keep = ("finished", "final", "corpus", "initialised", "processes", "resumed")
    lines = dict.fromkeys(l for l in train_log(run) if l.startswith(keep))
    return "\n".join(f"    {l}" for l in lines) or "    (no training log)"


@command
def main(argv=None) -> int:
    p = ArgumentParser(prog="python -m model.model_card", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--run", required=True, help="the training run folder (for train.log)")
    p.add_argument("--data", required=True, choices=[*sorted(DATA), OWN],
                   help=f"the bundled models' data sets, or {OWN} for a corpus of your own (with --data-note)")
    p.add_argument("--data-note", default="", help=f"with --data {OWN}: what the corpus is (source, size, how made)")
    p.add_argument("--licence", default="", help=f"with --data {OWN}: the corpus' licence and attribution")
    p.add_argument("--title", default="")
    p.add_argument("--tsv", help="the test set, English TAB reference per line (or --src and --ref)")
    p.add_argument("--src", help="the test set's source sentences, one a line (with --ref)")
    p.add_argument("--ref", help="their references, line by line (with --src)")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--extra", default="", help="markdown appended to the card (e.g. a baseline comparison)")
    a = p.parse_args(argv)
    if a.data == OWN and not a.data_note.strip():      # (a bundled data set's licence was the only choice: a card
        p.error(f"--data {OWN} needs --data-note: what the corpus is")       # of one's own corpus claimed it, QA)
    if a.data != OWN and (a.data_note or a.licence):
        p.error(f"--data-note and --licence describe a corpus of your own: give them with --data {OWN}")
    if not a.tsv and not (a.src and a.ref):      # (read_aligned(None, None) had ended in a traceback: QA)
        p.error("give the test set the card scores: --tsv FILE, or --src FILE --ref FILE")
    try:
        lm = load(a.model)
        corpus = read_tsv(a.tsv) if a.tsv else read_aligned(a.src, a.ref)
    except (ModelLoadError, CorpusError) as e:
        raise UsageError(str(e)) from None
    sources, refs = group_references(corpus.src, corpus.tgt)
    rows = []
    for beam in sorted({1, a.beam}):          # --beam 1: greedy only
        t0 = time.time()
        hyps = translate_all(lm, sources, beam)
        secs = time.time() - t0
        bleu, chrf = score(hyps, refs)
        lbleu, _ = score(hyps, refs, lowercase=True)
        rows.append(f"| {'greedy' if beam == 1 else f'beam {beam}'} | {bleu:.1f} | {lbleu:.1f} | {chrf:.1f} | {secs:.0f} s |")
        print(rows[-1], file=sys.stderr, flush=True)
    examples = translate_all(lm, CLASSROOM, a.beam)
    cfg = lm.cfg
    if a.data == OWN:
        data, licence = a.data_note.strip(), a.licence.strip() or "Licence and attribution: not given (--licence)."
        made = "trained with Attention Visualizer (`python -m model.train`)."
    else:
        data, licence = DATA[a.data]
        # "bundled" only of a bundled model's folder: a teacher's own run on a bundled data set's file was called so
        bundled = Path(a.model).resolve().parent == MODELS_DIR.resolve()
        made = ("trained from scratch on\nthis project's 2-core CPU machine, bundled with Attention Visualizer for "
                "teaching." if bundled else "trained with Attention Visualizer (`python -m model.train`).")
    size_mb = (Path(a.model) / WEIGHTS).stat().st_size / 1e6
    card = f"""# {a.title or lm.name}

A small encoder-decoder transformer ("Attention Is All You Need", post-LayerNorm), {made}

## Data and licence
- {data}
- {licence}

## Model
- {cfg.N_enc} encoder + {cfg.N_dec} decoder layers, d_model {cfg.d_model}, {cfg.h} heads (d_k {cfg.d_k}), FFN {cfg.d_ff},
  {POSITIONS.get(cfg.pe, f"{cfg.pe} positions")}, max length {cfg.max_len} tokens; {vocabulary(cfg)}.
- {lm.model.num_parameters():,} parameters; weights stored as {'float16' if size_mb * 1e6 < lm.model.num_parameters() * 3 else 'float32'}
  safetensors, {size_mb:.1f} MB.{trained_updates(Path(a.model))}{word_counts_line(Path(a.model))}

## Training
Adam (0.9, 0.98), warm-up + inverse-square-root schedule, label smoothing (0.1 unless `--label-smoothing` set
it), dropout {cfg.dropout},
token-sized length-bucketed batches, gradient clipping 1.0, last checkpoints averaged
(`python -m model.train`; see the README). From the training log:

{training_summary(Path(a.run))}

{validation_curve(Path(a.run))}

## Scores on the test split
sacreBLEU {sacrebleu_version()} defaults (13a tokenization){', multi-reference (the lines of one English sentence are its references)' if a.tsv else ''};
"lowercased" is `sacrebleu --lowercase`. {len(sources)} sentences.

| decoding | BLEU | BLEU lowercased | chrF | time (2 cores) |
| --- | --- | --- | --- | --- |
{chr(10).join(rows)}

## Example translations ({'greedy' if a.beam == 1 else f'beam {a.beam}'})
| English | {lm.name} |
| --- | --- |
{chr(10).join(f"| {s} | {h} |" for s, h in zip(CLASSROOM, examples))}
{a.extra}
"""
    (Path(a.model) / CARD).write_text(card, encoding="utf-8")
    print(f"wrote {Path(a.model) / CARD}")
    return 0


def sacrebleu_version() -> str:
    import sacrebleu
    return sacrebleu.__version__


if __name__ == "__main__":
    sys.exit(main())
