"""Text in plots: font sizes that read on a projector, token labels made short and safe, smaller fonts to fit."""
from __future__ import annotations

import functools

from PySide6 import QtGui

TICK_PT, LABEL_PT, TITLE_PT = 12, 13, 14
MAX_LABEL_CHARS = 14
LABEL_SCALES = (1.0, 0.9, 0.8, 0.7)   # token labels are drawn this much smaller before any is left out


@functools.lru_cache(maxsize=1 << 16)        # axes ask again for every token at every view change
def short(label: str, limit: int = MAX_LABEL_CHARS) -> str:
    """A token as a label: line breaks and tabs as ⏎ and ⇥, other control characters as ·, long pieces cut
    with an ellipsis."""
    text = str(label).replace("\n", "⏎").replace("\t", "⇥")
    text = "".join(ch if ch.isprintable() else "·" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def signed(x: float, digits: int = 2) -> str:
    """A number with a true minus sign (−1.25, not -1.25): it reads as one on a slide."""
    return f"{x:.{digits}f}".replace("-", "−")


def escape(text: str) -> str:
    """Text for a pyqtgraph title (rich text): tokens such as <s> must not read as tags."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tick_font(size: float = TICK_PT) -> QtGui.QFont:
    f = QtGui.QFont()
    f.setPointSizeF(size)
    return f


def scaled_fonts(base: QtGui.QFont):
    """base at each of LABEL_SCALES of its size, largest first (base alone if it has no point size)."""
    size = base.pointSizeF()
    for scale in LABEL_SCALES if size > 0 else (1.0,):
        font = QtGui.QFont(base)
        if size > 0:
            font.setPointSizeF(size * scale)
        yield font
