"""Token chips under the translation: a line may break between tokens, never inside one. (The window, in presentation
mode at 1280x720, showed "</s>" as "</" and "s>" on two lines; a bare QTextDocument does not break there, so these
tests check the joined text's layout and content, and the window's screenshot showed the fix.)"""
from __future__ import annotations

from PySide6 import QtGui

from visualizer.text_safety import WORD_JOINER, unbreakable_html


def _line_of_each_char(html_text: str, width: float) -> tuple[str, list[int]]:
    doc = QtGui.QTextDocument()
    doc.setHtml(html_text)
    doc.setTextWidth(width)
    block = doc.firstBlock()
    layout = block.layout()
    lines = [layout.lineForTextPosition(i).lineNumber() for i in range(block.length() - 1)]
    return block.text(), lines


def test_a_token_stays_on_one_line_at_any_width(qapp):
    tokens = ["J", "'", "##ai", "une", "voiture", "rouge", ".", "</s>"]
    for width in range(40, 400, 7):
        text, lines = _line_of_each_char(" ".join(f"&nbsp;{unbreakable_html(t)}&nbsp;" for t in tokens), width)
        start = 0
        for t in tokens:
            shown = WORD_JOINER.join(t)
            at = text.index(shown, start)
            assert len({lines[i] for i in range(at, at + len(shown))}) == 1, (t, width)
            start = at + len(shown)


def test_the_html_shows_the_token_and_escapes_it(qapp):
    doc = QtGui.QTextDocument()
    doc.setHtml(unbreakable_html("<s>&"))
    assert doc.toPlainText().replace(WORD_JOINER, "") == "<s>&"
