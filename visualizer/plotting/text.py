"""Text in plots: font sizes that read on a projector, token labels made short and safe, smaller fonts to fit."""
from __future__ import annotations

import functools
import math

from PySide6 import QtGui

TICK_PT, LABEL_PT, TITLE_PT = 12, 13, 14
MAX_LABEL_CHARS = 14
# token labels are drawn this much smaller before any is left out, and last at MIN_LABEL_PT (the normal size's
# smallest, 8.4 pt), never smaller: presentation mode's larger text may shrink further than the normal size's, so a
# projector's short heatmap keeps a label on every row. Labels that must be thinned anyway are drawn at
# THINNED_SCALE of their size, not smaller.
LABEL_SCALES = (1.0, 0.9, 0.8, 0.7, 0.6)
MIN_LABEL_PT = 0.7 * TICK_PT
THINNED_SCALE = 0.7
# an exported figure smaller than the default (a paper's column, printed up close) may draw its token labels down to
# this before leaving any out: at 450 × 380, 8.4 pt labelled every other row of a 20-token sentence
FIGURE_LABEL_PT = 6.0


@functools.lru_cache(maxsize=1 << 16)        # axes ask again for every token at every view change
def short(label: str, limit: int = MAX_LABEL_CHARS) -> str:
    """A token as a label: line breaks and tabs as ⏎ and ⇥, other control characters as ·, long pieces cut
    with an ellipsis."""
    text = str(label).replace("\n", "⏎").replace("\t", "⇥")
    text = "".join(ch if ch.isprintable() else "·" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# characters drawn alike in most fonts, each to the one it passes for
LOOK_ALIKE = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "ʹ": "'", "′": "'", "`": "'", "´": "'", "“": '"',
                            "”": '"', "″": '"', "‐": "-", "‑": "-", "‒": "-", "–": "-", "−": "-", "\u00a0": " "})


def told_apart(labels: list[str]) -> list[str]:
    """labels, each that looks like another one of them (the same once look-alike characters are one, or in NFKC
    form) followed by the code points of its characters that tell them apart: en-fr's output distribution had two
    bars labelled "'" (U+0027 and U+2019), and which one the model took could not be read (QA)."""
    import unicodedata

    def seen(label: str) -> str:
        return unicodedata.normalize("NFKC", label).translate(LOOK_ALIKE)
    groups: dict[str, set[str]] = {}
    for label in labels:
        groups.setdefault(seen(label), set()).add(label)
    out = []
    for label in labels:
        alike = groups[seen(label)]
        if len(alike) < 2:
            out.append(label)
            continue
        shared = set.intersection(*(set(other) for other in alike))
        marks = [c for c in dict.fromkeys(label) if c not in shared] or list(dict.fromkeys(label))
        out.append(f"{label} ({' '.join(f'U+{ord(c):04X}' for c in marks)})")
    return out


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


def label_sizes(size: float, floor: float = MIN_LABEL_PT) -> list[float]:
    """The point sizes a label set at size may be drawn at, largest first: size at each of LABEL_SCALES that stays
    above MIN_LABEL_PT, then steps of at most a point down to MIN_LABEL_PT where the last of those is more than
    1.5 points above it, then MIN_LABEL_PT itself (size alone if it is that small already, or has no point size).
    Presentation mode's 19.6 pt once jumped from 11.8 pt to 8.4: a 1080p projector's 20-row heatmap had 18 pixels a
    row, 10 pt fit, and its rows were drawn at 8.4 beside 19.6-point columns."""
    if size <= floor + 1e-6:
        return [size]
    sizes = [size * s for s in LABEL_SCALES if size * s > floor + 1e-6]
    gap = sizes[-1] - floor
    parts = math.ceil(gap) if gap > 1.5 else 1
    return sizes + [floor + gap * (parts - k) / parts for k in range(1, parts)] + [floor]


def scaled_fonts(base: QtGui.QFont, floor: float = MIN_LABEL_PT):
    """base at each of label_sizes of its size down to floor, largest first."""
    size = base.pointSizeF()
    for points in label_sizes(size, floor):
        font = QtGui.QFont(base)
        if size > 0:
            font.setPointSizeF(points)
        yield font


def fit_number_ticks(axis, lo: float, hi: float, pixels: float) -> int:
    """A numbers axis labelled as densely as its labels fit side by side, with gaps of half a label, at a round
    step (1, 2 or 5 times a power of ten: pyqtgraph writes 0.25 as "0.2"), two labels at least: at a class's font
    in a narrow dock pyqtgraph's own choice ran them together ("0.20.40.60.8", QA at 1.5× scale)."""
    font = axis.style.get("tickFont") or QtGui.QFont()
    key = (font.key(), lo, hi, round(pixels))
    fits = axis.__dict__.setdefault("_number_fits", {})      # a step change asks again with the same range and size
    if key not in fits:
        if len(fits) > 64:
            fits.clear()
        fits[key] = _number_step(axis, QtGui.QFontMetricsF(font), lo, hi, pixels)
    step, reach = fits[key]
    if getattr(axis, "_tickSpacing", None) != [(step, 0.0)]:    # (each call draws the axis again)
        axis.setTickSpacing(levels=[(step, 0.0)])    # no minor level: pyqtgraph labels it too when there is room,
    # in the major level's decimals (0.25 and 0.75 read "0.2" and "0.8"). The labels at the two ends may reach
    # half their width past the axis (pyqtgraph hid "0" and "1.0" at a class's font, leaving "0.5" alone)
    if axis.style.get("hideOverlappingLabels") != reach:
        axis.setStyle(hideOverlappingLabels=reach)
    return reach                                  # pixels an end label reaches past the axis (room to keep)


def _number_step(axis, metrics: QtGui.QFontMetricsF, lo: float, hi: float, pixels: float) -> tuple[float, int]:
    """fit_number_ticks' choice: the step, and the pixels an end label reaches past the axis."""
    span = max(hi - lo, 1e-12)
    top = math.floor(math.log10(span))
    steps = [m * 10.0 ** e for e in range(top - 2, top + 1) for m in (1, 2, 5) if m * 10.0 ** e <= span]
    step = steps[-1] if steps else span
    for candidate in steps:
        values = [k * candidate for k in range(math.ceil(lo / candidate), math.floor(hi / candidate) + 1)]
        widths = [metrics.horizontalAdvance(text) for text in axis.tickStrings(values, 1, candidate)]
        if len(values) >= 2 and sum(widths) * 1.5 <= pixels:
            step = candidate
            break
    return step, int(max(metrics.horizontalAdvance(t) for t in axis.tickStrings([lo, hi], 1, step)) / 2) + 2
