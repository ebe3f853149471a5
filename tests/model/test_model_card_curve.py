"""The model card reads its training curve from the run's own log and names the vocabularies (model/model_card.py)."""
from __future__ import annotations

from model.model_card import training_summary, validation_curve


def test_the_curve_lists_every_validation_of_the_log_in_order(tmp_path):
    (tmp_path / "train.log").write_text(
        "corpus: 10 pairs read\n"
        "step 1000 valid loss 1.196 BLEU 36.90 chrF 55.93 | Je suis ton ami.\n"
        "step 1037 epoch 2 loss 1.9 tok/s 1,200 trained 20.1 min\n"
        "step 2000 valid loss 1.110 BLEU 39.47 chrF 57.90 | Je suis ton petit ami.\n"
        "final (average of 5): valid loss 1.024 BLEU 42.71 chrF 60.70\n"
        "finished: 2013 steps, 41.0 min of training; model in run/model\n", encoding="utf-8")
    rows = validation_curve(tmp_path).splitlines()
    assert rows[2:] == ["| 1,000 | 1.196 | 36.90 | 55.93 |", "| 2,000 | 1.110 | 39.47 | 57.90 |",
                        "| the average of the last 5 checkpoints, at 2,013 | 1.024 | 42.71 | 60.70 |"]


def test_a_run_without_a_log_has_no_curve(tmp_path):
    assert validation_curve(tmp_path) == ""


def test_the_card_names_a_joint_vocabulary_as_one_table():
    from model.config import ModelConfig
    from model.model_card import vocabulary
    joint = ModelConfig(src_vocab_size=8000, tgt_vocab_size=8000, tie_output=True, share_embeddings=True)
    assert vocabulary(joint).startswith("one joint BPE vocabulary (`tokenizers`) of 8,000 pieces")
    assert vocabulary(ModelConfig(src_vocab_size=5000, tgt_vocab_size=6000)) == \
        "BPE vocabularies (`tokenizers`): 5,000 source, 6,000 target"


def test_the_summary_of_a_resumed_run_names_its_corpus_and_model_once(tmp_path):
    start = "corpus: 10 pairs read\nprocesses: 2; model: Transformer 1,000 parameters\n"
    (tmp_path / "train.log").write_text(
        start + "step 10 epoch 1 loss 3.0\n" + start + "resumed at step 10 (epoch 1, 1.0 min trained)\n"
        + start + "resumed at step 20 (epoch 2, 2.0 min trained)\nfinished: 30 steps, 3.0 min of training\n",
        encoding="utf-8")
    assert training_summary(tmp_path).splitlines() == [
        "    corpus: 10 pairs read", "    processes: 2; model: Transformer 1,000 parameters",
        "    resumed at step 10 (epoch 1, 1.0 min trained)", "    resumed at step 20 (epoch 2, 2.0 min trained)",
        "    finished: 30 steps, 3.0 min of training"]


def test_the_card_counts_every_update_the_weights_had_and_names_the_start(tmp_path):
    import torch
    from safetensors.torch import save_file
    from model.model_card import trained_updates
    save_file({"w": torch.zeros(1)}, str(tmp_path / "model.safetensors"), metadata={"steps": "3000", "updates": "9900"})
    assert trained_updates(tmp_path) == "\n- 9,900 updates in all (every training run that led to these weights)."
    save_file({"w": torch.zeros(1)}, str(tmp_path / "model.safetensors"))
    assert trained_updates(tmp_path) == ""
    (tmp_path / "train.log").write_text("corpus: 10 pairs read\ninitialised from runs/a/model (6900 updates in all; "
                                        "the schedule goes on from 0)\nstep 10 epoch 1 loss 3.0\n", encoding="utf-8")
    assert training_summary(tmp_path).splitlines()[1] == \
        "    initialised from runs/a/model (6900 updates in all; the schedule goes on from 0)"


def test_the_curve_counts_the_check_list_where_the_run_had_one(tmp_path):
    """`train --check` logs a line after each validation; the card puts its count beside that validation's BLEU."""
    (tmp_path / "train.log").write_text(
        "step 500 valid loss 1.118 BLEU 40.59 chrF 59.37 | Je suis ton petit ami, non ?\n"
        "step 500 check 34 of 40 right (own.tsv)\n"
        "step 1000 valid loss 1.100 BLEU 41.00 chrF 59.90 | Je suis ton ami.\n"
        "step 1000 check 36 of 40 right (own.tsv)\n"
        "final (average of 10): valid loss 1.000 BLEU 45.00 chrF 62.00\n"
        "final (average of 10): check 38 of 40 right (own.tsv)\n"
        "finished: 1000 steps, 41.0 min of training; model in run/model\n", encoding="utf-8")
    rows = validation_curve(tmp_path).splitlines()
    assert rows[0].endswith("| valid chrF | right of own.tsv (greedy) |")
    assert rows[2:] == ["| 500 | 1.118 | 40.59 | 59.37 | 34 of 40 |", "| 1,000 | 1.100 | 41.00 | 59.90 | 36 of 40 |",
                        "| the average of the last 10 checkpoints, at 1,000 | 1.000 | 45.00 | 62.00 | 38 of 40 |"]


def test_the_card_says_how_many_sentences_the_word_counts_come_from(tmp_path):
    from model.model_card import word_counts_line
    from model.training_words import WordCounts
    assert word_counts_line(tmp_path) == ""
    WordCounts.of(["The cat sat.", "A dog sat.", "The cat sat."]).save(tmp_path)
    assert word_counts_line(tmp_path).startswith("\n- `training_words.tsv`: in how many of the 2 source sentences it "
                                                 "learnt from each of their 5 words comes")


def test_a_card_of_ones_own_corpus_says_what_it_is_and_claims_no_bundled_licence(tmp_path, tiny_model_dir, capsys):
    """The card took --data from the bundled data sets only: a teacher's Esperanto model's card said "English →
    French sentence pairs of the Tatoeba Project … CC-BY 2.0 FR" and "bundled with Attention Visualizer" (QA)."""
    import shutil

    from model.model_card import main
    model = shutil.copytree(tiny_model_dir, tmp_path / "model")
    (tmp_path / "test.tsv").write_text("the cat sat\tle chat\nthe dog runs\tle chien court\n", encoding="utf-8")
    base = ["--model", str(model), "--run", str(tmp_path), "--tsv", str(tmp_path / "test.tsv"), "--beam", "1"]
    assert main([*base, "--data", "own"]) == 2
    assert "--data own needs --data-note" in capsys.readouterr().err
    assert main([*base, "--data", "multi30k-en-de", "--licence", "CC0"]) == 2
    # without a test set: one line, exit 2 (read_aligned(None, None) had ended in a traceback: QA)
    no_test = [a for a in base if a not in ("--tsv", str(tmp_path / "test.tsv"))]
    assert main([*no_test, "--data", "own", "--data-note", "x"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == ("error: give the test set the card scores: --tsv FILE, or "
                                                        "--src FILE --ref FILE (see python -m model.model_card --help)")
    assert main([*base[:1], str(tmp_path / "nowhere"), *base[2:], "--data", "own", "--data-note", "x"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main([*base, "--data", "own", "--data-note", "2,200 English → Esperanto pairs written for my course.",
                 "--licence", "CC0, by the course's teacher."]) == 0
    card = (model / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "- 2,200 English → Esperanto pairs written for my course.\n- CC0, by the course's teacher." in card
    assert "trained with Attention Visualizer (`python -m model.train`)." in card
    assert "Tatoeba" not in card and "bundled" not in card and "CC-BY" not in card
    assert "sinusoidal positions" in card          # the model's own (QA: every card said so, whatever --pe was)
    # a run of one's own on a bundled data set's file is no bundled model either (QA)
    assert main([*base, "--data", "tatoeba-en-fr"]) == 0
    card = (model / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "Tatoeba" in card and "bundled" not in card and "trained with Attention Visualizer" in card
