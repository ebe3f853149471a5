"""Attention panel: every head of the chosen kind and layer as small multiples, one focused head drawn large."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from model.ablation import ablated_heads, mean_of_heads_on
from model.notes import rare_pieces, rare_word_at
from model.schema import OUTPUT
from model.text import powers_of_ten

from .. import accessible
from ..plotting.colormaps import COLORMAP, COLORMAPS, COLOUR_SCALES, HIGHLIGHT, colour_levels
from ..plotting.heatmap import Heatmap
from ..plotting.text import tick_font
from .thumbnails import THUMBNAIL_PIXELS, Thumbnails, head_levels
from .widgets import ElidedLabel, KindPicker


LAYER_TIP = "Layer of the stack (Alt+Up / Alt+Down)"
NARROW_CANVAS = 640       # pixels: under this the focused head takes 5/6 of the canvas, and its colour bar no label
STRIP_CANVAS = 560        # pixels: under this the small heads go in a strip under the focused head
STRIP_COLUMNS = 8         # the most small heads side by side in a row under the focused one
STRIP_MATRIX = 28         # pixels: the height of a small head's matrix in that strip
SCALE_LABELS = {"layer": "0 … the layer's largest weight (heads compare)",      # the Colours menu's words
                "head": "0 … each head's own largest weight",
                "one": "0 … 1 (layers and sentences compare)"}
LABELS_HIDDEN_HINT = ("Some tokens have no label here: hover over a cell to read its tokens, or press F9 to give "
                      "the heatmap the window.", ("Some labels are hidden: hover over a cell, or press F9.",
                                                  "Labels hidden: hover, or F9.", "F9: every label"))
# … with the heatmap alone already (F9 on): fewer tokens or smaller text are what is left
ALONE_HIDDEN_HINT = ("Some tokens have no label even here: hover over a cell to read its tokens, or make the text "
                     "smaller (Ctrl+−).", ("Some labels are hidden: hover over a cell, or Ctrl+−.",
                                          "Labels hidden: hover, or Ctrl+−.", "Ctrl+−: more labels"))
# (F1: Help ▸ How to read this window)
HOVER_HINT = ("Hover over a cell to read its exact weight; the wheel or + zooms in (double-click or 0: all); F1 "
              "explains the window.",
              ("Hover over a cell to read its exact weight; F1 explains the window.",
               "Hover over a cell to read its exact weight.", "Hover a cell: its weight.", "Hover: weight"))


def stand_in(schema, stack: str, sublayer: str, info, layer: int) -> tuple[str, ...]:
    """Why the panel shows attention at a stage that has none (an embedding, a feed-forward sublayer, the output
    layer), longest form first; () at an attention sublayer. The caption named the feed-forward step while the
    heatmap, unexplained, showed attention."""
    keys = [st.key for st in schema.stacks]
    if stack in keys and schema.kind_at(stack, sublayer) is not None:
        return ()
    if stack == OUTPUT:
        what, short = "The output layer", "Output"
    elif stack in keys:
        name = schema.stack(stack).sublayer(sublayer).name
        what, short = f"The {name} sublayer", name[:1].upper() + name[1:]
    else:
        what, short = "The embedding", "Embedding"
    title = info.title[:1].lower() + info.title[1:]
    shown = f"layer {layer + 1}'s {title}"
    return (f"{what} has no attention weights: shown is {shown}.", f"{short}: no attention; {shown} shown",
            f"{short}: no attention; L{layer + 1} {title} shown",    # (QA: the README's promise, in a narrow centre)
            f"No attention; L{layer + 1} {info.label.split(' (')[0].lower()} shown",   # (and in class at 1024 × 768:
            f"L{layer + 1} {info.label.split(' (')[0].lower()} shown",              # "no attention here" said not
            f"{short}: no attention", "no attention here")                        # which map was shown, QA)



def weight_text(w: float) -> str:
    """An attention weight as the read-out writes it: six decimals, or two significant digits in powers of ten
    under half a millionth, which six decimals write 0.000000 (a masked-looking 9.5 × 10⁻¹⁵ read as exactly 0)."""
    return f"{w:.6f}" if w == 0 or abs(w) >= 5e-7 else powers_of_ten(w, 3)

ZOOM_KEYS = {QtCore.Qt.Key.Key_Plus: 0.5, QtCore.Qt.Key.Key_Equal: 0.5, QtCore.Qt.Key.Key_Minus: 2.0,
             QtCore.Qt.Key.Key_0: None}        # the view's size times this; None: the whole matrix
ARROWS = {QtCore.Qt.Key.Key_Up: (-1, 0), QtCore.Qt.Key.Key_Down: (1, 0), QtCore.Qt.Key.Key_Left: (0, -1),
          QtCore.Qt.Key.Key_Right: (0, 1)}


def strongest_keys(matrix: np.ndarray, rows: list[str], cols: list[str], most: int = 30) -> str:
    """Each query row's strongest key in words, for a screen reader ("Strongest key of each query: “I” → “have”
    0.412; …"); masked cells (NaN) left out; the first `most` rows."""
    parts = []
    for r, row in enumerate(matrix[:most]):
        if np.isnan(row).all():
            continue
        c = int(np.nanargmax(row))
        parts.append(f"“{rows[r]}” → “{cols[c]}” {row[c]:.3f}")
    more = f"; and {len(matrix) - most} rows more" if len(matrix) > most else ""
    return "Strongest key of each query: " + "; ".join(parts) + more + ". The arrow keys read every cell."


HEATMAP_LINES = 8          # lines of the text's height the canvas keeps above the app's own text size


class Canvas(pg.GraphicsLayoutWidget):
    """The panel's plots, saying when their width changes (a narrow canvas gives the focused head more room)."""
    resized = QtCore.Signal(int)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.resized.emit(self.width())           # (pyqtgraph calls it with no event too)


class AttentionPanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.kind = KindPicker()                    # filled from the schema of the trace in view
        self.layer = QtWidgets.QSpinBox(prefix="Layer ", minimum=1, maximum=1)
        self.head = QtWidgets.QSpinBox(prefix="Head ", minimum=1, maximum=1)
        self.mean = QtWidgets.QCheckBox("Mean over heads")
        self.mean.setToolTip("Show the mean of the heads' weights in the large heatmap "
                             "(of the heads on, when some are switched off)")
        # colour options in one drop-down button: the colour scale and the colour map
        # (a push button: its menu arrow has room of its own; a tool button's touched "Colours", QA)
        self.colours = QtWidgets.QPushButton("Colours")
        menu = QtWidgets.QMenu(self.colours)
        menu.setToolTipsVisible(True)
        menu.addSection("Colour scale")
        self.scale_group = QtGui.QActionGroup(self)
        self.scale_actions: dict[str, QtGui.QAction] = {}     # COLOUR_SCALES' rules: the panel's and exports'
        for rule, label in SCALE_LABELS.items():
            act = menu.addAction(label)
            act.setCheckable(True)
            act.setChecked(rule == "layer")
            act.setToolTip(f"Colours from {COLOUR_SCALES[rule]}")
            self.scale_group.addAction(act)
            self.scale_actions[rule] = act
        menu.addSection("Colour map (colour-blind safe)")
        self.cmap_group = QtGui.QActionGroup(self)
        self.cmap_actions = {}
        for name in COLORMAPS:
            act = menu.addAction(name)
            act.setCheckable(True)
            act.setChecked(name == COLORMAP)
            self.cmap_group.addAction(act)
            act.triggered.connect(lambda _=False, n=name: self.set_colormap(n))
            self.cmap_actions[name] = act
        self.colours.setMenu(menu)
        self.colormap = COLORMAP
        # above the plots what is shown (kind, layer, head); below them how (hover read-out, mean, colours)
        self.bar = QtWidgets.QHBoxLayout()
        for w in (self.kind, self.layer, self.head):
            self.bar.addWidget(w)
        self.bar.addStretch(1)
        for w, words in ((self.kind, "Attention kind"), (self.layer, "Layer"), (self.head, "Head")):
            accessible.name(w, words)
        for w in (self.kind, self.layer, self.head):
            w.setToolTip({self.kind: "Which attention sublayer: its heads in every layer of its stack",
                          self.layer: LAYER_TIP,
                          self.head: "The focused head (Alt+PgUp / Alt+PgDown, or click a small head)"}[w])
        self._narrow: bool | None = None        # the canvas is narrow (see _fit_width); None: not sized yet
        self._strip = False                     # the small heads in a strip under the focused one (_fit_width)
        self.alone = False                      # the heatmap alone in the window (F9; set by the docks)
        self.canvas = Canvas()
        self.canvas.setBackground("w")
        self.focus = Heatmap(self.canvas.addPlot(row=0, col=0, enableMenu=False), font_size=12)
        self.focus.set_zoomable(True)             # the wheel zooms in on a long sentence's cells; double-click: whole
        self.colorbar = self.focus.add_colorbar("attention weight", width=16)
        self.grid = self.canvas.addLayout(row=0, col=1)     # the small heads: beside the focused one, or under it
        # the focused head takes three quarters of the width, whatever its title (a share that followed the
        # title's length would resize and redraw every head at each change of attention kind)
        self.canvas.ci.layout.setColumnStretchFactor(0, 3)
        self.canvas.ci.layout.setColumnStretchFactor(1, 1)
        self.small: list[Heatmap] = []
        self._small_shown = self._focus_shown = None    # (trace, view) each part of the panel shows now
        self.thumbnails = Thumbnails()                   # the small heads' images, coloured once per trace
        self._framed = None                             # (framed head or None, number of heads)
        # one line that never widens the panel (a long read-out ends in “…” at the edge; its tooltip has it whole)
        self.hover = ElidedLabel()
        self.hint = HOVER_HINT                # the line below the plots off a cell: the hint, or the stage's note
        self._stage_hint: tuple | None = None   # the stage's note (stand_in) in view, if any
        self.hover.setText(*self.hint)
        self._pointer = None                  # the scene position of the last hover
        self._summary = ""                    # each query's strongest key, a screen reader's description of it
        self._cell_marks = None               # the frame of the cell the arrow keys read (made at the first)
        self._key_cell: tuple[int, int] | None = None    # that cell, until the pointer reads one
        self._key_trace, self._key_kind = None, ""       # the run and kind it was read in
        below = QtWidgets.QHBoxLayout()
        below.addWidget(self.hover, 1)
        below.addWidget(self.mean)
        below.addWidget(self.colours)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setSizeConstraint(QtWidgets.QLayout.SizeConstraint.SetNoConstraint)   # minimumSizeHint decides
        layout.addLayout(self.bar)
        layout.addWidget(self.canvas, 1)
        layout.addLayout(below)
        self.trace = None
        self.shown_kind, self.shown_layer, self.shown_head = "", 0, 0
        self.kind.activated.connect(lambda i: self.state.update(kind=self.kind.itemData(i)))
        self.layer.valueChanged.connect(self._layer_changed)
        self.head.valueChanged.connect(lambda v: self.state.update(head=v - 1))
        self.mean.toggled.connect(lambda _: self.trace is not None and self.render(self.trace, self.state))
        self.scale_group.triggered.connect(lambda _: self.trace is not None and self.render(self.trace, self.state))
        self._apply_fonts()
        self.canvas.scene().sigMouseMoved.connect(self._hovered)
        self.canvas.installEventFilter(self)        # the pointer leaving: no cell is under it any more
        self.canvas.resized.connect(self._fit_width)
        # the matrix' room changes after the canvas' width too (a smaller colour bar, the strip): labels may fit now
        self.focus.plot.vb.sigResized.connect(lambda *_: QtCore.QTimer.singleShot(0, self, self._update_hint))
        self.canvas.scene().sigMouseClicked.connect(self._clicked)

    # --- reading back (tests, export) ---------------------------------------------------------
    @property
    def focused_array(self) -> np.ndarray | None:
        """The matrix in the focused heatmap, NaN at masked cells."""
        return self.focus.shown

    @property
    def focused_labels(self) -> tuple[list[str], list[str]]:
        return self.focus.rows, self.focus.cols

    def colour_scale(self) -> str:
        """The colour scale rule (plotting.colormaps.COLOUR_SCALES) the Colours menu sets, for the panel and exports."""
        return next(rule for rule, act in self.scale_actions.items() if act.isChecked())

    def set_colour_scale(self, rule: str) -> None:
        self.scale_actions[rule if rule in self.scale_actions else "layer"].trigger()

    def set_colormap(self, name: str) -> None:
        self.colormap = name
        self.cmap_actions[name].setChecked(True)
        for hp in [self.focus, *self.small]:
            hp.set_colormap(name)                # the focused head's colour bar with it

    def _layer_changed(self, v: int) -> None:
        if self.trace is not None:
            self.state.update(kind=self.shown_kind, layer=v - 1)

    def _ensure_small(self, H: int) -> None:
        if len(self.small) == H:
            return
        self.grid.clear()
        self.small = []
        self._small_shown = self._framed = None
        cols = self._small_columns(H)
        for h in range(H):
            plot = self.grid.addPlot(row=h // cols, col=h % cols, enableMenu=False)   # menus: 5 ms a plot
            plot.hideAxis("left")
            plot.hideAxis("bottom")
            hp = Heatmap(plot, font_size=self._small_pt(self.font().pointSizeF()), labels=False,
                         row_tokens=False, col_tokens=False, colormap=self.colormap)
            self.small.append(hp)
        self._fit_strip()

    def _small_columns(self, H: int) -> int:
        """The small heads' columns: a square grid beside the focused head, two in a narrow canvas (three titles
        "head 1" side by side held the column 175 pixels wide at a class's font); in a strip under it, rows of at
        most STRIP_COLUMNS."""
        if self._strip:
            return math.ceil(H / math.ceil(H / STRIP_COLUMNS))
        return min(2, H) if self._narrow else max(1, math.ceil(math.sqrt(H)))

    def _place_small(self) -> None:
        """The small heads beside the focused one, or in a strip under it (see _fit_width): built again (as for
        another number of heads, not moved: a plot taken out of its scene and put back is a path pyqtgraph does not
        keep), and drawn."""
        H = len(self.small)
        self.grid.clear()                 # the plots out of the scene first: the grid deleted with its plots in
        self.small = []                   # it crashed (a segfault starting in presentation mode, Qt 6.11)
        layout = self.canvas.ci
        layout.removeItem(self.grid)
        self.grid = layout.addLayout(row=1, col=0) if self._strip else layout.addLayout(row=0, col=1)
        layout.layout.setColumnStretchFactor(0, 5 if self._narrow else 3)
        layout.layout.setColumnStretchFactor(1, 0 if self._strip else 1)
        layout.layout.setRowStretchFactor(0, 4 if self._strip else 1)
        layout.layout.setRowStretchFactor(1, 1 if self._strip else 0)
        if not H:
            return
        self._ensure_small(H)
        if self.trace is not None:
            self.render(self.trace, self.state)

    def _fit_strip(self) -> None:
        """The strip under the focused head as short as its titles and matrices STRIP_MATRIX pixels high allow (a
        canvas 260 pixels high in class: a taller strip left the focused matrix 55 pixels)."""
        if not (self._strip and self.small):
            self.grid.setMaximumHeight(1e6)
            return
        self.grid.layout.setContentsMargins(2, 2, 2, 2)
        font = QtGui.QFont(self.font())
        font.setPointSizeF(self._small_pt(self.font().pointSizeF()) + 2)     # the titles' size (Heatmap.set_title)
        title = 1.7 * QtGui.QFontMetricsF(font).height()        # pyqtgraph's title row: the text and its margins
        rows = math.ceil(len(self.small) / self._small_columns(len(self.small)))
        self.grid.setMaximumHeight(rows * (title + STRIP_MATRIX) + 4)

    @staticmethod
    def _small_pt(pt: float) -> float:
        """The small multiples' text: 3 points below the widgets' text, between 7 and 9 points, so that the titles
        ("head 1", 2 points larger) of neighbouring plots do not run together in presentation mode."""
        return min(max(7.0, pt - 3), 9.0)

    def _apply_fonts(self) -> None:
        """Plot text follows the application font (presentation mode, zoom): ticks 1 point larger than the
        widgets' text in the focused head, 3 points smaller in the small ones (at most 9)."""
        pt = self.font().pointSizeF()
        if pt <= 0 or pt == getattr(self, "_font_pt", None):
            return
        self._font_pt = pt
        self.focus.set_font_size(pt + 1)
        for hp in self.small:
            hp.set_font_size(self._small_pt(pt))
        self._fit_strip()
        self._fit_focus_text()
        # above the app's own text size the canvas keeps HEATMAP_LINES lines of it: the window's least size holds
        # them, so that larger text stops where the heatmap would become a strip (at 22 pt on a 1280 × 800 screen
        # it was 4 pixels high, and the next start opened so: QA)
        from ..settings import DEFAULTS
        lines = HEATMAP_LINES * QtGui.QFontMetricsF(self.font()).height() if pt > DEFAULTS["font_size"] else 0
        self.canvas.setMinimumHeight(round(lines))

    def _fit_focus_text(self) -> None:
        """In a narrow canvas the colour bar's numbers and the axis titles are smaller than the token labels (at a
        class's font the bar's numbers ran into each other, and "query (row)" was cut by the short matrix)."""
        pt = self.font().pointSizeF()
        small = tick_font(max(9.0, round(0.7 * pt, 1))) if self._narrow else self.focus.font
        self.focus.set_colorbar_font(small, label_points=pt)
        self.focus.set_axis_title_points(small.pointSizeF() + 1 if self._narrow else None)

    def changeEvent(self, event) -> None:
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange):
            self._apply_fonts()
        super().changeEvent(event)

    def minimumSizeHint(self) -> QtCore.QSize:
        hint = super().minimumSizeHint()
        return QtCore.QSize(min(hint.width(), 520), hint.height())

    def view_key(self, state):
        return (state.kind, state.layer, state.stack, state.sublayer, state.head, state.step, self.mean.isChecked(),
                self.colour_scale())           # the stage: its note says when it has no attention of its own

    # --- rendering ----------------------------------------------------------------------------
    def render(self, trace, state) -> None:
        self.trace = trace
        schema = trace.schema
        kind = state.kind if state.kind in schema.kind_names else schema.kinds[0].name
        info = schema.kind(kind)
        n_layers = trace.n_layers(info.stack)
        # at the output the last layer, whose result the linear map reads (the output stage has no layer of its own)
        at_output = state.stack == OUTPUT
        layer = state.attention_layer(n_layers)
        weights = trace.attention(kind, layer)                      # (H, Tq, Tk)
        mask = trace.mask(kind, layer)
        rows, cols = trace.axis_tokens(kind)
        H = weights.shape[0]
        head = min(state.head, H - 1)
        self.shown_kind, self.shown_layer, self.shown_head = kind, layer, head
        self.kind.show_kind(schema, kind)
        for spin, n, v in ((self.layer, n_layers, layer + 1), (self.head, H, head + 1)):
            spin.blockSignals(True)
            if spin.maximum() != n:        # setMaximum lays the window out again even when n is unchanged
                spin.setMaximum(n)
            spin.setValue(v)
            spin.blockSignals(False)
        self.head.setEnabled(not self.mean.isChecked())
        self.layer.setEnabled(not at_output)
        self.layer.setToolTip("At the output: the last layer, which the linear map reads" if at_output
                              else LAYER_TIP)
        self._ensure_small(H)
        # a head or step change leaves the small multiples' matrices as they are: only the red frame moves
        scale = self.colour_scale()
        small_key = (kind, layer, scale, H)
        if not self._same(self._small_shown, trace, small_key):
            images = self.thumbnails.images(trace, kind, layer, scale, self.colormap,
                                            self.small[0].lut)
            levels = head_levels(weights, scale)
            for h, hp in enumerate(self.small):
                hp.show_matrix(weights[h], mask, rows, cols, f"head {h + 1}", levels=levels[h], max_labels=0,
                               max_pixels=THUMBNAIL_PIXELS, pixels=images[h])
            self._small_shown = (trace, small_key)
        off = ablated_heads(trace)
        for h, hp in enumerate(self.small):
            hp.set_crossed((kind, layer, h) in off)
        framed = None if self.mean.isChecked() else head
        if self._framed != (framed, H):
            for h, hp in enumerate(self.small):
                hp.plot.getViewBox().setBorder(pg.mkPen(HIGHLIGHT, width=3) if h == framed else pg.mkPen("#cccccc"))
                hp.set_marked(h == framed)
            self._framed = (framed, H)
            # the 3-pixel frame's outer pixels lie outside the thin one's rectangle: repaint the whole canvas, or
            # the head just left keeps a thin red outline beside the new frame (seen on a real X server)
            self.canvas.viewport().update()
        focus_off = framed is not None and (kind, layer, framed) in off
        layer_off = frozenset(a for a in off if a[:2] == (kind, layer)) if framed is None else None   # (the mean's)
        focus_key = (kind, layer, framed, scale, focus_off, layer_off)
        if not self._same(self._focus_shown, trace, focus_key):
            if self.mean.isChecked():
                focused, which = mean_of_heads_on(weights, kind, layer, off)
            else:          # no line break between a word and its number ("head" at one line's end, "1" on the next)
                focused = weights[head]
                which = f"head\u00a0{head + 1}" + (" (switched off)" if focus_off else "")
            levels = colour_levels(weights, focused, scale)
            title = f"{info.title} — layer\u00a0{layer + 1}, {which}"
            self.focus.show_matrix(focused, mask, rows, cols, title, levels=levels)         # and its colour bar
            # what a screen reader says of it: its title, then each query's strongest key (the arrow keys read
            # every cell)
            self._summary = strongest_keys(np.where(mask, focused, np.nan), rows, cols)
            accessible.name(self.canvas, f"Attention heatmap: {title}", self._summary)
            self._focus_shown = (trace, focus_key)
            # the arrow keys' cell is kept through another head, layer or step; another sentence, model or kind has
            # other rows and columns: the keys start again there (QA)
            if trace is not self._key_trace or kind != self._key_kind:
                self._key_cell = None
            self._key_trace, self._key_kind = trace, kind
            # the cell under the pointer where it is now: without a Leave (the pointer moved off while typing, on
            # some window systems) the old position's cell was read, a cell no pointer was on (QA)
            self.read_under_pointer()
            self.focus.set_crossed(focus_off)      # as its thumbnail: a short window hides the title that says so
        # the pieces of a word the model rarely read, underlined: which columns a guess is made of
        self.focus.mark_labels(rare_pieces(trace, info.queries), rare_pieces(trace, info.keys))
        step_row = state.step if info.by_step else None
        self.focus.highlight_row(step_row)
        # at a stage without attention the line below the plots says which attention is shown, until a hover
        note = stand_in(schema, state.stack, state.sublayer, info, layer)
        for hp in (self.focus, *self.small):     # a student read the FFN stage's stand-in as the FFN's attention
            if hp.dimmed != bool(note):
                hp.set_dimmed(bool(note))
        self._stage_hint = (note[0], note[1:]) if note else None
        self._update_hint()

    def _update_hint(self) -> None:
        """The line below the plots, off a cell: the stage's note where it has no attention of its own; else, when
        the heatmap has no room for every token's label, how to read them (a class at 1024 × 768 could not tell
        which column was "garden"); else the hint."""
        hidden = ALONE_HIDDEN_HINT if self.alone else LABELS_HIDDEN_HINT
        hint = self._stage_hint or (hidden if self.focus.labels_hidden() else HOVER_HINT)
        if self._stage_hint and self._key_cell is not None:    # a stage without attention: its note, not a cell
            self._key_cell = None                              # of the stand-in the keys read before (QA)
            self._mark_cell(None)
            self._pointer = None
        if hint != self.hint:
            self.hint = hint
            self._read_out(self._pointer, stale=True)

    @staticmethod
    def _same(shown, trace, key) -> bool:
        """Whether (trace, key) is what a plot already shows (the same Trace object, not an equal one)."""
        return shown is not None and shown[0] is trace and shown[1] == key

    def eventFilter(self, watched, event) -> bool:
        if watched is self.canvas and event.type() == QtCore.QEvent.Type.Leave and self._key_cell is None:
            self._pointer = None       # the read-out of the cell it last read goes: it stayed, and was taken for
            self.hover.setText(*self.hint)       # the cell of a stage that has none (QA as a student)
            self._mark_cell(None)
        elif (watched is self.canvas and event.type() == QtCore.QEvent.Type.KeyPress
              and event.key() in ARROWS and event.modifiers() == QtCore.Qt.KeyboardModifier.NoModifier):
            self.step_cell(*ARROWS[event.key()])
            return True
        elif (watched is self.canvas and event.type() == QtCore.QEvent.Type.KeyPress
              and event.key() in ZOOM_KEYS and not event.modifiers() & ~(QtCore.Qt.KeyboardModifier.KeypadModifier
                                                                          | QtCore.Qt.KeyboardModifier.ShiftModifier)):
            self.zoom_key(ZOOM_KEYS[event.key()])
            return True
        return super().eventFilter(watched, event)

    def zoom_key(self, factor: float | None) -> None:
        """+ and − on the heatmap zoom in and out around the cell the arrow keys read (else the view's middle), 0
        shows it whole: the wheel alone left a keyboard or a presenter's remote without the zoom."""
        if factor is None:
            self.focus.show_whole()
            return
        cell = self._current_cell()
        self.focus.zoom_by(factor, cell)
        if cell is not None:             # the read-out stays on its cell, wherever the zoom moved it
            self._pointer = self.focus.plot.vb.mapViewToScene(QtCore.QPointF(cell[1], cell[0]))

    def step_cell(self, d_row: int, d_col: int) -> None:
        """Arrow keys on the heatmap (it has the keyboard): read the next cell out, as the pointer does. A keyboard
        user could not read one exact weight (QA). From the framed row, or the first cell, at the first press."""
        shape = self.focus.shown.shape if self.focus.shown is not None else (0, 0)
        if not shape[0] or not shape[1]:
            return
        cell = self._current_cell()
        if cell is None:
            r, c = min(max(self.focus.framed_row or 0, 0), shape[0] - 1), 0
        else:
            r = min(max(cell[0] + d_row, 0), shape[0] - 1)
            c = min(max(cell[1] + d_col, 0), shape[1] - 1)
        self.focus.show_cell(r, c)                    # zoomed in: the view follows the cell read
        self._key_cell = (r, c)
        self._pointer = self.focus.plot.vb.mapViewToScene(QtCore.QPointF(c, r))
        self._read_out(self._pointer)
        self._mark_cell((r, c))
        accessible.announce(self.canvas, self.hover.text())      # a screen reader says the cell too
        # and keeps it, read again where asked ("where am I"): it had been said once, then nowhere (QA)
        accessible.name(self.canvas, self.canvas.accessibleName(),
                        f"Read: {accessible.plain(self.hover.text())}. {self._summary}")

    def _current_cell(self) -> tuple[int, int] | None:
        """The cell read now: the arrow keys' (kept through a change of head, layer or step, whatever the view's
        layout did to the point it was read at: a resize or another kind had moved the next key elsewhere, QA),
        else the one under the pointer's last position."""
        if self._key_cell is not None:
            return self._key_cell
        return self.focus.cell_at(self._pointer) if self._pointer is not None else None

    def keyboard_point(self) -> QtCore.QPoint:
        """Where the plot menu opens from the keyboard (Menu, Shift+F10): at the cell the arrow keys read, which
        comes back after it (restore_cell), else at the focused heatmap's middle (the canvas' middle could be a
        small head's, and the menu would have focused that one)."""
        self._kept_cell = self._current_cell()
        kept = self._kept_cell
        where = self.focus.plot.vb.mapViewToScene(QtCore.QPointF(kept[1], kept[0])) if kept is not None \
            else self.focus.plot.sceneBoundingRect().center()
        return self.canvas.mapFromScene(where)

    def restore_cell(self) -> None:
        """The cell read before the keyboard's menu opened, framed and read again (the menu's grab had left the
        canvas and taken them away: the student started again from the first cell, QA)."""
        cell, self._kept_cell = getattr(self, "_kept_cell", None), None
        if cell is not None and self.focus.shown is not None and cell[0] < self.focus.shown.shape[0] \
                and cell[1] < self.focus.shown.shape[1]:
            self._pointer = self.focus.plot.vb.mapViewToScene(QtCore.QPointF(cell[1], cell[0]))
            self._read_out(self._pointer)
            self._mark_cell(cell)

    def _mark_cell(self, cell: tuple[int, int] | None) -> None:
        """A black-and-white frame around the cell the keyboard reads (readable on every colour of the map); none
        once the pointer reads one."""
        if self._cell_marks is None:
            if cell is None:
                return
            self._cell_marks = []
            for colour, width in (("k", 4), ("w", 2)):
                mark = QtWidgets.QGraphicsRectItem()
                mark.setPen(pg.mkPen(colour, width=width))
                mark.setZValue(11)
                self.focus.plot.addItem(mark)
                self._cell_marks.append(mark)
        for mark in self._cell_marks:
            mark.setVisible(cell is not None)
            if cell is not None:
                mark.setRect(QtCore.QRectF(cell[1] - 0.5, cell[0] - 0.5, 1, 1))

    def _fit_width(self, width: int) -> None:
        """A narrow canvas (a 720p projector) gives the focused head a larger share, its colour bar no label and
        smaller numbers: its row labels, axis titles and colour bar at the class's font had left the matrix 45
        pixels wide. A narrower one (1024 × 768 in class) puts the small heads in a strip under it: two columns
        of them beside it still left the matrix 75 to 100 pixels wide and 4 of 12 columns labelled."""
        QtCore.QTimer.singleShot(0, self, self._update_hint)    # once the plots have their new size
        narrow, strip = width < NARROW_CANVAS, width < STRIP_CANVAS
        if (narrow, strip) == (self._narrow, self._strip):
            return
        self._narrow, self._strip = narrow, strip
        self.focus.show_colorbar_label(not narrow)
        self._fit_focus_text()
        self._place_small()

    def read_under_pointer(self) -> None:
        """Read the cell under the pointer now, or show the hint if it is off the canvas: a menu closed by a click
        elsewhere, or a save dialog, sends the canvas no Leave, and the last cell's weight stayed (QA)."""
        pos = self.canvas.mapFromGlobal(QtGui.QCursor.pos())
        cell, shape = self._key_cell, self.focus.shown.shape if self.focus.shown is not None else (0, 0)
        if cell is not None and not (cell[0] < shape[0] and cell[1] < shape[1]):
            cell = self._key_cell = None                 # a shorter sentence: the pointer's reading again
        if cell is not None:
            # the cell the arrow keys read stays read in another head, layer or step (it went, and the next key
            # started again from the first cell: QA, a lecturer comparing one cell across heads)
            self._pointer = self.focus.plot.vb.mapViewToScene(QtCore.QPointF(cell[1], cell[0]))
            self._read_out(self._pointer)
            self._mark_cell(cell)
        elif self.canvas.rect().contains(pos):
            self._hovered(self.canvas.mapToScene(pos))
        else:
            self._pointer = None
            self.hover.setText(*self.hint)
            self._mark_cell(None)

    def _hovered(self, pos) -> None:
        self._key_cell = None                   # the pointer reads now
        self._pointer = pos
        self._read_out(pos)
        self._mark_cell(None)

    def _read_out(self, pos, stale: bool = False) -> None:
        """The read-out of the focused heatmap's cell under a scene position. stale: the heatmap changed under
        the read-out (another head, layer or sentence), which now reads the cell under the pointer, or the hint
        when the pointer is on no cell, never a cell of the matrix shown before."""
        cell = self.focus.cell_at(pos) if pos is not None else None
        if cell is None or self.trace is None:
            self.hover.setText(*self.hint)          # off the heatmap's cells: no cell's read-out stays
            return
        r, c = cell
        value = self.focus.shown[r, c]
        query, key, masked = self.focus.rows[r], self.focus.cols[c], self.focus.is_masked(r, c)
        # positions from 0, as PE(pos), the Math tab and the generation steps count them
        weight = "masked" if masked else weight_text(float(value))
        if not masked and np.isnan(value):     # computed as NaN, not masked (QA: it read "masked")
            weight = "NaN (not a number)"
        info = self.trace.schema.kind(self.shown_kind)
        # a decoder's row reads one token and predicts the next: QA took row "une" looking at "car" for a shift by one
        out = self.trace.out_tokens
        nxt = out[r] if info.by_step and r < len(out) else None
        ahead = f", predicting “{nxt}”" if nxt is not None else ""
        text = (f"query “{query}” (position {r}{ahead}) → key “{key}” (position {c}): "
                + ("masked — this cell gets no attention" if masked else f"weight {weight}"))
        rare = rare_word_at(self.trace, info.keys, c) or rare_word_at(self.trace, info.queries, r)
        if rare:                                   # an underlined token: what the underline means
            text += f" · {rare}"
        # a projector's narrow row
        tight = f"“{query}”→“{key}” " + ("masked" if masked else f"{float(value):.3g}")
        # the shorter forms keep what the row predicts as long as they can (QA: at 1280 × 720 only the short form
        # showed, and it had lost it)
        shorter = [f"“{query}” (position {r}{ahead}) → “{key}” (position {c}): {weight}"]
        # a token its axis holds twice keeps its position in the shorter forms: the seed example's decoder reads
        # "<s> sat sat sat …", and "“sat” (predicting “sat”) → “sat”" named no cell (QA as a student)
        q = f"“{query}”" + (f" at {r}" if self.focus.rows.count(query) > 1 else "")
        k = f"“{key}”" + (f" at {c}" if self.focus.cols.count(key) > 1 else "")
        if nxt is not None:
            shorter.append(f"{q} (predicting “{nxt}”) → {k}: {weight}")
            # "→" points at the key in every form: "“.”→“</s>” · “mat”" read as the key "</s>" (QA)
            shorter.append(f"{q} (next “{nxt}”) → {k}: {weight}")
            # at three digits before the prediction is let go (QA as a teacher at 1024 × 768: it was lost first)
            shorter.append(f"{q} (next “{nxt}”) → {k} " + ("masked" if masked else f"{float(value):.3g}"))
        self.hover.setText(text, shorter=(*shorter, f"{q} → {k}: {weight}", tight))

    def _clicked(self, event) -> None:
        double = getattr(event, "double", lambda: False)()
        if double and self.focus.plot.sceneBoundingRect().contains(event.scenePos()):
            self.focus.show_whole()
            return
        self.focus_head_at(event.scenePos())

    def focus_head_at(self, scene_pos) -> None:
        """Focus the small head under a scene position (a click, or a right-click before its menu)."""
        h = self.head_at(scene_pos)
        if h is not None:
            self.mean.setChecked(False)
            self.state.update(head=h)

    def head_at(self, scene_pos) -> int | None:
        """The small head under a scene position, or None."""
        for h, hp in enumerate(self.small):
            if hp.plot.sceneBoundingRect().contains(scene_pos):
                return h
        return None
