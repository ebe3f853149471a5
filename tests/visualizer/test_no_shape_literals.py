"""The model's shape lives in one schema: the app and the benchmarks never spell a stack, sublayer or attention-kind
name of a model as a string literal (they read names, counts and order from trace.schema)."""
from __future__ import annotations

import ast
from pathlib import Path

from model.families.seed import schema
from model.config import ModelConfig

ROOT = Path(__file__).resolve().parents[2]


def seed_names() -> set[str]:
    sc = schema(ModelConfig(src_vocab_size=8, tgt_vocab_size=8, d_model=8, h=2, d_ff=8, N_enc=1, N_dec=1))
    names = {k.name for k in sc.kinds} | {st.key for st in sc.stacks} | {st.embed_stage for st in sc.stacks}
    return names | {sub.key for st in sc.stacks for sub in st.sublayers}


def test_no_stack_or_kind_name_is_spelled_outside_the_schema():
    names = seed_names()
    assert {"enc", "dec", "enc_self", "cross", "src_embed", "ffn"} <= names      # the check can fail
    found = []
    for folder in ("visualizer", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not found, "\n".join(found)
