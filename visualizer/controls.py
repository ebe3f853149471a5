"""The input bar: source sentence, optional target, decoding settings, positional-encoding switch, model picker."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from model.assets import short_name
from model.command_line import MAX_BEAM
from model.config import DecodingSettings
from model.schema import DECODER_ONLY, ENCODER_DECODER

from . import accessible
from .panels.widgets import DecimalBox, FocusMark, NoteArea, ToneLabel
from .row_words import LAYOUT_WORDS, encoder_decoder_words
from .steady_label import SteadyLabel
from .text_safety import unbreakable_html

OPEN_FOLDER = "Open model folder…"
MODEL_CHARS, COMPACT_MODEL_CHARS = 14, 5     # the model picker's width in characters: beside its label, compact
QT_MAX_SIZE = 16_777_215                     # QWIDGETSIZE_MAX: no maximum
SENTENCE_CHARS = 36                          # what the sentence field keeps room for before the picker turns compact
_WITHOUT = " to see what attention does without word order"
POSITIONS_SWITCH = {        # what switching positions off does, by the open model's kind of positions
    "sinusoidal": "Switch the positional encoding off (p = 0)" + _WITHOUT,
    "learned": "Switch the learned position embeddings off (p = 0)" + _WITHOUT,
    "rotary": "Switch the rotary positions off (q and k are not rotated)" + _WITHOUT,
    "relative": "Switch the relative position bias off (every head's bias is 0)" + _WITHOUT,
    "none": "This model has no positions to switch off: it never sees word order",
}


def model_label(name: str) -> str:
    """What the model picker shows (model.assets.short_name): a bundled name as it is, a folder shortly."""
    return short_name(name)


def token_chips(pieces: list[str], given: int | set[int] = 0) -> str:
    """The output tokens as chips under the translation (rich text): lines break between chips, never inside one.
    Chips the model did not write are grey, the rest blue: the first `given` (a decoder-only model's prompt), or the
    positions in a set `given` (a masked-word model's own tokens around what it filled in)."""
    grey = set(range(given)) if isinstance(given, int) else given
    return " ".join(f"<span style='background:{'#e6e6e6;color:#555' if i in grey else '#e4ecf7;color:#111'};"
                    f"border-radius:3px;padding:1px 3px'>&nbsp;{unbreakable_html(p)}&nbsp;</span>"
                    for i, p in enumerate(pieces))


def text_pieces(trace) -> tuple[list[str], int]:
    """A decoder-only model's text as chips, and how many of them its prompt gave: the prompt's first token (its
    <s> where the tokenizer adds one), which no row predicts, then its rows' tokens: the prompt's second on, then the
    continuation ("re ##d c ##ar" for "The red car", QA). Other layouts: their output, and 0."""
    inputs = trace.tokens(trace.schema.output_stack.tokens)
    if trace.schema.layout != DECODER_ONLY or not trace.meta.get("prompt_tokens") or not inputs:
        return list(trace.out_tokens), trace.prompt_rows()
    return [inputs[0], *trace.out_tokens], trace.prompt_rows() + 1


def filled_in(inputs: list[str], outputs: list[str], mask: str) -> tuple[list[str], set[int]]:
    """A masked-word model's chips: its input with each mask replaced by the token it put there, and the
    positions it did not fill (grey). Its argmax at every position read "t ##id t t v t v v" under a text that
    only fills the masks."""
    chips = [out if tok == mask else tok for tok, out in zip(inputs, outputs)]
    return chips, {i for i, tok in enumerate(inputs) if tok != mask}


def pieces_note(pieces: list[str]) -> str:
    """What a reader needs to know about word pieces, when the tokens have them ("cha ##sed", a lone space "␣"):
    "" otherwise."""
    notes = []
    if any(p.startswith("##") and len(p) > 2 for p in pieces):
        notes.append("The model reads and writes word pieces from its vocabulary: “##” marks a piece that continues "
                     "the word before it (cha ##sed = chased).")
    if "␣" in pieces:        # a word start alone: the word after it begins with a piece that has no space of its own
        notes.append("“␣” is a piece that is a space alone: the word after it starts with a piece that has no space "
                     "of its own in the vocabulary (␣ ? = “ ?”).")
    return " ".join(notes)


def show_from_start(field: QtWidgets.QLineEdit, text: str) -> None:
    """Text the program puts in a field (a session, an example, the start) shown from its first letter: QLineEdit
    shows the end of a text wider than the field, where its cursor goes, and a class reads a sentence from the start.
    Typing is not affected: this is never called for what the user types."""
    field.setText(text)
    field.setCursorPosition(0)


class ModelBox(QtWidgets.QComboBox):
    """The Model box. Opening a model takes seconds, and its last entry opens a folder dialog: the arrow keys and
    the mouse wheel open the list to choose from, and choose nothing themselves (QA as a teacher: Down from en-fr
    opened the toy seed-example, then the folder dialog)."""

    def keyPressEvent(self, event) -> None:
        keys = (QtCore.Qt.Key.Key_Up, QtCore.Qt.Key.Key_Down, QtCore.Qt.Key.Key_PageUp, QtCore.Qt.Key.Key_PageDown,
                QtCore.Qt.Key.Key_Home, QtCore.Qt.Key.Key_End)
        if event.key() in keys and not event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier:
            self.showPopup()
            return
        super().keyPressEvent(event)

    def wheelEvent(self, event) -> None:
        event.ignore()                       # the panel under it scrolls instead


class InputBar(QtWidgets.QWidget):
    """Widgets only; the window connects them to the ViewState."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sentence = QtWidgets.QLineEdit()
        self.sentence.setPlaceholderText("Type an English sentence…")
        self.sentence.setClearButtonEnabled(True)
        self.target = QtWidgets.QLineEdit()
        self.target.setPlaceholderText("Optional: a translation to force through the decoder (teacher forcing)")
        self.target.setClearButtonEnabled(True)
        self.model = ModelBox()
        self.model.setToolTip("The bundled models, or a model folder of your own")
        self._writes = True                      # the open model writes its output (show_layout)
        self._details = True                     # the target and decoding rows are shown (set_details_visible)
        self.method = QtWidgets.QComboBox()
        for label, key, tip in (("Greedy", "greedy", "The most probable token at each step"),
                                ("Beam search", "beam", "Keeps the most probable partial translations at each "
                                 "step: as many as its width (a box beside it)"),
                                ("Sampling", "sample", "Draws each token from the distribution at temperature T; "
                                 "top-k and a seed in boxes beside it")):
            self.method.addItem(label, key)
            self.method.setItemData(self.method.count() - 1, tip, QtCore.Qt.ItemDataRole.ToolTipRole)
        # as `translate --beam` and session files take it (64 typed here silently left 6: the box stopped at 16)
        self.beam = QtWidgets.QSpinBox(prefix="width ", minimum=1, maximum=MAX_BEAM, value=4)
        self.beam.setToolTip(f"Beam width: the hypotheses kept at each step, 1 to {MAX_BEAM}")
        self.temperature = DecimalBox(prefix="T = ", minimum=0.05, maximum=5.0, singleStep=0.1,
                                                    value=1.0, decimals=2)
        self.temperature.setToolTip("Temperature (0.05 to 5): divides the logits before the softmax. Sampling draws "
                                    "from that distribution; greedy and beam search choose as at T = 1, and T "
                                    "changes only the output panel's distribution, to show what sampling would do")
        self.top_k = QtWidgets.QSpinBox(prefix="top-k ", minimum=0, maximum=1000, value=0, specialValueText="top-k off")
        self.seed = QtWidgets.QSpinBox(prefix="seed ", minimum=0, maximum=99_999, value=0)
        self.positional = QtWidgets.QCheckBox("Positional encoding")
        self.positional.setChecked(True)
        self.positional.setToolTip(POSITIONS_SWITCH["sinusoidal"])
        self.translation = SteadyLabel(grow_only=True)    # a new translation moves no panel (see SteadyLabel)
        # the keyboard reaches the translation too (Tab), and a screen reader reads it (see the window's
        # _set_translation for its name: the label's own text holds the chips, a letter at a time)
        self.translation.label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse
                                                       | QtCore.Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.translation.label.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)    # (Qt gives it click focus only)
        self._translation_mark = FocusMark(self.translation.label)    # framed while it has the keyboard, as fields are
        self.translation.label.setContentsMargins(6, 3, 6, 3)           # (the frame clear of the text)
        self.notice = ToneLabel("warning", bold=True)
        self.notice.setVisible(False)
        self.notice.setWordWrap(True)          # on lines of its own rather than past the panel's edge
        flags = QtCore.Qt.TextInteractionFlag
        # a cut note's [more] link (see the window), for the keyboard too
        self.notice.setTextInteractionFlags(flags.LinksAccessibleByMouse | flags.LinksAccessibleByKeyboard)
        # framed while it has the keyboard: Tab stopped on it with nothing to see before it reached the link (QA)
        self._notice_mark = FocusMark(self.notice)
        policy = QtWidgets.QSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.notice.setSizePolicy(policy)

        grid = QtWidgets.QGridLayout(self)
        grid.setSizeConstraint(QtWidgets.QLayout.SizeConstraint.SetNoConstraint)   # minimumSizeHint decides
        grid.setContentsMargins(6, 4, 6, 4)
        self.sentence_label = QtWidgets.QLabel("&English:")      # Alt+E: back to the sentence
        grid.addWidget(self.sentence_label, 0, 0)
        grid.addWidget(self.sentence, 0, 1)
        self.model_label = QtWidgets.QLabel("&Model:")
        grid.addWidget(self.model_label, 0, 2)
        grid.addWidget(self.model, 0, 3)
        self.target_label = QtWidgets.QLabel("Tar&get:")
        grid.addWidget(self.target_label, 1, 0)
        grid.addWidget(self.target, 1, 1, 1, 3)
        for label, field in ((self.sentence_label, self.sentence), (self.model_label, self.model),
                             (self.target_label, self.target)):
            label.setBuddy(field)               # Alt + the underlined letter: from any panel back to the field
        # a hidden label's letter does nothing (compact, see _fit_model): Alt+M typed an "m" into the sentence (QA)
        self.model_key = QtGui.QShortcut(QtGui.QKeySequence("Alt+M"), self, enabled=False,
                                         activated=lambda: self.model.setFocus(QtCore.Qt.FocusReason.ShortcutFocusReason))
        self.model_key.setContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        # the decoding controls in two groups: side by side, or stacked when the window is narrow (big fonts); what
        # every method reads first, then the boxes of one method or another (see _fit_decoding), so that choosing
        # a method moves nothing before them (the beam width pushed T and the positions switch aside: QA)
        self.decoding = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        first, second = QtWidgets.QHBoxLayout(), QtWidgets.QHBoxLayout()
        for w in (self.method, self.temperature, self.positional):
            first.addWidget(w)
        for w in (self.beam, self.top_k, self.seed):
            second.addWidget(w)
        first.addStretch(1)
        second.addStretch(1)
        self.decoding.addLayout(first)
        self.decoding.addLayout(second)
        self.decoding_label = QtWidgets.QLabel("Decoding:")
        self.decoding_label.setBuddy(self.method)      # a screen reader names the method's box by it
        grid.addWidget(self.decoding_label, 2, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        grid.addLayout(self.decoding, 2, 1, 1, 3)
        self.translation_label = QtWidgets.QLabel("Translation:")     # the widest label: the first column's width
        grid.addWidget(self.translation_label, 3, 0)
        grid.addWidget(self.translation, 3, 1, 1, 3)
        # whole notes scroll past a height (see the window); made in its parent (made alone, it changed the order in
        # which Qt made its X windows, and a test finding the window by its title found Qt's hidden 1 × 1 one)
        self.notice_area = NoteArea(self.notice, self)
        grid.addWidget(self.notice_area, 4, 1, 1, 3)
        grid.setColumnStretch(1, 1)
        for widget, words in ((self.model, "Model"), (self.method, "Decoding method"), (self.beam, "Beam width"),
                              (self.temperature, "Temperature"), (self.top_k, "Top-k"), (self.seed, "Random seed")):
            accessible.name(widget, words)      # a screen reader said "1.00", or the model's name alone
        self.model.setMinimumContentsLength(MODEL_CHARS)
        self.model.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.method.currentIndexChanged.connect(self._enable)
        self.method.currentIndexChanged.connect(self._fit_decoding)     # the method's own boxes, where room is short
        self.target.textChanged.connect(self._enable)      # a given target is read, not decoded
        self.target.textChanged.connect(lambda text: text and self._show_target())   # (not hidden as it is cleared)
        self._enable()

    def set_details_visible(self, on: bool) -> None:
        """Show or hide the target field and the decoding controls (presentation mode hides them for room)."""
        self._details = on
        for w in (self.decoding_label, self.method, self.beam, self.temperature, self.top_k, self.seed,
                  self.positional):
            w.setVisible(on)
        self._show_target()
        self._fit_decoding()          # (the boxes the method does not read hide again where room is short)

    def _show_target(self) -> None:
        """The target row with the other details, and whenever it holds a target: hidden in presentation mode, a
        target from the last session was forced through the decoder unseen (QA as a teacher)."""
        on = self._details or bool(self.target.text())
        for w in (self.target_label, self.target):
            if w.isHidden() == on:
                w.setVisible(on)

    def details_visible(self) -> bool:
        return not self.method.isHidden()

    def minimumSizeHint(self) -> QtCore.QSize:
        """As wide as the wider of the two decoding groups, with the label column: each with all its boxes,
        shown or not (see _fit_decoding; a least width that shrank as boxes hid moved the docks, and presentation
        mode then did not put them back where they were)."""
        hint = self.layout().minimumSize()
        if not self._details:
            return hint
        grid, gap = self.layout(), self.decoding.spacing()
        half = max(sum(w.minimumSizeHint().width() + gap for w in group) - gap
                   for group in ((self.method, self.temperature, self.positional), (self.beam, self.top_k, self.seed)))
        label = self.decoding_label.minimumSizeHint().width()
        if self.decoding.direction() == QtWidgets.QBoxLayout.Direction.TopToBottom:
            left, _, right, _ = grid.getContentsMargins()
            return QtCore.QSize(max(hint.width(), left + right + label + grid.horizontalSpacing() + half), hint.height())
        return QtCore.QSize(max(half + label + 40, 420), hint.height())

    def compact_model(self) -> bool:
        return self.model_label.isHidden()

    def _fit_model(self) -> None:
        """The model picker at full size while the sentence field keeps room for SENTENCE_CHARS characters beside
        it; else compact (no label, a narrower box: the status bar names the model), so that with a projector's
        large text in a narrow column the sentence the class reads shows whole and no row is added."""
        grid = self.layout()
        left, _, right, _ = grid.getContentsMargins()
        fm = self.model.fontMetrics()             # a combo box is as wide as n X's plus its frame and arrow
        frame = self.model.sizeHint().width() - fm.horizontalAdvance("X" * self.model.minimumContentsLength())
        room = (self.width() - left - right - 3 * grid.horizontalSpacing() - self.translation_label.sizeHint().width()
                - self.model_label.sizeHint().width() - frame - fm.horizontalAdvance("X" * MODEL_CHARS))
        compact = room < SENTENCE_CHARS * self.sentence.fontMetrics().averageCharWidth()
        if compact != self.compact_model():
            self.model_label.setHidden(compact)
            self.model_key.setEnabled(compact)
            self.model.setMinimumContentsLength(COMPACT_MODEL_CHARS if compact else MODEL_CHARS)
        # the combo box keeps its old minimum size hint: bound it, else the layout still gives it the old width;
        # set at every fit, so that a new text size while compact (Ctrl+=) gets a box of the new size
        self.model.setMaximumWidth(self.model.sizeHint().width() if compact else QT_MAX_SIZE)

    def _fit_decoding(self) -> None:
        """The decoding controls on one row when they fit beside the label column, else on two. Where they do not
        fit, the boxes the chosen method does not read hide (the beam width but for beam search, top-k and seed but
        for sampling), and the rest is one row if it fits: at 1280 × 720 a second row of two greyed boxes took 30
        pixels from the heatmap's 150."""
        if not self._details:
            return
        label, gap = self.decoding_label.sizeHint().width(), self.decoding.spacing()
        every = (self.method, self.temperature, self.positional, self.beam, self.top_k, self.seed)
        reads = {"beam": (self.beam,), "sample": (self.top_k, self.seed)}.get(self.method.currentData(), ())
        unread = (self.beam, self.top_k, self.seed)

        def row(widgets) -> int:
            return label + sum(w.sizeHint().width() + gap for w in widgets) + 40

        short = self.width() < row(every)
        for w in unread:
            w.setVisible(not short or w in reads)
        shown = [w for w in every if not w.isHidden()]
        wide = self.width() >= row(shown)
        want = QtWidgets.QBoxLayout.Direction.LeftToRight if wide else QtWidgets.QBoxLayout.Direction.TopToBottom
        if self.decoding.direction() != want:
            self.decoding.setDirection(want)

    def _fit(self) -> None:
        self._fit_model()
        self._fit_decoding()

    def resizeEvent(self, event) -> None:
        self._fit()
        super().resizeEvent(event)

    def changeEvent(self, event) -> None:
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange):
            QtCore.QTimer.singleShot(0, self._fit)
        super().changeEvent(event)

    def _enable(self) -> None:
        m = self.method.currentData()
        forced = self._writes and bool(self.target.text().strip())
        # an encoder-only model fills every position at once; with a target the decoder reads it (teacher forcing):
        # neither decodes (the temperature still shapes the output panel's distribution)
        writes = self._writes and not forced
        self.method.setEnabled(writes)
        self.beam.setEnabled(writes and m == "beam")
        self.top_k.setEnabled(writes and m == "sample")
        self.seed.setEnabled(writes and m == "sample")
        self.method.setToolTip(
            "This model fills every position at once: no decoding to choose (the temperature still shapes the "
            "output panel)" if not self._writes else
            "A target is given: the decoder reads it (teacher forcing), nothing is decoded; clear the target to "
            "decode" if forced else "")

    def settings(self) -> DecodingSettings:
        return DecodingSettings(method=self.method.currentData(), beam=self.beam.value(),
                                temperature=self.temperature.value(), top_k=self.top_k.value(), seed=self.seed.value())

    def show_layout(self, layout: str, has_output: bool = True, family: str = "seed", model: str = "",
                    mask: str | None = None) -> None:
        """Name the rows for the open model's layout: an English sentence and its translation, a prompt and its
        continuation, or a text with its mask words filled in by the encoder (which takes no target; mask: the
        model's own mask token, RoBERTa's <mask>); an encoder-decoder's as its family and name (model) say
        (encoder_decoder_words)."""
        sentence, output, hint, target = (encoder_decoder_words(family, model) if layout == ENCODER_DECODER
                                          else LAYOUT_WORDS.get(layout, LAYOUT_WORDS[ENCODER_DECODER]))
        self.sentence_label.setText(sentence)
        self.translation_label.setText(output)
        self.sentence.setPlaceholderText(hint.replace("[MASK]", mask or "[MASK]"))
        self.target.setEnabled(target is not None)
        self.target.setPlaceholderText(target or "This model reads its text and writes none: nothing to force")
        # greedy, beam, top-k and seed choose what a decoder writes; a masked-word model writes nothing step by
        # step (the temperature still shapes the output panel's distribution)
        self._writes = target is not None
        # a bare encoder (BertModel) has no output layer: no distribution for the temperature to shape (QA)
        self.temperature.setEnabled(has_output)
        self.temperature.setToolTip("" if has_output else "This model has no output layer: nothing to shape")
        self._enable()

    def show_positions(self, positions: str) -> None:
        """Say what the positions switch does for the open model (one of model.schema.POSITIONS); a model without
        positions has nothing to switch."""
        self.positional.setEnabled(positions != "none")
        self.positional.setToolTip(POSITIONS_SWITCH.get(positions, POSITIONS_SWITCH["sinusoidal"]))

    def show_settings(self, s: DecodingSettings) -> None:
        widgets = (self.method, self.beam, self.temperature, self.top_k, self.seed)
        for w in widgets:
            w.blockSignals(True)
        self.method.setCurrentIndex(max(0, self.method.findData(s.method)))
        self.beam.setValue(s.beam)
        self.temperature.setValue(s.temperature)
        self.top_k.setValue(s.top_k)
        self.seed.setValue(s.seed)
        for w in widgets:
            w.blockSignals(False)
        self._enable()
