"""Token chips under the translation: a line may break between tokens, never inside one. In presentation mode at
1280x720 the window showed "</s>" as "</" and "s>" on two lines: Qt's line breaking allows a break after a slash."""
from __future__ import annotations

import html

from PySide6 import QtGui

from visualizer.controls import InputBar, token_chips
from visualizer.text_safety import WORD_JOINER, unbreakable_html

TOKENS = ["J", "'", "##ai", "une", "voiture", "rouge", ".", "</s>"]


def _lines(bar: InputBar, qtbot, html_text: str, width: int) -> list[str]:
    """The lines the translation label (the app's own widget, its own text document) lays the text out in."""
    label = bar.translation.label
    label.setText(html_text)
    label.resize(width, 300)
    label.grab()                                   # lays the text out
    doc = label.findChild(QtGui.QTextDocument)
    block = doc.lastBlock()
    layout = block.layout()
    return [block.text()[layout.lineAt(i).textStart(): layout.lineAt(i).textStart() + layout.lineAt(i).textLength()]
            for i in range(layout.lineCount())]


def _a_token_is_broken(lines: list[str]) -> bool:
    """Does a line of chips (those after the translation's line break) end inside a token?"""
    first = next(i for i, line in enumerate(lines) if line.endswith("\u2028")) + 1
    ends = [line.replace(WORD_JOINER, "").rstrip("\xa0 ") for line in lines[first:-1]]
    return any(not any(e.endswith(t) for t in TOKENS) for e in ends)


def test_a_token_chip_never_breaks_across_lines(qtbot):
    bar = InputBar()
    qtbot.addWidget(bar)
    font = QtGui.QFont(bar.font())
    font.setPointSizeF(18)                         # presentation mode's text
    bar.translation.label.setFont(font)
    chips = f"<b>J'ai une voiture rouge.</b><br>{token_chips(TOKENS)} &nbsp; [greedy]"
    plain = chips.replace(token_chips(TOKENS), " ".join(f"&nbsp;{html.escape(t)}&nbsp;" for t in TOKENS))
    broken_before = broken_now = 0
    for width in range(200, 700, 4):
        broken_before += _a_token_is_broken(_lines(bar, qtbot, plain, width))
        broken_now += _a_token_is_broken(_lines(bar, qtbot, chips, width))
    assert broken_before > 0                       # without the joiners "</" ends a line at some widths
    assert broken_now == 0


def test_the_html_shows_the_token_and_escapes_it(qapp):
    doc = QtGui.QTextDocument()
    doc.setHtml(unbreakable_html("<s>&"))
    assert doc.toPlainText().replace(WORD_JOINER, "") == "<s>&"


def test_a_prompt_s_chips_are_grey_and_the_written_ones_blue():
    """A decoder-only model's chips start with its prompt, which it did not write: those are told apart."""
    chips = token_chips(["the", "cat", "sat", "down"], given=2).split("</span> ")
    assert [("#e6e6e6" in c, "#e4ecf7" in c) for c in chips] == [(True, False)] * 2 + [(False, True)] * 2
    assert token_chips(TOKENS).count("#e4ecf7") == len(TOKENS)


def test_a_masked_word_models_chips_are_its_text_with_the_masks_filled_in():
    """BERT's chips listed its argmax at every position ("t ##id t t v"), under a text that fills only [MASK]."""
    from visualizer.controls import filled_in
    chips, grey = filled_in(["[CLS]", "the", "[MASK]", "sat", "[SEP]"], ["t", "##id", "cat", "v", "v"], "[MASK]")
    assert chips == ["[CLS]", "the", "cat", "sat", "[SEP]"] and grey == {0, 1, 3, 4}
    spans = token_chips(chips, grey).split("</span> ")
    assert ["#e4ecf7" in s for s in spans] == [False, False, True, False, False]    # the filled word alone blue
