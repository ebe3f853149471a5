"""BLEU and chrF of a model on a test set (sacreBLEU), from Python or `attention-visualizer evaluate`."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import sacrebleu
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from .baseline import WEIGHTS as BASELINE_WEIGHTS, load_baseline
from .checkpoint import LoadedModel, ModelLoadError
from .checks import alternatives
from .command_line import ArgumentParser, CommandError, UsageError, beam_width, command, device_kind, writable_file
from .data import CorpusError, read_aligned, read_tsv, report_problems
from .families import load, scoring_note, writes_text
from .files import atomic_write
from .decoding import DecodingSettings, decode_ids, encode_source, greedy_batch


def group_references(src: list[str], tgt: list[str]) -> tuple[list[str], list[list[str]]]:
    """Consecutive lines with the same source become one sentence with several references."""
    sources, refs = [], []
    for s, t in zip(src, tgt):
        if sources and sources[-1] == s:
            refs[-1].append(t)
        else:
            sources.append(s)
            refs.append([t])
    return sources, refs


def translate_all(lm: LoadedModel, sources: list[str], beam: int = 1, batch_size: int = 64,
                  progress=None, ensemble: tuple[LoadedModel, ...] = ()) -> list[str]:
    """Translations of `sources` in their order; with `ensemble` (greedy only), `lm` and those models decode
    together (see `check_ensemble`)."""
    if ensemble:
        check_ensemble(lm, ensemble, beam)
    if getattr(lm, "family", "seed") != "seed":          # other families (model/families/hf) decode in their own run
        from .families import translate
        settings = DecodingSettings(method="beam" if beam > 1 else "greedy", beam=max(beam, 1))
        return [translate(lm, s, settings).text for s in sources]
    ids = [encode_source(lm, s).ids for s in sources]
    hyps: list[str] = []
    if beam <= 1:
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out: dict[int, list[int]] = {}
        models = [lm.model, *(other.model for other in ensemble)]
        for start in range(0, len(order), batch_size):
            chunk = order[start: start + batch_size]
            for i, o in zip(chunk, greedy_batch(models, [ids[i] for i in chunk])):
                out[i] = o
            if progress:
                progress(min(start + batch_size, len(order)), len(order))
        return [lm.tgt_tok.decode(out[i]) for i in range(len(ids))]
    settings = DecodingSettings(method="beam", beam=beam)
    for n, src in enumerate(ids, 1):
        hyps.append(lm.tgt_tok.decode(decode_ids(lm, src, settings)))
        if progress and n % 50 == 0:
            progress(n, len(ids))
    return hyps


def check_ensemble(lm: LoadedModel, ensemble, beam: int) -> None:
    """ValueError unless the models can decode together: this project's translators, greedy, one vocabulary."""
    if beam > 1:
        raise ValueError("an ensemble decodes greedily: leave out --beam")
    for other in (lm, *ensemble):
        if getattr(other, "family", "seed") != "seed" or not hasattr(other, "src_tok"):
            raise ValueError(f"{other.name}: only this app's own translators decode as an ensemble")
    for other in ensemble:
        if (other.src_tok.to_str(), other.tgt_tok.to_str()) != (lm.src_tok.to_str(), lm.tgt_tok.to_str()):
            raise ValueError(f"{other.name} has other tokenizers than {lm.name}: an ensemble needs one vocabulary")


def _streams(refs: list[list[str]]) -> list[list[str | None]]:
    """sacreBLEU's reference streams: stream j holds every sentence's j-th reference (None where it has fewer)."""
    width = max(len(r) for r in refs)
    return [[r[j] if j < len(r) else None for r in refs] for j in range(width)]


def score(hyps: list[str], refs: list[list[str]], lowercase: bool = False) -> tuple[float, float]:
    """(BLEU, chrF) with sacreBLEU defaults; refs[i] holds every reference of sentence i."""
    streams = _streams(refs)
    bleu = sacrebleu.corpus_bleu(hyps, streams, lowercase=lowercase)
    chrf = sacrebleu.corpus_chrf(hyps, streams)
    return bleu.score, chrf.score


@dataclass(frozen=True)
class Comparison:
    """sacreBLEU's paired bootstrap resampling of two systems' BLEU on the same sentences (as Moses'
    bootstrap-hypothesis-difference-significance.pl): p is the chance of a difference this large if both were
    equally good; each interval is that system's BLEU over the resamples, mean ± sacreBLEU's 95% half-width, held
    inside 0–100 (a small set's spread reached past 100)."""
    bleu_a: float
    bleu_b: float
    p_value: float
    interval_a: tuple[float, float]
    interval_b: tuple[float, float]
    resamples: int

    @property
    def difference(self) -> float:
        return self.bleu_b - self.bleu_a

    def lines(self, name_a: str, name_b: str) -> list[str]:
        verdict = "significant at p < 0.05" if self.p_value < 0.05 else "not significant (p >= 0.05)"
        return [f"BLEU {self.bleu_a:.2f} [{self.interval_a[0]:.2f}, {self.interval_a[1]:.2f}] {name_a}",
                f"BLEU {self.bleu_b:.2f} [{self.interval_b[0]:.2f}, {self.interval_b[1]:.2f}] {name_b}",
                f"difference {self.difference:+.2f} BLEU, paired bootstrap ({self.resamples:,} resamples) "
                f"p = {self.p_value:.4f}: {verdict}"]


def compare(hyps_a: list[str], hyps_b: list[str], refs: list[list[str]], lowercase: bool = False,
            resamples: int = 1000) -> Comparison:
    """Is B's BLEU different from A's by more than chance? (sacreBLEU's paired bootstrap; A is the baseline.)
    The resamples are drawn with sacreBLEU's fixed seed (SACREBLEU_SEED, 12345 unless set), so a run repeats."""
    _, results = PairedTest([("a", hyps_a), ("b", hyps_b)], {"BLEU": BLEU(lowercase=lowercase)}, _streams(refs),
                            test_type="bs", n_samples=resamples)()
    a, b = results["BLEU"]
    if hyps_a == hyps_b:      # sacreBLEU's test gives p = 1/(resamples + 1) to two equal outputs; the 95% range is
        # the resamples' all the same (it printed [58.91, 58.91], as if 200 sentences' BLEU had no spread)
        return Comparison(a.score, a.score, 1.0, _within(a.mean, a.ci), _within(a.mean, a.ci), resamples)
    return Comparison(a.score, b.score, b.p_value, _within(a.mean, a.ci), _within(b.mean, b.ci), resamples)


def _within(mean: float, half: float) -> tuple[float, float]:
    """mean ± half, held inside BLEU's 0–100."""
    return max(0.0, mean - half), min(100.0, mean + half)


def _load_any(name: str):
    """A bundled model, a model folder, or a --baseline run's folder."""
    return load_baseline(name) if (Path(name) / BASELINE_WEIGHTS).is_file() else load(name)


@command
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="attention-visualizer evaluate", description=__doc__)
    p.add_argument("--model", default="en-fr", help="bundled model name or model folder (a --baseline run's folder too)")
    p.add_argument("--tsv", help="test file: source<TAB>reference; repeated sources = several references")
    p.add_argument("--src", help="source file (one sentence a line), with --ref")
    p.add_argument("--ref", help="reference file aligned with --src")
    p.add_argument("--beam", type=beam_width, default=1, help="beam width (1 = greedy)")
    p.add_argument("--lowercase", action="store_true", help="case-insensitive BLEU")
    p.add_argument("--limit", type=int, default=None, help="score only the first N sentences (N ≥ 1)")
    p.add_argument("--against", metavar="MODEL", help="also translate with this model (the baseline) and say whether "
                   "--model's BLEU differs from it by more than chance (paired bootstrap, 1,000 resamples)")
    p.add_argument("--hyps", help="also write the translations to this file (its folder must exist)")
    p.add_argument("--ensemble", nargs="+", metavar="MODEL", default=[],
                   help="decode with --model and these models together, greedily: each token is the one with the "
                        "highest mean log-probability (they must share --model's tokenizers). With --hyps this "
                        "writes an ensemble's translations, e.g. the targets for distilling it into one model")
    p.add_argument("--alternatives", action="store_true",
                   help="references hold accepted translations joined by |, as the check lists do "
                        "(English<TAB>one | another): each becomes a reference of its own")
    p.add_argument("--strict", action="store_true", help="a malformed line is an error (else it is skipped and "
                                                         "counted)")
    p.add_argument("--device", default="cpu", help="where to translate: cpu (default), or cuda for a GPU (greedy "
                                                   "only): a teacher's translations of a whole corpus")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded at once, greedy (default 64)")
    a = p.parse_args(argv)
    a.device = device_kind(p, a.device, "translate with --device cpu")
    if a.device == "cuda" and a.beam > 1:
        p.error("--device cuda decodes greedily: leave --beam out, or translate with --device cpu")
    if a.batch_size < 1:
        p.error(f"--batch-size {a.batch_size}: give 1 or more")
    if a.limit is not None and a.limit < 1:
        p.error(f"--limit {a.limit}: score at least the first sentence (--limit 1), or leave --limit out for all")
    if not (a.tsv or (a.src and a.ref)):
        p.error("give --tsv FILE, or --src FILE --ref FILE")
    if a.hyps:
        writable_file(a.hyps, "--hyps")
        for name in (a.tsv, a.src, a.ref):
            if name and Path(name).exists() and Path(a.hyps).exists() and Path(name).samefile(a.hyps):
                p.error(f"--hyps {a.hyps} is the file being scored: it would be overwritten; give another name")
    try:
        corpus = read_tsv(a.tsv, a.strict) if a.tsv else read_aligned(a.src, a.ref, a.strict)
        if not len(corpus):
            raise CorpusError(f"{a.tsv or a.src}: no sentence pairs to score"
                              + (f" ({len(corpus.problems)} malformed line(s) skipped)" if corpus.problems else ""))
        lm = _load_any(a.model)
        baseline = _load_any(a.against) if a.against else None
        ensemble = tuple(_load_any(name) for name in a.ensemble)
        if ensemble:
            check_ensemble(lm, ensemble, a.beam)
        for model in (lm, baseline):
            if model is not None and (why := writes_text(model)) is not None:
                raise ValueError(why)
    except (CorpusError, ModelLoadError, ValueError) as e:
        raise UsageError(str(e)) from None
    if a.device == "cuda":
        for model in (m for m in (lm, baseline, *ensemble) if m is not None):
            if getattr(model, "family", "seed") != "seed":
                raise UsageError(f"--device cuda: {model.name} is not one of this project's models; translate it "
                                 "with --device cpu")
            model.model.to(a.device)
    report_problems(corpus)
    for model in (lm, baseline):
        if model is not None and (note := scoring_note(model)) is not None:
            print(f"note: {note}", file=sys.stderr)
    sources, refs = group_references(corpus.src, corpus.tgt)
    if a.alternatives:
        refs = [[alt for ref in rs for alt in alternatives(ref)] or rs for rs in refs]
    if a.limit is not None:
        sources, refs = sources[: a.limit], refs[: a.limit]
    hyps = translate_all(lm, sources, a.beam, a.batch_size, ensemble=ensemble,
                         progress=lambda n, t: print(f"translated {n}/{t}", file=sys.stderr, flush=True))
    bleu, chrf = score(hyps, refs, a.lowercase)
    skipped = f" skipped {len(corpus.problems)}" if corpus.problems else ""
    print(f"sentences {len(sources)} references {sum(map(len, refs))} beam {a.beam} lowercase {a.lowercase}{skipped}")
    print(f"BLEU {bleu:.2f} chrF {chrf:.2f}", flush=True)      # the scores first: a full disk lost them (QA)
    if a.hyps:
        try:
            atomic_write_text(Path(a.hyps), "\n".join(hyps) + "\n")
        except OSError as e:
            raise CommandError(f"--hyps {a.hyps}: could not be written ({e.strerror or e})") from None
    if baseline is not None:
        base_hyps = translate_all(baseline, sources, a.beam, a.batch_size, progress=lambda n, t: print(
            f"translated {n}/{t} with {a.against}", file=sys.stderr, flush=True))
        print("\n".join(compare(base_hyps, hyps, refs, a.lowercase).lines(a.against, a.model)))
    return 0


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


if __name__ == "__main__":
    sys.exit(main())
