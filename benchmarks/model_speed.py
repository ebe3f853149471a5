"""Speed of the model itself, measured (not asserted): prints medians and ratios from one run.

    .venv/bin/python benchmarks/model_speed.py

1. Traced vs untraced teacher-forced forward pass, for 20+20 and 60+60 source+target tokens.
   untraced = model(src, tgt); "record only" = model(src, tgt, record={}) (tensors kept, no conversion);
   traced = decoding.trace_run, the function translate() calls: record, softmax, numpy Trace, token pieces.
   Goal: tracing costs at most 1.3x.
2. Greedy decoding time per token for 10, 50 and 200-token outputs, with and without the key/value cache,
   timed on decoding.greedy itself; </s> is made impossible (its output bias set to -inf) so that every run
   produces exactly the requested number of tokens. Goal: flat per-token time with the cache.
   With a draft (the window passes the translation on screen): the whole output as the draft (a keystroke that
   does not change the translation), and the draft right but for its last quarter (one that changes its end).
3. One training update (forward, label-smoothed loss, backward, Adam step) of this model and of the
   torch.nn.Transformer baseline of the same shape (`--baseline`) on the same batches of 2,048 padded
   tokens: how many updates each gets from the same minutes, the budget of the en-fr comparison.

Uses a random model of the bundled en-fr shape, read from assets/models/en-fr/config.json (layers, heads, widths,
vocabulary, shared embeddings), with max_len 256, so that 200-token outputs fit. Medians over repeats; one thread
count.
"""
from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.checkpoint import LoadedModel  # noqa: E402
from model.baseline import BaselineTransformer  # noqa: E402
from model.config import ModelConfig  # noqa: E402
from model.decoding import greedy, trace_run  # noqa: E402
from model.trace import flatten_record  # noqa: E402
from model.tokenizer import SPECIALS, WORD_START, TextTokenizer  # noqa: E402
from model.transformer import EOS, Transformer  # noqa: E402

BUNDLED = Path(__file__).resolve().parents[1] / "assets" / "models" / "en-fr" / "config.json"


def bundled_shape(**changes) -> ModelConfig:
    """The bundled en-fr model's shape (one place for it: its config.json), with the given fields changed."""
    return dataclasses.replace(ModelConfig.load(BUNDLED), **changes)


VOCAB = bundled_shape().tgt_vocab_size


def medians_ms(fns: dict, repeats: int) -> dict[str, float]:
    """Median time of each function; the functions take turns in every round, so load drifts hit all alike."""
    for fn in fns.values():
        fn()                                                            # warm-up
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(1000 * (time.perf_counter() - t0))
    return {name: statistics.median(t) for name, t in times.items()}


def random_lm() -> LoadedModel:
    vocab = {t: i for i, t in enumerate(SPECIALS + [f"{WORD_START}w{i}" for i in range(VOCAB - len(SPECIALS))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tt = TextTokenizer(tok)
    cfg = bundled_shape(max_len=256, dropout=0.0)
    torch.manual_seed(0)
    return LoadedModel("random-en-fr-shape", None, Transformer(cfg).eval(), tt, tt)


def main() -> int:
    lm = random_lm()
    model = lm.model
    c = model.cfg
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; random model of the en-fr shape "
          f"({c.N_enc}+{c.N_dec} layers, {c.h} heads, d_model {c.d_model}, d_ff {c.d_ff}, {VOCAB:,}-piece vocabulary), "
          f"{model.num_parameters():,} parameters\n")
    print("| source + target tokens | untraced | record only | numpy conversion | traced (trace_run) "
          "| record / untraced | traced / untraced |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for T in (20, 60):
        src_ids = torch.randint(4, VOCAB, (T,)).tolist()
        out_ids = torch.randint(4, VOCAB, (T,)).tolist()
        src, tgt = torch.tensor([src_ids]), torch.tensor([[2] + out_ids[:-1]])
        record: dict = {}
        with torch.no_grad():
            model(src, tgt, record=record)

        def untraced():
            with torch.no_grad():
                model(src, tgt)

        def record_only():
            with torch.no_grad():
                model(src, tgt, record={})

        m = medians_ms({"untraced": untraced, "record": record_only, "convert": lambda: flatten_record(record),
                        "traced": lambda: trace_run(lm, src_ids, out_ids)}, 60)
        print(f"| {T} + {T} | {m['untraced']:.2f} ms | {m['record']:.2f} ms | {m['convert']:.2f} ms "
              f"| {m['traced']:.2f} ms | {m['record'] / m['untraced']:.2f}x | {m['traced'] / m['untraced']:.2f}x |")

    if model.generator.bias is None:               # a tied output layer has no bias: give it one, all zeros
        model.generator.bias = torch.nn.Parameter(torch.zeros(VOCAB), requires_grad=False)
    with torch.no_grad():
        model.generator.bias[EOS] = float("-inf")                      # no early stop: exact output lengths
    src_ids = torch.randint(4, VOCAB, (20,)).tolist() + [EOS]
    print("\n| greedy output length | per token, with cache | per token, without cache | without / with "
          "| whole output, with cache | … with the output as draft | … draft wrong in its last quarter |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in (10, 50, 200):
        reps = {10: 15, 50: 7, 200: 3}[n]
        out = greedy(model, src_ids, n)
        assert len(out) == n
        near = out[: 3 * n // 4] + [(t + 1) % VOCAB for t in out[3 * n // 4:]]
        assert greedy(model, src_ids, n, draft=out) == out == greedy(model, src_ids, n, draft=near)
        m = medians_ms({"with": lambda: greedy(model, src_ids, n, use_cache=True),
                        "without": lambda: greedy(model, src_ids, n, use_cache=False),
                        "draft": lambda: greedy(model, src_ids, n, draft=out),
                        "near": lambda: greedy(model, src_ids, n, draft=near)}, reps)
        with_cache, without = m["with"] / n, m["without"] / n
        print(f"| {n} tokens | {with_cache:.2f} ms | {without:.2f} ms | {without / with_cache:.1f}x "
              f"| {m['with']:.1f} ms | {m['draft']:.1f} ms | {m['near']:.1f} ms |")

    print("\n| training update, batch of 2,048 padded tokens | this model | torch.nn.Transformer | baseline / ours |")
    print("| --- | --- | --- | --- |")
    cfg = bundled_shape(dropout=0.1)
    for T in (8, 24):                                            # Tatoeba sentences: about 8 pieces, a few 24
        B = 2048 // T
        src, tgt = torch.randint(4, VOCAB, (B, T)), torch.randint(4, VOCAB, (B, T + 1))
        updates = {}
        for name, cls in (("ours", Transformer), ("baseline", BaselineTransformer)):
            torch.manual_seed(0)
            m = cls(cfg).train()
            opt = torch.optim.Adam(m.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

            def update(m=m, opt=opt):
                logits = m(src, tgt[:, :-1])
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1),
                                                         label_smoothing=0.1)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            updates[name] = update
        m = medians_ms(updates, 9)
        print(f"| {B} × {T} tokens | {m['ours']:.0f} ms | {m['baseline']:.0f} ms | {m['baseline'] / m['ours']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
