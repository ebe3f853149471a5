"""Compare two runs: pin the run on screen (A), change something (a word, positional encoding off, a head
switched off), and see the pinned run and the current one (B) side by side for the focused head, their
difference B − A on a diverging colour map centred on 0 when the two matrices have the same shape, and both
next-token distributions at the step in view. A panel too narrow for three matrices in a row (a tab of the side
dock) shows one at a time, B − A first, chosen by buttons. Right-click any of the three heatmaps to save it."""
from __future__ import annotations

import html

import numpy as np
from PySide6 import QtWidgets

from model.ablation import ablated_heads, describe
from model.assets import short_name
from model.text import probability
from model.top_k import top_k_ids

from ..export import TITLE_CHARS, cut_words, run_title
from ..plotting.colormaps import COLORMAP, SIGNED_COLORMAP, symmetric_levels
from ..plotting.plot_box import HeatmapBox
from ..text_safety import isolate
from .output import OutputPanel, sampling_cut

TOP = 5          # tokens listed per output distribution
SCREEN_CHARS = 60          # of a run's sentence in A's and B's titles on screen (TITLE_CHARS in their figures)
SIDE_BY_SIDE_FROM = 780    # pixels of width: A, B and B − A in a row
NARROWEST = 200            # a matrix's least width
VIEWS = (("B − A", "The difference: what the change did to this head's weights"),
         ("A", "The pinned run"), ("B", "The run on screen now"))


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def token_difference(a: tuple[list[str], list[str]], b: tuple[list[str], list[str]]) -> str | None:
    """Where two runs' (rows, columns) tokens first differ, in words ("3rd row: “La” in A, “Je” in B"); None when
    they are the same. QA: two translations of 12 tokens each were subtracted row by row, "Je" minus "La", labelled
    B's."""
    for axis, (xs, ys) in zip(("row", "column"), zip(a, b)):
        if list(xs) != list(ys):
            i = next((k for k, (x, y) in enumerate(zip(xs, ys)) if x != y), min(len(xs), len(ys)))
            x = f"“{xs[i]}”" if i < len(xs) else "nothing"
            y = f"“{ys[i]}”" if i < len(ys) else "nothing"
            return f"{ordinal(i + 1)} {axis}: {x} in A, {y} in B"    # "row 1" read as the first row (QA)
    return None


def differing_part(text: str, other: str, chars: int) -> str:
    """text as a title of chars quotes it: its start (cut at a word), or, where its start would read as other's,
    from a word before the first difference, after "…" (A's and B's titles were the same 60 characters where the
    sentences differed after them: QA)."""
    text, other = " ".join(text.split()), " ".join(other.split())
    first = next((k for k, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    if text == other or first < chars - 12:
        return cut_words(text, chars)
    start = text.rfind(" ", 0, max(first - chars // 3, 0)) + 1
    return "…" + cut_words(text[start:], chars - 1)


def run_label(trace, chars: int = TITLE_CHARS, other: str | None = None) -> str:
    """One line naming a run: its sentence (up to chars, cut at a word; where it differs from other's, with other),
    and what was switched off or forced."""
    m = trace.meta
    sentence = str(m.get("sentence", ""))
    quoted = differing_part(sentence, other, chars) if other is not None else cut_words(sentence, chars)
    parts = [f"“{isolate(quoted)}”"]      # (a U+202E in it turned the rest around, QA)
    if m.get("mode") == "teacher-forced":
        parts.append("teacher-forced")
    if m.get("positional") is False:
        parts.append("no positional encoding")
    off = ablated_heads(trace)
    if off:
        count, _, which = describe(off, trace.schema).partition(": ")     # "1 head off", "Cross L3 H2"
        parts.append(f"{count.replace(' ', chr(0xa0))}: {which}")   # never broken across lines ("1 / head off", QA)
    return ", ".join(parts)


class ComparePanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.pin_button = QtWidgets.QPushButton("Pin this run as A")
        self.pin_button.setToolTip("Keep the run on screen; change the sentence, a setting or a head and compare")
        self.unpin_button = QtWidgets.QPushButton("Unpin")
        self.pin_button.clicked.connect(self.pin)
        self.unpin_button.clicked.connect(self.unpin)
        self.choice = QtWidgets.QButtonGroup(self)       # which matrix a narrow panel shows: one at a time
        self.choice_buttons = {}
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.pin_button)
        bar.addWidget(self.unpin_button)
        bar.addStretch(1)
        views = QtWidgets.QHBoxLayout()              # a row of its own: beside the pin buttons it held a tab wide
        self.show_label = QtWidgets.QLabel("Show:")
        views.addWidget(self.show_label)
        for name, tip in VIEWS:
            button = QtWidgets.QRadioButton(name)       # its dot shows the choice in every theme (a checked push
            button.setToolTip(tip)                        # button looked like the others in high contrast)
            self.choice.addButton(button)
            self.choice_buttons[name] = button
            views.addWidget(button)
        views.addStretch(1)
        self.choice_buttons[VIEWS[0][0]].setChecked(True)
        self.choice.buttonClicked.connect(lambda _button: self._arrange())
        self.note = QtWidgets.QLabel("Pin a run, then change something: A is the pinned run, B the one on screen.")
        self.note.setWordWrap(True)
        self.a = HeatmapBox("A (pinned)", "query", "key", colormap=COLORMAP, bar_label="weight", min_height=200)
        self.b = HeatmapBox("B (now)", "query", "key", colormap=COLORMAP, bar_label="weight", min_height=200)
        self.diff = HeatmapBox("B − A", "query", "key", colormap=SIGNED_COLORMAP, bar_label="B − A",
                               min_height=200)
        for box in (self.a, self.b, self.diff):       # their figures' titles name their runs: A is not on screen
            box.names_its_run = True
        self.boxes = {"A": self.a, "B": self.b, "B − A": self.diff}
        for box in self.boxes.values():
            box.setMinimumWidth(NARROWEST)           # three in a row must not hold the panel wider than the rule
        self.outputs = QtWidgets.QLabel()
        self.outputs.setWordWrap(True)
        self.grid = QtWidgets.QGridLayout()
        self.grid.setSpacing(6)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addLayout(views)
        layout.addWidget(self.note)
        layout.addLayout(self.grid, 1)
        layout.addWidget(self.outputs)
        self.pinned = None
        self.current = None
        self.vocab: list[str] | None = None
        self.pinned_vocab: list[str] | None = None      # the pinned run's model's pieces
        self.pinned_shaping = (1.0, 0)                  # the temperature and top-k its distribution was shown at
        self.difference: np.ndarray | None = None      # B − A shown (None when the shapes differ)
        self.side_by_side: bool | None = None
        self._comparing = False
        self._arrange()

    def set_vocab(self, pieces) -> None:
        self.vocab = [str(p) for p in pieces] if pieces is not None else None

    def view_key(self, state):
        return (state.kind, state.layer, state.stack, state.head, state.step, id(self.pinned),
                self._shaping(self.current, state))

    @staticmethod
    def _shaping(trace, state) -> tuple[float, int]:
        """(temperature, top-k cut) of a run's next-token distribution, as the Output panel draws it."""
        return OutputPanel._temperature(state), sampling_cut(trace, state) if trace is not None else 0

    def pin(self) -> None:
        if self.current is not None:
            self.pinned = self.current
            # its model's pieces: after another model opened, A's top tokens were read in B's vocabulary ("Les
            # 0.931" became "dr 0.931", QA)
            self.pinned_vocab = self.vocab
            # and its temperature: A's tokens were listed at T = 1 after T went from 2 to 1 (QA as a researcher)
            self.pinned_shaping = self._shaping(self.current, self.state)
            self.render(self.current, self.state)

    def unpin(self) -> None:
        self.pinned = None
        if self.current is not None:
            self.render(self.current, self.state)

    def chosen(self) -> str:
        """The matrix a narrow panel shows ('B − A', 'A' or 'B')."""
        return self.choice.checkedButton().text()

    def _arrange(self) -> None:
        """The three matrices side by side when the panel is wide enough for them, else the chosen one alone (a
        tab in the window's side dock: stacked, B and B − A were below the fold)."""
        wide = self.width() >= SIDE_BY_SIDE_FROM
        if wide != self.side_by_side:
            self.side_by_side = wide
            for i, box in enumerate((self.a, self.b, self.diff)):
                self.grid.removeWidget(box)
                self.grid.addWidget(box, 0, i if wide else 0)
        there = [] if not self._comparing else ["A", "B"] + (["B − A"] if self.difference is not None else [])
        shown = there if wide else [self.chosen()] if self.chosen() in there else there[1:2]
        for name, box in self.boxes.items():
            box.setVisible(name in shown)
        for name, button in self.choice_buttons.items():
            button.setVisible(bool(there) and not wide)
            button.setEnabled(name in there)
        self.show_label.setVisible(bool(there) and not wide)
        self.outputs.setVisible(self._comparing)
        self.unpin_button.setEnabled(self.pinned is not None)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._arrange()

    def _show_parts(self, on: bool) -> None:
        self._comparing = on
        if not on:
            self.difference = None
        self._arrange()

    def render(self, trace, state) -> None:
        self.current = trace
        a = self.pinned
        self._show_parts(a is not None)
        if a is None:
            self.note.setText("Pin a run, then change something: A is the pinned run, B the one on screen.")
            return
        kind = state.kind
        # the same name can be another stack's (GPT-2's "self" is its decoder's, BERT's its encoder's: QA)
        if kind not in a.schema.kind_names or kind not in trace.schema.kind_names \
                or a.schema.kind(kind).stack != trace.schema.kind(kind).stack:
            self.note.setText("The pinned run's model has no such attention kind: nothing to compare.")
            self._show_parts(False)
            return
        info = trace.schema.kind(kind)
        layer, head = state.attention_layer(trace.n_layers(info.stack)), state.head    # (at the output, the last)
        if layer >= a.n_layers(info.stack) or head >= a.n_heads:
            self.note.setText("The pinned run's model has no such layer or head.")
            self._show_parts(False)
            return
        wa, wb = a.attention(kind, layer, head), trace.attention(kind, layer, head)
        top = max(float(wa.max()), float(wb.max()), 1e-6)
        models = [t.meta.get("model", "") for t in (a, trace)]
        where = f"{info.title}, layer {layer + 1}, head {head + 1}"
        for box, t, w, name in ((self.a, a, wa, "A"), (self.b, trace, wb, "B")):
            rows, cols = t.axis_tokens(kind)
            mask = t.mask(kind, layer)         # cells the model never uses hatched, as in the attention panel
            box.show_matrix(np.where(mask, w, np.nan), rows, cols, levels=(0.0, top), mask=mask)
            model = f"{short_name(t.meta.get('model', ''))}, " if models[0] != models[1] else ""   # two models
            # on screen the sentence's start (a 240-character one took 12 lines of a dock's title, and left the
            # heatmap a strip: QA); a figure of it says which head and model too, as every exported heatmap does
            other = (trace if t is a else a).meta.get("sentence", "")
            box.set_title(f"{name}: {model}{run_label(t, SCREEN_CHARS, str(other))}")
            figure = f"{name}: {where} — {run_title(t, str(t.meta.get('model', '')))}"     # (its decoding too: QA)
            box.figure_title = lambda figure=figure: figure
        differ = token_difference(a.axis_tokens(kind), trace.axis_tokens(kind)) if wa.shape == wb.shape else None
        if wa.shape == wb.shape and differ is None:
            # a cell either run never uses (a causal head's future) is no difference of 0: hatched, and empty in
            # its CSV (it read 0.0 and had 0's colour: QA)
            used = a.mask(kind, layer) & trace.mask(kind, layer)
            self.difference = np.where(used, wb.astype(np.float64) - wa.astype(np.float64), np.nan)
            rows, cols = trace.axis_tokens(kind)
            self.diff.show_matrix(self.difference, rows, cols, levels=symmetric_levels(self.difference), mask=used)
            self.diff.set_title(f"B − A: {where}")
            # what a figure of it shows: each run as a figure's title ends (model, decoding, heads off: QA)
            named = f"B − A: {where} — A: {run_title(a, models[0])}; B: {run_title(trace, models[1])}"
            self.diff.figure_title = lambda: named
            largest = float(np.nanmax(np.abs(self.difference)))   # 3 significant digits: 7.1e-06 read "0.000"
            note = f"{where}. " + (f"Largest change {largest:.3g}." if largest else "No change: the weights are equal.")
            off = ablated_heads(trace) ^ ablated_heads(a)              # heads switched off in one run only
            if (kind, layer, head) in off:
                note += (" This head is switched off in one run: that sets its output to zero, not its weights, so "
                         "its pattern changes only through heads switched off before it; the change shows in the "
                         "later layers and the output.")
            self.note.setText(note)
        elif differ is not None:
            self.difference = None
            # the same text and different outputs: a target forced through both makes the tokens equal; texts
            # that differ stay different whatever the target (the advice read so for an encoder's head, QA)
            advice = ("Give both runs the same target (Target field) to compare a head on the same words."
                      if a.meta.get("sentence") == trace.meta.get("sentence") else
                      "Show A or B to see each run's own weights.")
            self.note.setText(f"{where}. The runs read different tokens ({differ}): B − A would subtract one "
                              f"token's weights from another's. {advice}")
        else:
            self.difference = None
            self.note.setText(f"{where}. The runs' matrices differ in shape ({wa.shape[0]}×{wa.shape[1]} and "
                              f"{wb.shape[0]}×{wb.shape[1]} tokens): no difference to show.")
        self.outputs.setText(self._outputs(a, trace, state.step, self._shaping(trace, state)))
        self._arrange()

    def _outputs(self, a, b, step: int, b_shaping: tuple[float, int] = (1.0, 0)) -> str:
        """Both runs' top next tokens at the step in view (B's), as two short lists, each at its own temperature
        and top-k (said where either is not plain softmax). Decoder-only runs of prompts of other lengths are
        compared at the same token of their continuations, each step saying which: at "step 15" A predicted its 6th
        new token and B its 1st (QA)."""
        lines = []
        in_b = step - b.prompt_rows()                  # B's row: a token of its prompt (< 0) or of what it wrote
        shapings = {"A": self.pinned_shaping, "B": b_shaping}
        plain = all(shaping == (1.0, 0) for shaping in shapings.values())
        for name, t in (("A", a), ("B", b)):
            if "logits" not in t.arrays or not t.n_steps:
                continue
            s = min(max(t.prompt_rows() + in_b if in_b >= 0 else step, 0), t.n_steps - 1)
            temperature, cut = shapings[name]
            p = t.probs(s, temperature, cut)
            best = top_k_ids(p, TOP)
            words = ", ".join(f"{html.escape(self._piece(t, i))} {probability(p[i])}" for i in best)
            k = s - t.prompt_rows()
            which = "" if not t.prompt_rows() else " (in its prompt)" if k < 0 else f" (its new token {k + 1})"
            if not plain:
                which += f", T = {temperature:.2f}" + (f", top-{cut}" if cut else "")
            lines.append(f"<b>{name}</b>, step {s}{which}: {words}")
        return "<br>".join(lines)

    def _piece(self, trace, i: int) -> str:
        vocab = trace.meta.get("vocab") or (self.pinned_vocab if trace is self.pinned else self.vocab)
        return vocab[i] if vocab is not None and i < len(vocab) else f"#{i}"
