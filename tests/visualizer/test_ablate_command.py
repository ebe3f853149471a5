"""`translate --ablate KIND:LAYER:HEAD`: the same heads off as model.translate(ablations=…), bad specs in one line."""
from __future__ import annotations

import pytest

from model import translate
from model.ablation import expand


def test_translate_ablate_matches_the_library(run_command, tiny_model_dir, tiny_lm):
    code, out, err = run_command(["translate", "the cat sat", "--model", str(tiny_model_dir),
                                  "--ablate", "cross:all:1", "--ablate", "enc_self:2:all"])
    assert code == 0
    off = expand([("cross", None, 1), ("enc_self", 2, None)], tiny_lm.schema)
    assert out.strip() == translate(tiny_lm, "the cat sat", ablations=off).text
    assert f"note: {len(off)} heads off: " in err          # QA: the output alone, no word of the heads off
    _, _, err = run_command(["translate", "the cat sat", "--model", str(tiny_model_dir)])
    assert "heads off" not in err


def test_kinds_by_their_exported_file_names(run_command, tiny_model_dir, tiny_lm):
    """export names files encoder_self_L1_H1.png: --ablate encoder_self:1:1 is the same head as enc_self:1:1."""
    assert expand([("encoder_self", 1, 1), ("decoder_self", None, 2)], tiny_lm.schema) == \
        expand([("enc_self", 1, 1), ("dec_self", None, 2)], tiny_lm.schema)
    code, out, _ = run_command(["translate", "the cat sat", "--model", str(tiny_model_dir),
                                "--ablate", "encoder_self:1:1"])
    off = frozenset({("enc_self", 0, 0)})
    assert code == 0 and out.strip() == translate(tiny_lm, "the cat sat", ablations=off).text


@pytest.mark.parametrize("spec, words", [("crosss:1:1", "unknown attention kind"), ("cross:9:1", "no layer 9"),
                                         ("cross:1", "KIND:LAYER:HEAD"), ("cross:1:0", "from 1")])
def test_bad_ablation_is_one_line(run_command, tiny_model_dir, spec, words):
    code, _, err = run_command(["translate", "the cat", "--model", str(tiny_model_dir), "--ablate", spec])
    assert code == 2 and words in err


def test_a_family_that_cannot_ablate_says_so(run_command, tiny_model_dir, monkeypatch):
    import model.families.seed as seed
    monkeypatch.setattr(seed, "CAN_ABLATE", False)
    code, _, err = run_command(["translate", "the cat", "--model", str(tiny_model_dir), "--ablate", "cross:1:1"])
    assert code == 2 and "not available" in err
