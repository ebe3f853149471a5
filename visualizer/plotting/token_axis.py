"""TokenAxis: token labels along a plot axis (heatmap rows and columns, bars), never overlapping."""
from __future__ import annotations

import functools
import weakref

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from ..text_safety import LRM, model_order
from .colormaps import MARKED
from .text import MIN_LABEL_PT, THINNED_SCALE, scaled_fonts, short, tick_font


_WIDTHS: dict[tuple, dict[str, float]] = {}     # (QFont.key(), line height) -> {label: its width in pixels}
# upright column labels take at most this share of their plot's height, drawn smaller or cut to fit: at 1024 × 768
# in presentation mode a 15-token sentence's upright "classroom" and "listening" took 100 of a 260-pixel plot, and
# its rows showed 8 of their 15 tokens (QA)
UPRIGHT_SHARE = 0.25
# a marked label's string carries this from tickStrings to drawPicture (pyqtgraph drops the ticks outside the range
# between the two, so their order does not say which label is which); a zero-width space, never drawn
MARK = "\u200b"
EDGE_MARGIN = 15             # pyqtgraph's room for a label past an axis' end (hideOverlappingLabels=False)


@functools.lru_cache(maxsize=16)          # asked at every fit, that is at every paint of an axis
def _line_height(points: float) -> float:
    return QtGui.QFontMetricsF(tick_font(points)).height()


class TokenAxis(pg.AxisItem):
    """An axis labelled with tokens, label i at coordinate positions[i] (default i: cell or bar i is centred on i).

    Labels never overlap: when they do not all fit, they are drawn a little smaller; then, on a bottom axis, on two
    staggered lines down to 0.8 of the set size, then turned upright (reading upwards, a line's height apart) at
    those sizes, then either at the sizes below, down to 8.4 pt (text.label_sizes: the normal size's 0.7, a point at
    a time below the set size's 0.6); a left axis only shrinks. Only then are labels left out, in the way of 0.7 of
    the set size or more that shows the most (smaller labels only where that saves every one): a column without its
    token cannot be read at all, a smaller or upright one can (a projector at 1024 × 768 showed 6 of 11 columns'
    tokens, the others in 9-pixel type). Upright labels take at most UPRIGHT_SHARE of their plot's height, drawn
    smaller or cut with an ellipsis to fit, so that a short heatmap keeps room for its rows. The fitting happens at
    paint time from the axis' length in pixels, so resizing a dock fits the labels again. max_labels caps how many
    labels are drawn (0: none).
    """

    _live: "weakref.WeakSet[TokenAxis]" = weakref.WeakSet()     # for let_shrink_all

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        TokenAxis._live.add(self)
        self.labels: list[str] = []
        self.positions = np.zeros(0)
        self.max_labels: int | None = None
        self.keep: int | None = None       # a label always drawn when labels are left out (the step's row)
        self._drew_all = False             # the picture drawn shows every label
        self.marked: frozenset[int] = frozenset()   # labels drawn underlined in MARKED (a rare word's pieces)
        self.base_font = tick_font()       # the size set by setTickFont; the labels may be drawn smaller
        self.min_points = MIN_LABEL_PT     # down to this (a small exported figure's: text.FIGURE_LABEL_PT)
        # the label space grows for longer tokens but never shrinks back: a narrower axis would re-lay out the
        # plot and paint it twice on a view change (another attention kind, another step: other tokens).
        # The first and last labels may reach past the axis ends (into the corner); the fitting prevents overlaps.
        self.setStyle(tickFont=self.base_font, autoExpandTextSpace=True, autoReduceTextSpace=False,
                      hideOverlappingLabels=False)
        self.enableAutoSIPrefix(False)     # token positions: never "query (row) (x0.001)" on an empty plot
        # {(length, lo, hi): (font, shown indices, lines)}: a paint asks twice, at two slightly different lengths
        self._fits: dict[tuple, tuple] = {}
        # the fits of the last few label sets: switching attention kinds back and forth finds its fits again
        self._fit_sets: dict[tuple, dict[tuple, tuple]] = {}
        self.staggered = False
        self.upright = False               # the labels drawn turned a quarter (a bottom axis' last way to show all)
        self._may_shrink = False           # the axis' length changed: its labels' room may shrink once
        self._shrink_width = False         # a left axis' room may shrink once (let_shrink_all)
        self._last_length = 0.0
        self._last_room = 0.0              # the upright labels' room (_upright_room) when they were last measured
        self._drawing: tuple | None = None     # the fit of the paint under way (generateDrawSpecs)

    @classmethod
    def let_shrink_all(cls) -> None:
        """Let every shown axis' label room shrink to its labels once: when the sentence has settled. The room
        grows only while a class types or steps (no re-layout per keystroke), so after one long sentence every
        later short one kept its tall upright labels' room: a heatmap 55 pixels lower at 1280 × 720 (QA)."""
        for axis in list(cls._live):
            try:
                shown = axis.isVisible() and axis.scene() is not None
            except RuntimeError:          # its C++ side is gone (a closed window's plot)
                continue
            if shown:
                axis._may_shrink = axis._shrink_width = True
                axis.picture = None
                axis.update()

    def setTickFont(self, font: QtGui.QFont | None) -> None:
        self.base_font = QtGui.QFont(font) if font is not None else tick_font()
        self._fits.clear()
        self._fit_sets.clear()                # fitted at another size
        super().setTickFont(self.base_font)
        self._room_past_ends()

    def set_labels(self, labels, positions=None, max_labels: int | None = None) -> None:
        """Label i at coordinate positions[i] (default: i); positions must increase. At most max_labels drawn."""
        labels = [short(t) for t in labels]
        positions = np.arange(len(labels), dtype=float) if positions is None else np.asarray(positions, float)
        if labels == self.labels and np.array_equal(positions, self.positions) and max_labels == self.max_labels:
            return
        self.labels, self.positions, self.max_labels = labels, positions, max_labels
        key = (tuple(labels), positions.tobytes(), max_labels)
        if key not in self._fit_sets and len(self._fit_sets) >= 4:
            self._fit_sets.pop(next(iter(self._fit_sets)))
        self._fits = self._fit_sets.setdefault(key, {})
        self._room_past_ends()
        self.picture = None
        self.update()

    def set_keep(self, index: int | None) -> None:
        """Always draw label index, whatever else is left out: a class read the framed row of a generation step by
        its labelled neighbour ("leurs" for "fini"). None: no such label."""
        if index != self.keep:
            self.keep = index            # (part of the fits' key: stepping back and forth finds its fits again)
            if not (self.picture is not None and self._drew_all):    # every label drawn: none to keep (a step
                self.picture = None                                  # change drew the axis again, 1 ms)
                self.update()

    def set_marked(self, indices) -> None:
        """Draw labels `indices` underlined, in the warning colour: the pieces of a word the model rarely read."""
        marked = frozenset(int(i) for i in indices)
        if marked != self.marked:
            self.marked = marked
            self.picture = None             # pyqtgraph keeps the drawn axis until its picture is dropped
            self.update()

    def _extents(self, font: QtGui.QFont, upright: bool = False) -> np.ndarray:
        """The room each label needs along the axis at font: its width (with a gap), or a line's height (a left
        axis, or upright labels)."""
        metrics = QtGui.QFontMetricsF(font)
        if self.orientation in ("bottom", "top") and not upright:
            gap = 0.6 * metrics.height()
            # measured once per font and screen resolution: 512 labels took 2 ms a font
            widths = _WIDTHS.setdefault((font.key(), metrics.height()), {})
            if len(widths) > 20000:
                widths.clear()
            return np.array([(widths[t] if t in widths else widths.setdefault(t, metrics.horizontalAdvance(t))) + gap
                             for t in self.labels], dtype=float)
        return np.full(len(self.labels), metrics.height() * 1.05)

    def _least_step(self) -> int:
        """Shown labels are at least this many labels apart (max_labels); 0: no label at all."""
        if self.max_labels is None:
            return 1
        if self.max_labels <= 0:
            return 0
        return max(1, int(np.ceil(len(self.labels) / self.max_labels)))

    def label_indices(self, length_px: float, lo: float, hi: float, font: QtGui.QFont | None = None,
                      lines: int = 1) -> list[int]:
        """Indices of the labels to draw at font: in order, each one placed if it clears the one before it on its
        line (lines = 2: shown labels alternate between two lines; 0: upright labels, one line)."""
        lo, hi = sorted((lo, hi))
        least = self._least_step()
        if not self.labels or not least or length_px <= 0 or hi <= lo:
            return []
        widths = self._extents(font or self.base_font, upright=lines == 0)
        one_line = lines <= 1
        lines = max(lines, 1)
        per_unit = length_px / (hi - lo)
        starts = (self.positions - lo) * per_unit - widths / 2
        firm = self._firm_labels(starts, widths, lo, hi) if one_line else []
        firm_set, next_firm = set(firm), 0      # firm[next_firm]: the first firm label after the one being placed
        shown, right, last = [], [-np.inf] * lines, -least
        for i, pos in enumerate(self.positions):
            while next_firm < len(firm) and firm[next_firm] <= i:
                next_firm += 1
            if i in firm_set:                        # its room was kept: the others clear it as they clear each other
                shown.append(i)
                right[0] = starts[i] + widths[i]
                last = i
                continue
            if not lo - 0.5 <= pos <= hi + 0.5 or i - last < least:
                continue
            line = len(shown) % lines
            if starts[i] >= right[line] - 1e-6 and (               # (labels that fit exactly: rounding)
                    next_firm == len(firm) or starts[i] + widths[i] <= starts[firm[next_firm]] + 1e-6):
                shown.append(i)
                right[line] = starts[i] + widths[i]
                last = i
        return shown

    def _firm_labels(self, starts: np.ndarray, widths: np.ndarray, lo: float, hi: float) -> list[int]:
        """The labels drawn whatever else is left out, in order: the step's row (keep), then the marked labels (a
        rare word's pieces, which the note under the translation points to) that clear it and each other."""
        wanted = ([self.keep] if self.keep is not None else []) + sorted(self.marked - {self.keep})
        firm: list[int] = []
        for i in wanted:
            if not (0 <= i < len(self.labels) and lo - 0.5 <= self.positions[i] <= hi + 0.5):
                continue
            if all(starts[i] + widths[i] <= starts[j] + 1e-6 or starts[j] + widths[j] <= starts[i] + 1e-6
                   for j in firm):
                firm.append(i)
        return sorted(firm)

    def fitted(self, length_px: float, lo: float, hi: float) -> tuple[QtGui.QFont, list[int]]:
        """(font, indices shown): the first way that shows every label it may, of: the set font, 0.9 of it,
        then (bottom axes) two lines at each size, then one line at the smaller sizes; else the smallest size of at
        least THINNED_SCALE of the set font on the most lines, with every label that clears the one before it."""
        room = self._upright_room()
        key = (round(length_px, 1), lo, hi, self.keep, self.marked, round(room) if room < float("inf") else None)
        fit = self._fits.get(key)
        if fit is None:
            least = self._least_step()
            in_range = np.flatnonzero((self.positions >= min(lo, hi) - 0.5) & (self.positions <= max(lo, hi) + 0.5))
            may = len(in_range[::least]) if least else 0
            fonts = list(scaled_fonts(self.base_font, self.min_points))
            tries = [(f, 1) for f in fonts[:2]]
            if self.orientation == "bottom":
                # staggered down to 0.8 of the set size, then upright there; then both again at the smaller sizes
                big = [f for f in fonts if f.pointSizeF() >= 0.8 * self.base_font.pointSizeF() - 1e-6]
                small = fonts[len(big):]
                tries += [(f, 2) for f in big] + [(f, 0) for f in big] + [(f, n) for f in small for n in (2, 0)]
            else:
                tries += [(f, 1) for f in fonts[2:]]
            least_size = THINNED_SCALE * self.base_font.pointSizeF() - 1e-6
            wanted = self.marked | ({self.keep} if self.keep is not None else set())
            thinned, best = None, None   # of the tries that may thin (labels smaller than those only if all
            for font, lines in tries:    # show), the one that shows the most of the kept and marked labels,
                shown = self.label_indices(length_px, lo, hi, font, lines)     # then of all, at the largest size
                if len(shown) >= may:
                    break
                rank = (len(wanted.intersection(shown)), len(shown), font.pointSizeF())
                if thinned is None or (font.pointSizeF() >= least_size and rank > best):
                    thinned, best = (font, shown, lines), rank
            else:
                font, shown, lines = thinned
            if lines == 0:
                font = self._upright_font(font, shown, room)
            if len(self._fits) > 8:          # the axis was resized many times: keep only the newest
                self._fits.clear()
            fit = self._fits[key] = (font, shown, lines)
        self.staggered, self.upright = fit[2] == 2, fit[2] == 0
        return fit[0], fit[1]

    def _upright_room(self) -> float:
        """The most height upright labels may take: UPRIGHT_SHARE of their plot's, never under three lines of the
        smallest labels (unbounded outside a plot)."""
        plot = self.parentItem()
        height = plot.size().height() if plot is not None else 0.0
        if height <= 0:
            return float("inf")
        return max(UPRIGHT_SHARE * height, 3 * _line_height(self.min_points))

    def _upright_font(self, font: QtGui.QFont, shown: list[int], room: float) -> QtGui.QFont:
        """The largest of font's smaller sizes at which the longest shown label, upright, fits room (the smallest
        where none does: drawPicture cuts what is still longer)."""
        smaller = list(scaled_fonts(font, min(self.min_points, font.pointSizeF())))
        for candidate in smaller:
            metrics = QtGui.QFontMetricsF(candidate)
            if max((metrics.horizontalAdvance(self.labels[i]) for i in shown), default=0.0) + 4 <= room:
                return candidate
        return smaller[-1]

    def _length(self) -> float:
        return self.width() if self.orientation in ("bottom", "top") else self.height()

    def generateDrawSpecs(self, p):
        # the font is chosen here, before pyqtgraph measures and places the labels with it; the labels drawn are
        # that fit's too: pyqtgraph asks for them at a length a few pixels off, whose fit could be another (one
        # line of small labels where the font and the flags said upright: "Ihavedog.Shehasacat" at 354 pixels)
        self._drawing = self.fitted(self._length(), *self.range)
        self._drew_all = self._least_step() == 1 and len(self._drawing[1]) == len(self.labels)
        self.style["tickFont"] = self._drawing[0]
        try:
            return super().generateDrawSpecs(p)
        finally:
            self._drawing = None

    def _room_past_ends(self) -> None:
        """pyqtgraph drops a label whose text, measured lying flat, reaches more than 15 pixels past the axis' ends
        (its hideOverlappingLabels margin), fitted or not: GPT-2's last column, "<0xFA>" turned upright, showed no
        label and no word of it (QA). The margin is half the widest label at the set size (the fitted ones are no
        wider), set with the labels or the font, not while painting."""
        metrics = QtGui.QFontMetricsF(self.base_font)
        widest = metrics.height() if self.orientation in ("left", "right") else \
            max((metrics.horizontalAdvance(label) for label in self.labels), default=0.0)
        margin = max(EDGE_MARGIN, int(np.ceil(widest / 2)) + 2)
        if margin != self.style["hideOverlappingLabels"]:
            self.prepareGeometryChange()
            self.style["hideOverlappingLabels"] = margin

    def tickValues(self, minVal, maxVal, size):
        drawing = getattr(self, "_drawing", None)
        shown = drawing[1] if drawing is not None else self.fitted(size, minVal, maxVal)[1]
        return [(1.0, [float(self.positions[i]) for i in shown])] if shown else []

    def tickStrings(self, values, scale, spacing):
        out = []
        for j, v in enumerate(values):
            i = int(np.argmin(np.abs(self.positions - v))) if len(self.positions) else -1
            label = model_order(self.labels[i]) if i >= 0 and abs(self.positions[i] - v) < 1e-6 else ""
            if label and i in self.marked:
                label += MARK
            out.append("\n" + label if self.staggered and j % 2 else label)    # every other label one line lower
        return out

    def _updateMaxTextSize(self, x):
        # pyqtgraph measures tick text at 0.8 of its height: enough room for one line over an axis title, which the
        # rest overlaps, but two staggered lines then overlap the title by a third of a line, and with no title the
        # descenders were cut (the Training step's tokens: "jupe" read "iupe", a comma a full stop: QA). Reserve the
        # full height there.
        if self.orientation in ("bottom", "top") and (self.staggered or not self.label.isVisible()):
            x = x / 0.8
        if self.orientation == "bottom":
            if self.upright:                   # the longest label shown, turned upright, at the fit's font
                font, shown = self.fitted(self._length(), *self.range)
                metrics = QtGui.QFontMetricsF(font)
                room = self._upright_room()
                x = min(max((metrics.horizontalAdvance(self.labels[i]) for i in shown), default=0.0) + 4, room)
                if abs(room - self._last_room) > 0.5:     # the plot's height changed (it is laid out anyway):
                    self._last_room, self._may_shrink = room, True      # the labels' room may shrink to the cap
            if self._may_shrink:               # the room grows only (a view change must not lay the plot out
                self._may_shrink = False        # again: +5 ms a change of attention kind), except after the
                self.textHeight = 0             # axis' length changed, when the plot is laid out anyway
        elif self._shrink_width and self.orientation == "left":    # (let_shrink_all only: a left axis'
            self._shrink_width = False                              # length changing leaves its width)
            self.textWidth = 0
        return super()._updateMaxTextSize(x)

    def _updateWidth(self):
        """A left axis' title a little clear of its longest token: pyqtgraph leaves none, and "query (row)" touched
        "tomorrow" in class (QA as a teacher)."""
        super()._updateWidth()
        if self.orientation == "left" and self.fixedWidth is None and self.isVisible() and self.label.isVisible():
            w = self.maximumWidth() + 0.25 * QtGui.QFontMetricsF(self.label.font()).height()
            self.setMaximumWidth(w)
            self.setMinimumWidth(w)

    def _updateHeight(self):
        """A bottom axis of fixed height (a panel's heatmap keeps its plot still) grows to its upright labels and
        its title: "listening" turned upright ran into "key" below it (QA)."""
        fixed = self.fixedHeight
        if fixed is None or not self.upright or not self.isVisible():
            return super()._updateHeight()
        self.fixedHeight = None
        try:
            super()._updateHeight()             # the height the upright labels, the ticks and the title take
        finally:
            self.fixedHeight = fixed
        if self.maximumHeight() < fixed:
            super()._updateHeight()

    def resizeEvent(self, event=None) -> None:
        length = self._length()
        if abs(length - getattr(self, "_last_length", 0.0)) > 0.5:   # (called in __init__ too) not the height
            self._last_length, self._may_shrink = length, True       # this axis asked for itself
        super().resizeEvent(event)

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        plain = [spec for spec in textSpecs if MARK not in spec[2]]
        marked = [(rect, flags, text.replace(MARK, "")) for rect, flags, text in textSpecs if MARK in text]
        if not self.upright:
            super().drawPicture(p, axisSpec, tickSpecs, plain)
            if marked:
                p.save()
                p.setFont(self._marked_font())
                p.setPen(pg.mkPen(MARKED))
                for rect, flags, text in marked:
                    p.drawText(rect, int(flags), text)
                p.restore()
            return
        super().drawPicture(p, axisSpec, tickSpecs, [])      # the line and the ticks
        metrics = QtGui.QFontMetricsF(self.style["tickFont"] or self.base_font)
        room, line = max(self.textHeight, 1.0), metrics.height()
        fits = min(room, self._upright_room()) - 2
        p.save()
        for specs, pen, font in ((plain, self.textPen(), self.style["tickFont"] or self.base_font),
                                 (marked, pg.mkPen(MARKED), self._marked_font())):
            p.setPen(pen)
            p.setFont(font)
            cut = QtGui.QFontMetricsF(font)
            for rect, _flags, text in specs:    # each label reads upwards and ends under its column's tick
                text = cut.elidedText(text, QtCore.Qt.TextElideMode.ElideRight, fits)
                p.save()
                p.translate(rect.center().x(), rect.top())
                p.rotate(-90)
                p.drawText(QtCore.QRectF(-room, -line / 2, room, line),
                           int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter), text)
                p.restore()
        p.restore()

    def _marked_font(self) -> QtGui.QFont:
        """The labels' font, underlined: the mark must not rest on colour alone."""
        font = QtGui.QFont(self.style["tickFont"] or self.base_font)
        font.setUnderline(True)
        return font

    def marked_labels(self) -> list[str]:
        """The marked labels drawn at the axis' current size, in order (for tests)."""
        return [t.lstrip("\n").replace(MARK, "").replace(LRM, "") for t in self._drawn_strings() if MARK in t]

    def visible_labels(self) -> list[str]:
        """The labels drawn at the axis' current size (for tests and screenshots)."""
        return [t.lstrip("\n").replace(MARK, "").replace(LRM, "") for t in self._drawn_strings()]

    def _drawn_strings(self) -> list[str]:
        lo, hi = self.range
        ticks = self.tickValues(lo, hi, self._length())
        return self.tickStrings(ticks[0][1], 1, 1) if ticks else []
