"""The architecture map: the model's stacks drawn as boxes from its schema, one column a stack (encoder and decoder
side by side, or one column for a decoder-only or encoder-only model); the current stage is highlighted, a click
moves there. When the boxes of every layer would need text too small to read (many layers, a big font, a short
dock: a projector), the layers other than the current one are folded into one box each, "Layer 3", and the
current layer keeps its sublayers; the fold follows the current layer."""
from __future__ import annotations

import html

from PySide6 import QtCore, QtGui, QtWidgets

from model.schema import ATTENTION_CROSS, ATTENTION_KINDS, FEED_FORWARD, GATED_MLP, OUTPUT, Schema

from .. import accessible
from ..equation_text import equation_html
from ..state import Stage
from .widgets import FocusMark

EMBED_COLOUR, OUTPUT_COLOUR = "#e8eef7", "#e9f5e9"
TERSE_BELOW = 0.85      # box labels fitted below this share of the font's size drop their repeated norm step
FOLD_BELOW = 0.75       # … and below this share even without it, the layers other than the current one fold
NO_FOLD, LAYER_FOLD, RANGE_FOLD = 0, 1, 2     # every layer whole; a box a layer; the layers before and after in one
SMALLEST_PT = 6.0       # the least size of a box's label (one that does not fit then is cut)
RANGE_FROM = 12         # layers a stack above which small per-layer boxes fold into two ranges (as too many to fit)
LAYER_COLOUR = "#eeeeee"        # a folded layer's box
LAST_LAYER = 1 << 30            # open_layer at the output: each stack's last (clamped to its layers)
# box colours by what a sublayer computes (attention, cross-attention, feed-forward)
COLOURS = {kind: "#fdebd0" for kind in ATTENTION_KINDS} | {ATTENTION_CROSS: "#f9d9d9", FEED_FORWARD: "#dfeaf7",
                                                            GATED_MLP: "#dfeaf7"}


class ArchitectureMap(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.setMinimumSize(200, 300)
        self.setMouseTracking(True)
        self.boxes: dict[Stage, QtCore.QRectF] = {}
        self.labels: dict[Stage, str] = {}                              # the text in each box
        self.frames: list[tuple[str, str, QtCore.QRectF]] = []      # (label, short label, frame)
        self.highlighted: Stage | None = None
        self.schema: Schema | None = None
        # the boxes that stand for folded layers (keyed by a layer's first sublayer): their labels and layers
        self.fold_labels: dict[Stage, tuple[str, range]] = {}
        self.open_layer = 0                      # the layer that keeps its sublayers while the others are folded
        self._folds: dict[int, dict] = {}        # open layer -> its fold laid out (and drawn), at this size and font
        self.positions_off = False               # the run's positional encodings are switched off
        self._picture: QtGui.QPixmap | None = None       # the diagram without the highlight
        # the keyboard too: ↑ ↓ through the stages, ← → through the layers, Home and End; framed while it has the
        # keyboard (View ▸ Go to panel ▸ Architecture map showed no focus and no key did anything: QA as a teacher)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self._focus_mark = FocusMark(self)

    KEYS = {QtCore.Qt.Key.Key_Down: "next_sublayer", QtCore.Qt.Key.Key_Up: "prev_sublayer",
            QtCore.Qt.Key.Key_Right: "next_layer", QtCore.Qt.Key.Key_Left: "prev_layer",
            QtCore.Qt.Key.Key_Home: "first", QtCore.Qt.Key.Key_End: "last"}

    def keyPressEvent(self, event) -> None:
        move = self.KEYS.get(event.key())
        if move is None or event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
        elif self.state.can(move):
            getattr(self.state, move)()

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(340, 560)

    def view_key(self, state):
        return state.stage, state.positional

    def render(self, trace, state) -> None:
        stage = state.stage
        # the layer that keeps its sublayers: the current one; at an embedding the first (which reads it; Alt+Home
        # kept the layer last seen open), at the output the last
        opened = LAST_LAYER if stage.stack == OUTPUT else stage.layer if stage.sublayer else 0
        moved = self.folded and (opened != self.open_layer or stage not in self.boxes or stage in self.folded)
        self.open_layer = opened
        off = trace.meta.get("positional") is False
        if trace.schema != self.schema or not self.boxes or off != self.positions_off:
            self.schema, self.positions_off = trace.schema, off
            self._relayout()
        elif moved:              # the fold follows the layer: laid out once a layer, then reused (2.3 ms a change)
            self._open_fold()
        self.highlighted = stage
        # what a screen reader says of it, where the keyboard now reaches it
        accessible.name(self, "Architecture map", f"At {trace.schema.caption(stage, not off)[0]}. Up and Down: the "
                        "previous or next stage; Left and Right: the previous or next layer; Home and End.")
        self.update()

    FOLD_FIELDS = ("boxes", "frames", "fold_labels", "labels", "box_font", "small_font", "head_font", "_picture")

    @property
    def folded(self):
        """The boxes that stand for one folded layer or a range of them."""
        return self.fold_labels.keys()

    def _relayout(self) -> None:
        """_layout, the folds kept before dropped: a new size, font, model or positions switch."""
        self._folds.clear()
        self._layout()

    def _open_fold(self) -> None:
        """The layout with open_layer's sublayers shown: the one kept from an earlier visit, else laid out anew."""
        kept = self._folds.get(self.open_layer)
        if kept is None:
            self._layout()
            return
        for name in self.FOLD_FIELDS:     # copies: _place clears the containers it fills
            value = kept[name]
            setattr(self, name, type(value)(value) if isinstance(value, (dict, list, set)) else value)

    def _keep_fold(self) -> None:
        if self.folded:
            self._folds[self.open_layer] = {name: (type(v)(v) if isinstance(v, (dict, list, set)) else v)
                                            for name in self.FOLD_FIELDS for v in (getattr(self, name),)}

    def _layout(self) -> None:
        """Place the boxes, then pick one font size at which every label fits its box (big fonts, narrow docks);
        fold the layers but the current one when even the short labels would be too small to read; a fold is kept
        for the next visit to its layer (see _relayout)."""
        if self.schema is None:                          # nothing to draw before the first trace
            self._place(fold=NO_FOLD)
            return
        readable = FOLD_BELOW * self.font().pointSizeF()
        n = self.schema.n_layers
        self._place(fold=NO_FOLD)
        if n > 1 and (self.box_font.pointSizeF() < readable or not self._fits()):
            unfolded, fitted = self.box_font.pointSizeF(), self._fits()
            self._place(fold=LAYER_FOLD)
            small = self.box_font.pointSizeF() < TERSE_BELOW * self.font().pointSizeF()    # (7 pt of 9: QA)
            cut = self.box_font.pointSizeF() <= SMALLEST_PT           # labels that do not fit even at the least size
            if n > 2 and (not self._fits() or cut or (small and n > RANGE_FROM)):
                # a box a layer still too small or too many (24 or 32 layers: 7-point boxes, and boxes past the
                # dock's foot, QA; 5 layers at 150 % scaling on a 1280 × 800 screen: 6-point labels cut in half,
                # QA): the layers before the current one in one box, those after it in another, where that gives
                # larger text
                by_layer, fitted_by_layer = self.box_font.pointSizeF(), self._fits()
                self._place(fold=RANGE_FOLD)
                if fitted_by_layer and self.box_font.pointSizeF() <= by_layer:
                    self._place(fold=LAYER_FOLD)
            if fitted and self.box_font.pointSizeF() <= unfolded:   # the dock's width, not its height, set the size
                self._place(fold=NO_FOLD)
        self._keep_fold()

    def _fits(self) -> bool:
        """Whether every box lies inside the widget (a box's least height, 14 pixels, can push them off its foot)."""
        return all(r.bottom() <= self.height() + 0.5 for r in self.boxes.values())

    def _place(self, fold: int) -> None:
        """The boxes: every layer's sublayers (NO_FOLD); each layer but the open one as one box (LAYER_FOLD); the
        layers before the open one as one box and those after it as another (RANGE_FOLD)."""
        self.boxes.clear()
        self.frames.clear()
        self.fold_labels = {}
        w, h = self.width(), self.height()
        m = 6
        base = QtGui.QFont(self.font())
        base.setBold(True)
        head = QtGui.QFontMetricsF(base).height() + 6
        small = QtGui.QFont(self.font())
        small.setPointSizeF(max(7.0, self.font().pointSizeF() - 1))
        frame_label = QtGui.QFontMetricsF(small).height()
        sc = self.schema
        if sc is None:
            return
        cols = len(sc.stacks)
        col_w = (w - (cols + 1) * m) / cols
        # one box height for all columns, set by the longest, so that boxes of a kind look alike
        def opened(st) -> int:             # the layer of this stack that keeps its sublayers when folded
            return min(self.open_layer, st.n_layers - 1)

        # a parallel residual's sublayers read the same input: side by side, on one row (GPT-NeoX, Phi)
        per_layer = 1 if sc.parallel_residual else None
        def shown(st) -> list[int]:        # the layers drawn: each its own box or frame, or one for a range
            if fold != RANGE_FOLD:
                return list(range(st.n_layers))
            o = opened(st)
            return [l for l in (o - 1, o, o + 1) if 0 <= l < st.n_layers]
        n_folded = max(len(shown(st)) - 1 for st in sc.stacks) if fold else 0
        rows = max(1 + (len(shown(st)) - 1 + (per_layer or len(st.sublayers)) if fold
                        else st.n_layers * (per_layer or len(st.sublayers)))
                   + (st is sc.output_stack and sc.has_output) for st in sc.stacks)
        layers = 1 if fold else sc.n_layers
        box_h = max(14.0, (h - head - m - (frame_label + 12) * layers - 16 - 3 * rows - 6 * n_folded) / rows)
        for col, st in enumerate(sc.stacks):
            x = m + col * (col_w + m)
            y = head
            self.boxes[Stage(st.embed_stage)] = QtCore.QRectF(x, y, col_w, box_h)
            y += box_h + 8
            for l in shown(st):
                if fold and l != opened(st):
                    first = Stage(st.key, l, st.sublayers[0].key)    # the nearest layer of a range: a click's
                    self.boxes[first] = QtCore.QRectF(x, y, col_w, box_h)
                    lo, hi = (l, l) if fold != RANGE_FOLD else (0, l) if l < opened(st) else (l, st.n_layers - 1)
                    self.fold_labels[first] = (f"Layers {lo + 1}–{hi + 1}" if hi > lo else f"Layer {lo + 1}",
                                               range(lo, hi + 1))
                    y += box_h + 9
                    continue
                top = y
                y += frame_label
                if per_layer:
                    n = len(st.sublayers)
                    width = (col_w - 8 - 4 * (n - 1)) / n
                    for i, sub in enumerate(st.sublayers):
                        self.boxes[Stage(st.key, l, sub.key)] = QtCore.QRectF(x + 4 + i * (width + 4), y, width, box_h)
                    y += box_h + 3
                for sub in () if per_layer else st.sublayers:
                    self.boxes[Stage(st.key, l, sub.key)] = QtCore.QRectF(x + 4, y, col_w - 8, box_h)
                    y += box_h + 3
                self.frames.append((f"{st.title} layer {l + 1}", f"Layer {l + 1}",
                                    QtCore.QRectF(x, top, col_w, y - top + 2)))
                y += 6
            if st is sc.output_stack and sc.has_output:
                self.boxes[Stage(OUTPUT)] = QtCore.QRectF(x, y + 2, col_w, box_h)
        # an embedding's label says when the positions are switched off (it read "… + positional encoding", QA)
        on = not self.positions_off
        self.labels = {st: self.fold_labels[st][0] if st in self.folded else sc.short(st, on) for st in self.boxes}
        self.box_font = self._fitting_font(QtGui.QFont(self.font()), [
            (r.adjusted(3, 2, -3, -2), self.labels[st]) for st, r in self.boxes.items()])
        if self.box_font.pointSizeF() < TERSE_BELOW * self.font().pointSizeF():
            # on a projector the whole labels shrank to 7 pt: the boxes drop the norm step they all repeat
            # (a box's tooltip and the caption name it) and keep a size that can be read
            terse = {st: self.labels[st] if st in self.folded else sc.terse(st, on) for st in self.boxes}
            font = self._fitting_font(QtGui.QFont(self.font()), [
                (r.adjusted(3, 2, -3, -2), terse[st]) for st, r in self.boxes.items()])
            if font.pointSizeF() > self.box_font.pointSizeF():
                self.labels, self.box_font = terse, font
        self.small_font = small
        self.head_font = self._fitting_font(base, [(QtCore.QRectF(0, 0, col_w, head), f"{st.title} ×{st.n_layers}")
                                                   for st in sc.stacks])
        self._picture = None

    @staticmethod
    def _fitting_font(font: QtGui.QFont, items: list[tuple[QtCore.QRectF, str]]) -> QtGui.QFont:
        """The largest size, at most the font's own, at which each text fits its rectangle, wrapped at spaces."""
        flags = int(QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap)
        size = font.pointSizeF()
        while size > SMALLEST_PT:
            font.setPointSizeF(size)
            fm = QtGui.QFontMetricsF(font)
            if all(fm.boundingRect(r, flags, text).width() <= r.width() + 0.5
                   and fm.boundingRect(r, flags, text).height() <= r.height() + 0.5 for r, text in items):
                break
            size -= 0.5
        font.setPointSizeF(max(size, SMALLEST_PT))
        return font

    def changeEvent(self, event) -> None:
        if event.type() == QtCore.QEvent.Type.FontChange:
            self._relayout()
            self.update()
        elif event.type() == QtCore.QEvent.Type.PaletteChange:     # a theme change
            self._picture = None
            self._folds.clear()
            self.update()
        super().changeEvent(event)

    def resizeEvent(self, event) -> None:
        self._relayout()
        super().resizeEvent(event)

    def paintEvent(self, event) -> None:
        """The diagram comes from a cached picture (redrawn on resize, font or palette change); only the
        highlighted box is painted each time, so stepping repaints in a fraction of a millisecond."""
        if self.schema is None:                          # nothing to draw before the first trace
            p = QtGui.QPainter(self)
            p.fillRect(self.rect(), self.palette().color(QtGui.QPalette.ColorRole.Base))
            p.end()
            return
        if not self.boxes:
            self._relayout()
        ratio = self.devicePixelRatioF()
        if self._picture is None or self._picture.size() != self.size() * ratio:
            self._picture = QtGui.QPixmap(self.size() * ratio)
            self._picture.setDevicePixelRatio(ratio)
            painter = QtGui.QPainter(self._picture)
            self._paint_diagram(painter)
            painter.end()
            if self.open_layer in self._folds:
                self._folds[self.open_layer]["_picture"] = self._picture     # drawn once a fold too
        p = QtGui.QPainter(self)
        p.drawPixmap(0, 0, self._picture)
        if self.highlighted in self.boxes:
            p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            p.setFont(self.box_font)
            self._paint_box(p, self.highlighted, current=True)
        p.end()

    def _paint_box(self, p: QtGui.QPainter, stage: Stage, current: bool) -> None:
        r = self.boxes[stage]
        sc = self.schema
        if stage in self.folded:
            colour = LAYER_COLOUR
        elif stage.stack == OUTPUT:
            colour = OUTPUT_COLOUR
        elif sc.is_layer_stage(stage):
            colour = COLOURS[sc.stack(stage.stack).sublayer(stage.sublayer).kind]
        else:
            colour = EMBED_COLOUR
        p.setBrush(QtGui.QColor("#ffd400") if current else QtGui.QColor(colour))
        p.setPen(QtGui.QPen(QtGui.QColor("#d12b2b") if current else QtGui.QColor("#666666"), 3 if current else 1))
        p.drawRoundedRect(r, 5, 5)
        p.setPen(QtGui.QColor("#111111"))
        p.drawText(r.adjusted(3, 2, -3, -2), QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap,
                   self.labels[stage])

    def _paint_diagram(self, p: QtGui.QPainter) -> None:
        """Everything but the highlight: column titles, layer frames, boxes."""
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QtGui.QPalette.ColorRole.Base))
        text = pal.color(QtGui.QPalette.ColorRole.Text)
        p.setFont(self.head_font)
        p.setPen(text)
        for st in (self.schema.stacks if self.schema is not None else ()):
            first = self.boxes.get(Stage(st.embed_stage))
            if first is not None:
                p.drawText(QtCore.QRectF(first.left(), 0, first.width(), first.top()),
                           QtCore.Qt.AlignmentFlag.AlignCenter, f"{st.title} ×{st.n_layers}")
        p.setFont(self.small_font)
        fm = QtGui.QFontMetricsF(self.small_font)
        for label, short, r in self.frames:
            p.setPen(QtGui.QPen(QtGui.QColor("#999999"), 1, QtCore.Qt.PenStyle.DashLine))
            p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(r, 6, 6)
            p.setPen(text)
            p.drawText(r.adjusted(6, 0, -2, 0), QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop,
                       label if fm.horizontalAdvance(label) <= r.width() - 8 else short)
        p.setFont(self.box_font)
        for stage in self.boxes:
            self._paint_box(p, stage, current=False)

    def stage_at(self, pos: QtCore.QPointF) -> Stage | None:
        for stage, r in self.boxes.items():
            if r.contains(pos):
                return stage
        return None

    def mouseMoveEvent(self, event) -> None:
        stage = self.stage_at(event.position())
        if stage in self.folded:
            st = self.schema.stack(stage.stack)
            span = self.fold_labels[stage][1]
            if len(span) > 1:
                self.setToolTip(f"<b>{html.escape(st.title)} layers {span[0] + 1} to {span[-1] + 1}</b><br>"
                                f"{html.escape(', '.join(s.name for s in st.sublayers))} in each. Click to open "
                                f"layer {stage.layer + 1}; ← → step through the layers.")
            else:
                self.setToolTip(f"<b>{html.escape(st.title)} layer {stage.layer + 1}</b><br>"
                                f"{html.escape(', '.join(s.name for s in st.sublayers))}. Click to open it.")
        elif stage is not None and self.schema is not None:
            title, text, equation = self.schema.caption(stage, not self.positions_off)
            self.setToolTip(f"<b>{html.escape(title)}</b><br>{html.escape(text)}<br><i>{equation_html(equation)}</i>")
        else:
            self.setToolTip("")

    def mousePressEvent(self, event) -> None:
        stage = self.stage_at(event.position())
        if stage is not None:
            self.state.go_to(stage)
