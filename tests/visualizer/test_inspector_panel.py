"""The math inspector shows the Trace's numbers, and the seed example with the note's slip."""
from __future__ import annotations

import re

import numpy as np

from model import load, translate
from visualizer.panels.inspector import InspectorPanel
from visualizer.state import ViewState


def numbers(html: str) -> list[float]:
    return [float(x) for x in re.findall(r'href="n:([^"]+)"', html)]


def test_seed_example_cat(qtbot):
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    s = ViewState(model_name="seed-example")
    s.set_shape(tr.schema, tr.n_steps)
    s.update(stack="enc", layer=0, sublayer="self")
    panel.render(tr, s)
    panel.query.setCurrentIndex(1)                      # "cat"
    assert "query <b>cat</b>" in panel.html
    vals = numbers(panel.html)
    for expected in (0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 1.7, 2.0, 2.9, 3.2, 2.12, 2.62):
        assert any(abs(v - expected) < 1e-5 for v in vals), expected
    assert "The note's slip" in panel.html and "3.92" in panel.html


def test_numbers_equal_the_trace(qtbot, tiny_lm):
    tr = translate(tiny_lm, "the dog runs", target="le chien court").trace
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    s = ViewState()
    s.set_shape(tr.schema, tr.n_steps)
    s.update(stack="dec", layer=1, sublayer="cross", head=1, step=2)
    panel.render(tr, s)
    assert panel.query.currentIndex() == 2
    alphas = tr.attention("cross", 1, 1)[2]
    vals = numbers(panel.html)
    for a in alphas:
        assert any(v == float(a) for v in vals)
    for stack, sub in (("src_embed", ""), ("enc", "ffn"), ("output", "")):
        s.update(stack=stack, sublayer=sub)
        panel.render(tr, s)
        assert panel.html
    s.update(stack="output", sublayer="")
    panel.render(tr, s)
    top = np.sort(tr.probs(s.step))[::-1][:5]
    vals = numbers(panel.html)
    for p in top:
        assert any(abs(v - p) < 1e-12 for v in vals)
