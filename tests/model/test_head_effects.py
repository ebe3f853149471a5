"""Each head's effect on a run's output (model/analysis/head_effects.py): the head switched off alone, the output
forced the same, the mean change in its tokens' log-probability; checked against runs made here by hand."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from model import translate
from model.analysis.head_effects import head_effects, output_ids, output_log_probs


def by_hand(lm, text: str, result, head, already=frozenset()) -> float:
    """The effect of one head, written out: log p of each output token with the head off, less with it on."""
    off = translate(lm, text, forced_ids=result.out_ids, ablations=frozenset(already | {head})).trace
    steps = range(len(result.out_ids))
    on = [np.log(result.trace.probs(s)[t]) for s, t in zip(steps, result.out_ids)]
    return float(np.mean([np.log(off.probs(s)[t]) for s, t in zip(steps, result.out_ids)]) - np.mean(on))


def test_every_heads_effect_is_its_own_run_with_the_output_forced(tiny_lm):
    text = "the cat sat on the mat"
    result = translate(tiny_lm, text)
    effects = head_effects(tiny_lm, result.trace)
    schema = tiny_lm.schema
    heads = {(k.name, layer, h) for k in schema.kinds for layer in range(schema.stack(k.stack).n_layers)
             for h in range(schema.n_heads)}
    assert set(effects) == heads and output_ids(result.trace) == [int(i) for i in result.out_ids]
    for head in [("enc_self", 0, 1), ("cross", 1, 0), ("dec_self", 1, 1)]:
        assert effects[head] == pytest.approx(by_hand(tiny_lm, text, result, head), abs=1e-9)
    assert any(abs(v) > 1e-6 for v in effects.values())          # heads matter, some more than others
    assert len({round(v, 9) for v in effects.values()}) > 1
    np.testing.assert_allclose(output_log_probs(result.trace, result.out_ids),
                               [np.log(result.trace.probs(s).max()) for s in range(len(result.out_ids))])  # greedy


def test_a_run_with_heads_off_measures_the_others_beside_them_and_a_stop_keeps_what_was_measured(tiny_lm):
    text = "the cat sat on the mat"
    already = frozenset({("cross", 0, 0)})
    result = translate(tiny_lm, text, ablations=already)
    effects = head_effects(tiny_lm, result.trace, heads=[("cross", 0, 0), ("cross", 0, 1), ("cross", 1, 0)])
    assert set(effects) == {("cross", 0, 1), ("cross", 1, 0)}          # the head already off has none
    assert effects[("cross", 0, 1)] == pytest.approx(by_hand(tiny_lm, text, result, ("cross", 0, 1), already),
                                                     abs=1e-9)
    seen = []
    stopped = head_effects(tiny_lm, result.trace, progress=lambda done, total: seen.append(done) or done < 2)
    assert len(stopped) == 2 and seen == [1, 2]


def test_the_metrics_command_adds_the_effects_column(run_command, tiny_model_dir, tiny_lm, tmp_path):
    out = tmp_path / "m.csv"
    code, _, _ = run_command(["metrics", "the cat sat on the mat", "--model", str(tiny_model_dir), "--effects",
                              "--out", str(out)])
    assert code == 0
    table = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert list(table[0])[-1] == "effect_logp"
    result = translate(tiny_lm, "the cat sat on the mat")
    row = next(r for r in table if (r["kind"], r["layer"], r["head"]) == ("cross", "2", "1"))
    assert float(row["effect_logp"]) == pytest.approx(by_hand(tiny_lm, "the cat sat on the mat", result,
                                                              ("cross", 1, 0)), abs=1e-6)
    code, stdout, _ = run_command(["metrics", "the cat", "--model", str(tiny_model_dir)])
    assert code == 0 and "effect_logp" not in stdout


@pytest.mark.parametrize("family", ["gpt2", "bart"])
def test_a_hugging_face_models_heads_are_measured_at_their_own_output_steps(family, tmp_path):
    """A decoder-only model's output starts after its prompt's rows: the log-probabilities are read there; a BART
    reads its output from its first step, as the seed models do."""
    pytest.importorskip("transformers")
    import hf_tiny
    from model.config import DecodingSettings
    from model.families import load
    from model.families import translate as family_translate
    lm = load(hf_tiny.build(family, tmp_path / family))
    text = "the cat sat on the mat ."
    result = family_translate(lm, text, DecodingSettings(max_new=4))
    assert result.out_ids and output_ids(result.trace) == [int(i) for i in result.out_ids]
    first = len(result.trace.tgt_tokens) - len(result.out_ids) if family == "gpt2" else 0
    got = output_log_probs(result.trace, result.out_ids)
    np.testing.assert_allclose(got, [np.log(result.trace.probs(first + i)[t]) for i, t in enumerate(result.out_ids)])
    chosen = len(got) - ("forced_end" in result.trace.meta)      # (BART's end token forced at the length limit)
    np.testing.assert_allclose(np.exp(got[:chosen]), [result.trace.probs(first + i).max() for i in range(chosen)],
                               rtol=1e-5)                                  # greedy: each its step's top token
    head = (lm.schema.kinds[-1].name, 0, 1)
    effect = head_effects(lm, result.trace, heads=[head])[head]
    off = family_translate(lm, text, forced_ids=result.out_ids, ablations=frozenset({head})).trace
    assert effect == pytest.approx(float(np.mean(output_log_probs(off, result.out_ids) - got)), abs=1e-9)
    assert effect != 0.0


def test_a_trace_of_another_model_or_a_head_it_lacks_is_refused(tiny_lm, tiny_model_factory, tmp_path):
    """en-fr's output forced through en-de's decoder gave an "effect" of -10 nats with no word, and head -1 was
    measured as if it were the last (QA, a researcher in a notebook)."""
    from model import load
    from model.ablation import AblationError
    other = load(tiny_model_factory(tmp_path / "other", seed=7))
    trace = translate(tiny_lm, "the cat sat on the mat").trace
    with pytest.raises(ValueError, match=f"the trace is not a run of {other.name} as its weights are now"):
        head_effects(other, trace, heads=[("cross", 0, 0)])
    with pytest.raises(AblationError, match="cross: no layer -1 counted from 0"):
        head_effects(tiny_lm, trace, heads=[("cross", -1, 0)])


def test_the_models_positional_switch_is_as_it_was_after(tiny_lm):
    """head_effects runs with the trace's switch (translate's lasts from a run on): it left the model without its
    positions for every later run (a review)."""
    off = translate(tiny_lm, "the cat sat", positional=False).trace
    translate(tiny_lm, "the cat sat", positional=True)
    head_effects(tiny_lm, off, heads=[("cross", 0, 0)])
    assert tiny_lm.model.positional is True and translate(tiny_lm, "the cat sat").trace.meta["positional"] is True
