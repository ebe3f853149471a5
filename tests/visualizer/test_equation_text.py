"""The notes' equations as rich text: subscripts and superscripts set as such, the rest escaped."""
from __future__ import annotations

from model.families.shapes import encoder_decoder
from visualizer.equation_text import equation_html


def test_scripts_become_sub_and_sup():
    assert equation_html("softmax(QKᵀ / √d_k) V") == "softmax(QKᵀ / √d<sub>k</sub>) V"
    assert equation_html("P(y_{t+1} | y_≤t, x) = softmax(h_t W_out + b_out)") == (
        "P(y<sub>t+1</sub> | y<sub>≤t</sub>, x) = softmax(h<sub>t</sub> W<sub>out</sub> + b<sub>out</sub>)")
    # a superscript's "/" is the fraction slash, after which no line breaks (a narrow dock wrapped "10000^(2k/" and
    # "d_model)", QA)
    assert equation_html("sin(pos / 10000^(2i/d))") == "sin(pos / 10000<sup>2i\u2044d</sup>)"
    assert equation_html("sin(pos / 10000^(2k/d_model))") == "sin(pos / 10000<sup>2k\u2044d<sub>model</sub></sup>)"
    assert equation_html("Q_dec K_encᵀ, M_ij = −∞") == "Q<sub>dec</sub> K<sub>enc</sub>ᵀ, M<sub>ij</sub> = −∞"


def test_the_rest_is_escaped_and_every_schema_equation_keeps_its_text():
    assert equation_html("a < b & c_x") == "a &lt; b &amp; c<sub>x</sub>"
    schema = encoder_decoder("seed", 2, 2, 32, 4, 64)
    for stage in schema.stages():
        eq = schema.caption(stage)[2]
        out = equation_html(eq)
        plain = out
        for tag in ("<sub>", "</sub>", "<sup>", "</sup>"):
            plain = plain.replace(tag, "")
        plain = plain.replace("\u2044", "/").replace("\u2060", "")
        assert "_" not in plain and "^" not in plain, eq
        assert plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == (
            eq.replace("{", "").replace("}", "").replace("_", "").replace("^(2k/dmodel)", "2k/dmodel").replace("^", "")), eq


def test_a_norms_equation_breaks_after_its_equals_sign_only(qapp):
    """A narrow LayerNorm dock left "/ σ + β" or a lone "β" on a line of their own (QA on HiDPI)."""
    from PySide6 import QtGui, QtWidgets

    from model.families.shapes import NORM_EQUATIONS
    for eq in NORM_EQUATIONS.values():
        shown = equation_html(eq, whole_sides=True)
        left, right = shown.split("= ", 1)
        assert " " not in left and " " not in right and "&nbsp;" in right
        label = QtWidgets.QLabel(f"<i>{shown}</i>")
        label.setWordWrap(True)
        label.setFont(QtGui.QFont("serif", 15))
        one_line = label.fontMetrics().height()
        # a width that holds the right side but not the whole: two lines, the right side whole on the second
        right_width = label.fontMetrics().horizontalAdvance(eq.split("= ", 1)[1])
        assert label.heightForWidth(right_width + 30) < 2.6 * one_line, eq


def test_no_line_breaks_after_an_ellipsis(qapp):
    """A caption ended a line with "Concat(head₁…" and began the next with "head_h) W_O + b_O)"."""
    from PySide6 import QtGui
    doc = QtGui.QTextDocument()
    doc.setDefaultFont(QtGui.QFont("serif", 15))
    doc.setHtml(equation_html("out = x + Concat(head₁…head_h) W_O + b_O"))
    metrics = QtGui.QFontMetricsF(doc.defaultFont())
    doc.setTextWidth(metrics.horizontalAdvance("out = x + Concat(head₁…") + 12)
    doc.documentLayout().documentSize()             # laid out now
    block = doc.firstBlock()
    lines = [block.text()[line.textStart(): line.textStart() + line.textLength()].strip("\u2060 ")
             for line in (block.layout().lineAt(i) for i in range(block.layout().lineCount()))]
    assert len(lines) > 1 and not any(line.endswith("…") for line in lines), lines
