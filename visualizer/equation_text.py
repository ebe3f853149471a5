"""The notes' equations as rich text: the schema writes them in plain text (d_k, W_out, y_{t+1}, 10000^(2i/d)),
which reads as code on a slide; here the subscripts and superscripts are set as such."""
from __future__ import annotations

import html
import re

# _{t+1} and ^(2i/d): the braces or brackets hold the whole script; _k, _out, _≤t, _ij: a run of letters, digits
# and ≤ (not ᵀ, which is already a superscript character: K_encᵀ is K, subscript enc, then ᵀ)
FRACTION_SLASH = "\u2044"
WORD_JOINER = "\u2060"      # no line break here, and nothing drawn
_SCRIPT = re.compile(r"([_^])(?:\{([^{}]*)\}|\(([^()]*)\)|([A-Za-z0-9≤]+))")


def equation_html(text: str, whole_sides: bool = False) -> str:
    """text escaped for Qt's rich text, with _x as a subscript and ^x as a superscript. whole_sides: a line may
    break after "=" only (a narrow dock left "/ σ + β" or a lone "β" of LayerNorm's equation on a line, QA)."""
    def tag(m: re.Match) -> str:
        name = "sub" if m.group(1) == "_" else "sup"
        inner = next(g for g in m.groups()[1:] if g is not None)
        if name == "sup":                     # a subscript inside it: 10000^(2k/d_model)
            # its "/" the fraction slash, after which no line breaks: a narrow dock wrapped "10000^(2k/" and
            # "d_model)" onto two lines (QA; Qt's rich text keeps no span's white-space: nowrap)
            inner = _SCRIPT.sub(tag, inner.replace("/", FRACTION_SLASH))
        return f"<{name}>{inner}</{name}>"
    shown = _SCRIPT.sub(tag, html.escape(text, quote=False))
    # no line break after an ellipsis: "Concat(head₁…" ended a line, "head_h) W_O + b_O)" began the next
    shown = shown.replace("…", "…" + WORD_JOINER)
    if whole_sides:
        shown = "= ".join(side.replace(" ", "&nbsp;") for side in shown.split("= "))
    return shown
