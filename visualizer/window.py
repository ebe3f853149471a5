"""The main window: input bar, caption, the panels in docks; it composes the rooms below and shows one Trace.

    runs.RunController          model runs in the worker: requests, the newest wins, the debounce, the last run
    startup.Startup             the saved or helper's frame until the model runs; the first model opens in the background
    docks.Docks                 the panels (panels/registry.py) in their docks: layout, drawing, the tab that follows
    actions.Actions             menus, toolbar, shortcuts
    ablation_actions.AblationActions  heads switched off and on (right-click a head, the Heads menu)
    animation_actions.AnimationActions  File ▸ Export animation…
    beam_prefix.BeamPrefix      a hypothesis of the beam tree on screen, with a banner back to the translation
    export_actions.ExportActions  the focused heatmap and Export all
    presentation.Presentation   presentation mode, text size, themes
    help.HelpMenu               how to read the window (F1), the keyboard shortcuts, About
"""
from __future__ import annotations

import html
import time
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from model.assets import ModelLoadError, lasting_name, model_summary
from model.families import output_pieces
from model.notes import (LOWERCASE, blank_note, cut_to_length, first_step, model_length, rare_words,
                         reads_lowercase, result_notes)
from model.schema import DECODER_ONLY, ENCODER_ONLY
from model.text import blank
from model.threads import one_torch_thread

from . import accessible
from .ablation_actions import AblationActions
from .actions import Actions, ShortcutsOverFields
from .animation_actions import AnimationActions
from .beam_prefix import BeamPrefix
from .controls import InputBar, filled_in, model_label, pieces_note, show_from_start, text_pieces, token_chips
from .docks import Docks
from .equation_text import equation_html
from .export import run_title
from .export_actions import ExportActions
from .menu_search import TypeAhead
from .folders import ask_open_file, remember, start_folder, suggest, with_type
from .help import HelpMenu
from .panels.widgets import ElidedLabel, FocusInView, quiet_colour, tone_colour
from .plotting.token_axis import TokenAxis
from .presentation import Presentation
from .runs import RunController, RunResult, load
from .session import SessionError, folder_name, read_session, save_session
from .settings import Settings
from .startup import Startup
from .state import MAX_CHARS, RUN_FIELDS, SHAPE_FIELDS, VIEW_FIELDS, ViewState, default_model
from .status_bar import FittingStatusBar, claim
from .steady_label import SteadyLabel
from .text_safety import breakable_html, isolate, unbreakable_html


def steps_gone(steps: int, model: str) -> str:
    """What opening another model did to the Training step tab's work ("" when it had taken no step): the steps
    went without a word (QA as a researcher)."""
    return (f"; the training of {model}'s weights ({steps} step{'s' if steps != 1 else ''}) is gone: it opens as "
            "loaded") if steps else ""


CHANGED_WEIGHTS = ("The Training step tab changed the model's weights in memory: this translation and every panel "
                   "are the changed model's. Training step ▸ Reset weights puts them back; the files are never "
                   "written.")
# after the rare-word note (model.notes), for one word and for several
RARE_UNDERLINED = ("The heatmap's axes underline this word's tokens.",
                   "The heatmap's axes underline these words' tokens.")
NARROW_CENTRE = 60        # characters: a centre column narrower than this gives the caption's explanation a tooltip
HEATMAP_SHARE = 0.45      # of the centre column's height: an attention canvas with less makes the window more compact


class Centre(QtWidgets.QWidget):
    """The window's centre column (inputs, caption, attention), saying when its size changes."""
    resized = QtCore.Signal()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.resized.emit()


def heads_were_off(n: int) -> str:
    return f"{n} head{'s were' if n > 1 else ' was'} switched off in the model before"


MAX_CHIPS = 40             # more output tokens than this: no chips (they are the heatmap's axes; the tooltip lists them)
MAX_CLAIMS = 2             # notes whose claims a compact window shows; the others are counted
STALE_MS = 400             # a run not shown after this long: the translation is greyed and the status says so
SETTLE_MS = 1200           # a result this long unchanged: the translation line and the heatmaps' label room fit it
MAX_SHOWN_TEXT = 300       # characters of an output shown on its line; the tooltip has the whole
MAX_LISTED = 120           # tokens the tooltip lists


def word_cut(elided: str, whole: str) -> str:
    """An elided line ends at a word: "and 1 m…" read as a word of its own (QA); "and 1…" does not."""
    if elided == whole or not elided.endswith("…"):
        return elided
    kept = elided[:-1]
    if kept and not kept[-1].isspace() and len(kept) < len(whole) and not whole[len(kept)].isspace():
        kept = kept.rsplit(" ", 1)[0] if " " in kept.strip() else kept
    kept = kept.rstrip(" ·")
    return kept if kept.endswith("…") else kept + "…"


def behind_a_tab(widget) -> bool:
    """Whether widget is in a dock that a tab hides (a dock scrolled inside its place is not)."""
    while widget is not None and not isinstance(widget, QtWidgets.QDockWidget):
        widget = widget.parentWidget()
    return widget is not None and widget.visibleRegion().isEmpty()


class MainWindow(QtWidgets.QMainWindow):
    trace_shown = QtCore.Signal()              # a new trace has been rendered in every visible panel
    run_failed = QtCore.Signal(str)            # the newest model run failed (one-line message)

    def __init__(self, model: str | None = None, sentence: str | None = None, target: str | None = None,
                 settings: Settings | None = None, lm=None, restore_layout: bool = False,
                 first=None, run: dict | None = None):
        """model: a bundled name or a folder (lm: that model, already loaded). restore_layout: put docks and
        window where the user left them last time (the command line does; tests and screenshots do not).
        first: what to show until the model (loaded in the background when lm is not given) runs, from
        first_run.first_frame: a saved frame, or a helper process translating the sentence; by default the
        frame saved for this run, if any. run: other run fields to start with (a session's decoding, positions
        and heads off)."""
        super().__init__()
        self.setWindowTitle("Attention Visualizer")
        self.setStatusBar(FittingStatusBar())      # before anything puts a label in it
        self.settings = settings or Settings()
        self.state = ViewState.at_start(model, sentence, target)
        self.state.update(**(run or {}))
        self.lm = None                             # the open model (a model.LoadedModel)
        self.trace = None                          # what every panel shows
        self.translation = None                    # … and the translation (or saved frame) it belongs to
        self._notes: list[str] = []                # the notes under the translation (see _set_notice)
        self._targets: dict[str, str] = {}         # targets set aside by the kind of model they were typed for
        self._notes_whole = False                  # [more] asked for them whole in a compact window
        self._notes_said = ""                      # the notes a screen reader was last told
        self._squeezed = 0                         # the compact level the heatmap's room asked for (see _check_room)
        self.last_run_ms = 0.0
        self._pending_view: dict | None = None     # a session's view, applied when its run is shown
        self.keeps_session = False      # whether closing saves the session for the next start (the app's window)
        self._caption_said = ""                      # the stage's title a screen reader was last told
        self._first_step = 0                       # the step a run opens at (see first_step), last run's
        self.runs = RunController(self.state, self)
        self.runs.ready.connect(self._show_run)
        self.runs.failed.connect(self._on_failure)
        self._stale = QtCore.QTimer(self, singleShot=True, interval=STALE_MS)
        self._stale.timeout.connect(self._say_stale)
        self.runs.requested.connect(self._stale.start)
        self.startup = Startup(self)
        self._build_ui()
        self.prefix = BeamPrefix(self)
        self.centralWidget().layout().insertWidget(2, self.prefix.banner)     # under the caption
        self.docking.call("set_prefix_handler", self.prefix.show_node)
        self.presentation = Presentation(self)
        self.exports = ExportActions(self)
        self.menus = Actions(self)
        self.ablation = AblationActions(self)
        self.animation = AnimationActions(self)
        self.help = HelpMenu(self)                 # last: the menu bar's last menu
        TypeAhead(self).install(self.menuBar())    # letters typed in an open menu (see menu_search)
        ShortcutsOverFields(self, (self.inputs.sentence, self.inputs.target))
        FocusInView(self)
        self.docking.start_layout(self.settings, restore_layout)
        self.state.subscribe(self._on_state)
        if lm is not None:
            self.open_model(self.state.model_name, fallback=False, lm=lm)
        else:                                      # the window first, the model (and torch) in the background
            self._sync_inputs()
            self.startup.begin(first)

    # --- layout -------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.inputs = InputBar()
        self.caption = SteadyLabel(grow_only=True)   # rewritten at every view change: must not relayout the window
        # a band of the theme's alternate base colour, with room around the text (no style sheet: a label with
        # one keeps the font it was polished with, and would not grow in presentation mode)
        self.caption.label.setContentsMargins(8, 4, 8, 4)
        # at the top of its room (the tallest stage's, see _reserve_caption_room), on the reading side
        self.caption.label.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeading | QtCore.Qt.AlignmentFlag.AlignTop)
        self.caption.label.setAutoFillBackground(True)
        self.caption.label.setBackgroundRole(QtGui.QPalette.ColorRole.AlternateBase)
        self.docking = Docks(self, self.state)
        self.panels, self.docks = self.docking.panels, self.docking.docks
        self._settle = QtCore.QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._settled)
        self.attention, self.architecture = self.panels["attention"], self.panels["architecture"]
        self.attention.set_colormap(self.settings.get("colormap"))
        self.attention.set_colour_scale(self.settings.get("colour_scale"))
        self.attention.scale_group.triggered.connect(
            lambda _: self.settings.set("colour_scale", self.attention.colour_scale()))
        self.attention.cmap_group.triggered.connect(lambda act: self.settings.set("colormap", act.text()))
        for name in ("model_view", "flow"):        # the other heatmaps of attention take the chosen map too
            self.docking.when_built(name, lambda panel: panel.set_colormap(self.attention.colormap))
            self.docking.when_built(name, lambda panel: self.attention.cmap_group.triggered.connect(
                lambda act, p=panel: p.set_colormap(act.text())))
        self.docking.when_built("training", lambda panel: panel.weights_changed.connect(
            lambda: self.runs.request(self.lm)))
        central = Centre()
        v = QtWidgets.QVBoxLayout(central)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.inputs)
        v.addWidget(self.caption)
        v.addWidget(self.attention, 1)
        self.setCentralWidget(central)
        # the docks' splitters resize the centre alone: the caption may refit, once the layout has settled (a
        # queued call, dropped if the window is gone; an event filter on the window ran while it was destroyed)
        central.resized.connect(self.refit_caption, QtCore.Qt.ConnectionType.QueuedConnection)
        self.inputs.notice.installEventFilter(self)         # a one-line note is cut again at its new width or font
        self.docking.dock()
        # each squeezed (large text, a narrow window) takes its shorter form, then "…": their full widths together
        # made a 1024-pixel presentation window 1198 pixels wide beside a switched-off head's name (QA)
        self.status_notice = ElidedLabel(tone="warning", bold=True, keeps_shortest=True)
        self.status_notice.setVisible(False)
        self.status_model = ElidedLabel()     # squeezed, it drops the shape, then the word "Model"
        self.status_tokens = ElidedLabel(keeps_shortest=True)
        self.status_time = ElidedLabel(keeps_shortest=True)
        for w in (self.status_notice, self.status_model, self.status_tokens, self.status_time):
            w.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Preferred)
        self.statusBar().addWidget(self.status_notice)
        self.statusBar().addWidget(QtWidgets.QWidget(), 1)      # the labels after it to the right
        # normal widgets, not permanent ones: a message (a switched-off head, a file saved) hides them while it
        # shows, and has the bar's width (at 1366 × 768 beside them it read "Same translation as bef")
        for w in (self.status_model, self.status_tokens, self.status_time):
            w.setContentsMargins(14, 0, 0, 0)     # apart from each other
            self.statusBar().addWidget(w)
        i = self.inputs
        i.sentence.textChanged.connect(lambda t: self.state.update(sentence=t))
        i.target.textChanged.connect(lambda t: self.state.update(target=t))
        for w in (i.method, i.beam, i.temperature, i.top_k, i.seed):
            (w.currentIndexChanged if isinstance(w, QtWidgets.QComboBox) else w.valueChanged).connect(
                lambda *_: self.state.update(decoding=self.inputs.settings()))
        i.positional.toggled.connect(lambda on: self.state.update(positional=on))
        i.model.activated.connect(self._model_picked)
        i.notice.linkActivated.connect(self._notes_link)
        screen = QtGui.QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() if screen is not None else QtCore.QSize(1500, 950)
        self.resize(min(1500, room.width()), min(950, room.height()))      # projectors are often 1280 × 720

    # --- state -> model runs and renders ------------------------------------------------------
    def _sync_inputs(self) -> None:
        i, s = self.inputs, self.state
        for w, text in ((i.sentence, s.sentence), (i.target, s.target)):
            if w.text() != text:
                w.blockSignals(True); show_from_start(w, text); w.blockSignals(False)
        i.show_settings(s.decoding)
        i.positional.blockSignals(True); i.positional.setChecked(s.positional); i.positional.blockSignals(False)
        idx = i.model.findData(s.model_name)
        if idx < 0:
            i.model.insertItem(max(0, i.model.count() - 1), model_label(s.model_name), s.model_name)
            idx = i.model.findData(s.model_name)
            i.model.setItemData(idx, s.model_name, QtCore.Qt.ItemDataRole.ToolTipRole)
        i.model.setCurrentIndex(idx)

    def _on_state(self, changed: set[str]) -> None:
        if not changed - SHAPE_FIELDS:          # a new run's shape: show_result draws it
            return
        if changed & {"decoding", "target"} and (self.inputs.settings() != self.state.decoding
                                                 or self.inputs.target.text() != self.state.target):
            self._sync_inputs()                  # changed by a panel (the beam tree's "use beam search")
        if changed & RUN_FIELDS:
            if changed == {"decoding"} and self.trace is not None and self.state.decoding.method == "greedy" \
                    and self.translation is not None and self.translation.trace.meta.get("mode") == "greedy":
                self._render_all()               # temperature alone: the output panel re-reads the logits
                return
            self.runs.request(self.lm, typing=True)
            return
        if changed & {"stack", "sublayer"}:
            self.docking.follow_stage(self.menus.follow.isChecked())
        if self.trace is not None:
            self._render_all()

    def _say_stale(self) -> None:
        """A run asked for STALE_MS ago has not come: the translation on screen is the text's before (a beam search
        of a paragraph took 0.9 s, a model switch 0.3 s, with nothing to say so: QA). Greyed, and the status says
        so, until the run shows."""
        if self.runs.rendered_seq < self.runs.seq and self.trace is not None:
            self.inputs.translation.label.setEnabled(False)
            self.status_time.setText("translating…")

    def _show_run(self, run: RunResult) -> None:
        """The newest run came (and the user paused typing): show it."""
        self.startup.live_run_shown()
        self.show_result(run.translation, run.ms, run.cut_chars)
        self.trace_shown.emit()

    def show_result(self, result, ms: float, cut_chars: bool) -> None:
        """Show a translation (or a saved frame) in every panel that can be seen."""
        same = self.trace is not None and result.trace.arrays is self.trace.arrays    # a run given again
        self.translation, self.trace, self.last_run_ms = result, result.trace, ms
        self.inputs.translation.label.setEnabled(True)      # (greyed while its run was on its way: _say_stale)
        self.prefix.clear()
        if not same:
            self.docking.new_run()
        t = self.trace
        follow = self.state.step == self._first_step          # not moved away by the user: goes on following
        self.state.set_shape(t.schema, t.n_steps)
        self._first_step = first_step(t)
        if follow and self.state.step != self._first_step:
            self.state.update(step=self._first_step)
        self.inputs.show_positions(t.schema.positions)
        self.inputs.show_layout(t.schema.layout, t.schema.has_output, t.schema.family, self.state.model_name,
                                t.schema.special.get("mask"))
        if self._pending_view:
            view, self._pending_view = self._pending_view, None
            self.state.update(**view)
            self._say_view_moved(view)
        self._show_translation(result, cut_chars)
        self._render_all()
        self._settle.start()

    def _settled(self) -> None:
        """The result has stood SETTLE_MS: the translation line, the panels' headers and the heatmaps' label room,
        which only grow while a class types (no panel moves at each keystroke), fit it again, smaller too. After
        one long sentence every later short one kept a blank line under its translation and the long one's label
        room: its heatmap 55 pixels lower at 1280 × 720 (QA)."""
        if self.runs.runner.busy:        # typing goes on: its result starts the wait again
            return
        SteadyLabel.refit_all()          # the translation, and the panels' headers
        TokenAxis.let_shrink_all()
        QtCore.QTimer.singleShot(0, self, self._check_room)     # once laid out at their new heights

    def _say_view_moved(self, view: dict) -> None:
        """A session's layer, head or step that its run does not have was moved to the nearest without a word (a
        hand-edited file, or a model since retrained with fewer layers): the status bar says so."""
        first = {"layer": 1, "head": 1, "step": 0}         # layers and heads counted from 1 on screen, steps from 0
        moved = [(k, view[k] + first[k], getattr(self.state, k) + first[k]) for k in first
                 if isinstance(view.get(k), int) and getattr(self.state, k) != view[k]]
        if moved:
            asked = ", ".join(f"{k} {a}" for k, a, _ in moved)
            shown = ", ".join(f"{k} {b}" for k, _, b in moved)
            self.statusBar().showMessage(f"The session's {asked}: not in this run; shown {shown}", 15000)

    def show_trace(self, trace, **view) -> None:
        """Show a trace of the run on screen other than its own (a beam hypothesis'), or its own again; view: view
        fields to go to (step, kind)."""
        self.trace = trace
        self.docking.new_run()
        self.state.set_shape(trace.schema, trace.n_steps)
        self.state.update(**view)
        self._render_all()
        self.trace_shown.emit()

    def _on_failure(self, message: str) -> None:
        self.inputs.translation.label.setEnabled(True)
        self.run_failed.emit(message)
        self.last_error = message
        self._notes = [self._failure_note(message)]
        self._notes_whole = False
        self._set_notice()
        self.status_notice.setText("model error")
        self.status_notice.setVisible(True)

    def _failure_note(self, message: str) -> str:
        """What a failed run leaves on screen. A model just opened that failed its first run names itself and the
        model whose result the panels still show (they read as the new model's: QA), and the status bar says it
        has not run."""
        shown = self.runs.shown.lm if self.runs.shown is not None else None
        name = getattr(self, "_shown_name", None)     # a saved start frame is shown as a result of its model's
        if self.lm is None or shown is self.lm or name == self.model_name:
            return f"Could not run the model on this input ({message}); the panels still show the last result."
        self.status_model.setText(f"Model: {self.model_name} (could not run)",
                                  (f"{self.model_name} (could not run)", self.model_name))
        self.status_model.setToolTip(f"{self.state.model_name}: it opened, and could not run on this input")
        if name is None:
            return f"Could not run {self.model_name} on this input ({message}); nothing is shown yet."
        return (f"Could not run {self.model_name} on this input ({message}); the panels still show "
                f"{self._shown_name}'s last result: try another sentence or pick another model.")

    def _show_translation(self, result, cut_chars: bool) -> None:
        t = result.trace
        max_len = self.lm.cfg.max_len if self.lm is not None else result.max_len      # a saved frame's (last_frame)
        self._shown_name = self.model_name        # whose result the panels show (see _failure_note)
        self._set_translation(result)
        notes = []
        if cut_chars:
            notes.append(f"Only the first {MAX_CHARS:,} characters are used.")
        if result.truncated:
            length = model_length(self.lm) if self.lm is not None else f"the model's {max_len} tokens"
            notes.append(cut_to_length(t.schema, length, result.truncated))
        if blank(self.state.sentence):
            # its claim first: the compact window shows the words before the colon (QA read "The sentence is
            # empty…" beside "Les choses sont faites." as a translation invented for no reason)
            notes.append(blank_note(t, self.state.sentence))
        else:
            rare = rare_words(t)                 # its words are underlined on the heatmap: the note says so
            underlined = RARE_UNDERLINED[len(t.meta.get("rare_words") or []) > 1]
            notes += [f"{n} {underlined}" if n == rare else n for n in result_notes(t, max_len)]
        self._notes, self._notes_whole = notes, False
        self._set_notice()
        # in fewer words where the bar is squeezed, never cut inside its number ("input cut at 12…", QA)
        limit = f"{max_len} tokens" if result.truncated else f"{MAX_CHARS:,} characters"
        self.status_notice.setText(f"input cut at {limit}", (f"cut at {limit}",))
        self.status_notice.setVisible(bool(cut_chars or result.truncated))
        # what a bundled model learnt from, first: a class typed questions to en-de, a model of picture captions,
        # and nothing on screen said so once the model list had closed (QA as a teacher)
        name, shape, summary = self.model_name, t.schema.describe(), model_summary(self.state.model_name)
        forms = [f"Model: {name} ({shape})", f"Model: {name}", name]        # longest first: the first that fits
        if summary:        # (and its words before a colon: the seed example's summary left at 1024 × 768, QA)
            cut = [f"Model: {name} — {summary.split(': ')[0]}"] if ": " in summary else []
            forms[:0] = [f"Model: {name} — {summary} · {shape}", f"Model: {name} — {summary}", *cut]
        self.status_model.setText(forms[0], tuple(forms[1:]))
        self.status_model.setToolTip(f"{self.state.model_name}: {summary + '; ' if summary else ''}{shape}")
        self.status_tokens.setText(*token_count(t))
        if self.lm is None:
            self.status_time.setText(f"First look ({self.startup.frame_origin}); the model is loading…")
        elif t.meta.get("partial"):
            self.status_time.setText(f"input traced in {self.last_run_ms:.0f} ms; generating…")
        else:
            now = time.strftime('%H:%M:%S')
            self.status_time.setText(f"updated {now} ({self.last_run_ms:.0f} ms)", (f"updated {now}", now))

    def compact_level(self) -> int:
        """How much a short window leaves out so that the heatmap keeps room to be read. 1: the focused heatmap's
        title (the caption and the selectors name it) and the translation's token chips (the heatmap's axes show
        the tokens; the translation's tooltip lists them), and the notes' explanations (each keeps its claim;
        the tooltip has the whole). 2: also the caption's explanation, which becomes its
        tooltip; the caption keeps its title and equation. Level 2 below 33 lines of text (a 720p projector at
        the presentation font), or below 36 while the target and decoding controls take their three rows (an
        800x600 window: the heatmap got 60 pixels); level 1 below 36 without them (a 768p projector at the
        presentation font: the heatmap got 180 pixels for 11 rows) or below 45 with them (a 720p or 768p laptop:
        the heatmap got 145 pixels for 12 tokens); else 0. Presentation mode is level 1 at least: smaller text
        there (View ▸ Smaller text) gave more lines, brought the chips and the title back, and the heatmap shrank.
        Level 2 also when the centre column is under NARROW_CENTRE characters wide (1024×768 in class). And at
        least the level the heatmap's room asked for (see _check_room): whatever the window's size, long notes and a
        long caption could leave it a strip."""
        metrics = QtGui.QFontMetrics(QtWidgets.QApplication.font())
        lines = self.height() / metrics.height()
        details = self.inputs.details_visible()
        if lines < 33 or (details and lines < 36) or self._centre_chars(metrics) < NARROW_CENTRE:
            return 2
        presenting = getattr(self, "presentation", None) is not None and self.presentation.active
        level = 1 if lines < 36 or (details and lines < 45) or presenting else 0
        return max(level, getattr(self, "_squeezed", 0))

    def _check_room(self) -> None:
        """One compact level more while the attention canvas has under HEATMAP_SHARE of the centre column's height
        (checked again once the window is laid out anew): at 1024 × 768 two notes of four lines and a caption of
        five left en-de's cross-attention 55 pixels for 16 rows, and a 694-line window 8 (QA as a teacher). The
        level stays until the window grows or its text changes size (see resizeEvent), so that a window does not
        go back and forth between two levels."""
        centre, canvas = self.centralWidget(), self.attention.canvas
        if centre is None or not canvas.isVisible() or centre.height() < 200 or self.compact_level() >= 2:
            return
        if canvas.height() < HEATMAP_SHARE * centre.height():
            self._squeezed = self.compact_level() + 1
            self.refit_caption()
            QtCore.QTimer.singleShot(0, self, self._check_room)

    def _centre_chars(self, metrics: QtGui.QFontMetrics) -> float:
        """The centre column's width in characters of the text font (a window not laid out yet: wide enough). At
        1024×768 in presentation mode it held 41, the caption's explanation took seven lines, and the heatmap was
        left 35 pixels wide."""
        centre = self.centralWidget()
        width = centre.width() if centre is not None and centre.isVisible() else 0
        return width / max(1, metrics.averageCharWidth()) if width > 100 else float("inf")

    def _reserve_caption_room(self) -> None:
        """The caption's room for every stage's caption, measured when they change: a new run, the compact level
        (not at a layer or step change: measuring took 2.5 ms of a step change's 17). The step in the decoder's
        captions is the run's one with the longest token, the widest of its captions."""
        now, was = (self.trace, self.state.schema, self._compact), getattr(self, "_reserved_for", None)
        if was is not None and was[0] is now[0] and was[1] is now[1] and was[2] == now[2]:
            return
        self._reserved_for = now
        tokens = self.trace.out_tokens if self.trace is not None else []
        widest = max(range(len(tokens)), key=lambda t: (len(tokens[t]), t), default=None)
        schema = self.state.schema      # a stack's layers differ in their number alone: the first and the last
        self.caption.set_reserve(self._caption_html(s, widest) for s in self.state.stages()
                                 if not schema.is_layer_stage(s) or s.layer in (0, schema.stack(s.stack).n_layers - 1))

    def _caption_html(self, stage, step: int | None = None) -> str:
        """The caption of a stage at a step (None: the one in view), at the compact level the caption was last
        written at."""
        title, text, equation = self.state.schema.caption(stage, self._positional())
        step_words = self._step_html(stage, step)
        middle = "" if self._compact >= 2 else f"{html.escape(text)}<br>"
        head, dash, where = title.rpartition(" — ")   # "— layer 1" on one line: a lone "1" wrapped at 1024 × 768
        shown = f"{html.escape(head)} {'&nbsp;'.join(html.escape(w) for w in (dash.strip(), *where.split()))}" if dash \
            else html.escape(title)
        return (f"<b>{shown}</b>{step_words}<br>{middle}"
                f"<span style='font-family:serif;font-style:italic'>{equation_html(equation)}</span>")

    def _positional(self) -> bool:
        """Whether the run in view added its positions (the caption speaks of the run shown, as the map does)."""
        return self.trace is None or self.trace.meta.get("positional") is not False

    def _step_html(self, stage, step: int | None = None) -> str:
        """The caption's words on a step (None: the one in view), at a decoder's stage."""
        if self.trace is None or not self.trace.schema.stack_of_stage(stage).by_step:
            return ""
        s = self.state.step if step is None else step
        # the token whole on one line: a narrow caption broke "</s>" as "(“</" and "s>”)" (QA)
        return (f" &nbsp;|&nbsp; generation step {s}: predicting token {s + 1} "
                f"{unbreakable_html('(“' + self.trace.out_tokens[s] + '”)')}")

    def compact_caption(self) -> bool:
        """The caption without its explanation (compact_level 2)."""
        return self.compact_level() >= 2

    def _set_caption(self) -> None:
        if self.state.schema is None:
            return
        self._compact = self.compact_level()
        self.attention.focus.show_title(not self._compact)   # the caption and the selectors name it too
        title, text, _ = self.state.schema.caption(self.state.stage, self._positional())
        self.caption.setText(self._caption_html(self.state.stage))
        # room for the tallest stage's caption at this step: a walk with the remote moved the heatmap up and
        # down by 20 to 60 pixels at each press, as captions of three and five lines took turns (QA as a teacher)
        self._reserve_caption_room()
        self.caption.setToolTip(text if self._compact >= 2 else "")
        said = f"{title}{accessible.plain(self._step_html(self.state.stage))}"
        if said != self._caption_said:           # a stage or step stepped to is said (Alt+arrows, PageDown)
            self._caption_said = said
            accessible.announce(self.caption, said)

    def _set_translation(self, result) -> None:
        """The translation, and under it its tokens as chips, except in a compact window (see compact_level),
        where the chips (two or three lines for a long sentence) would take the heatmap's room: the heatmap's axes
        show the same tokens, and the label's tooltip lists them."""
        t = result.trace
        label = t.decoding
        compact = self.compact_level() >= 1
        lowercase, steps = reads_lowercase(t), self.training_steps()
        many = len(t.out_tokens) > MAX_CHIPS        # a random T5's 128 "<pad>" chips took the heatmap's room and more
        chips = ""
        if t.meta.get("partial"):
            text = (f"<i>Generating ({label})… the panels show the input's attention and the first token's "
                    "distribution meanwhile.</i>")
        elif t.schema.layout == ENCODER_ONLY and not t.schema.has_output:     # read "(empty) [lowercase]" (QA)
            text = "<i>Nothing: this encoder has no output layer (a masked-word head) to fill words in with.</i>"
        else:
            pieces, given = text_pieces(t)          # a decoder-only model's: its prompt's, then what it wrote
            mask = t.schema.special.get("mask")
            if t.schema.layout == ENCODER_ONLY and mask:            # the text with its masks filled in
                pieces, given = filled_in(t.tokens(t.schema.output_stack.tokens), t.out_tokens, mask)
            chips = "" if compact or many else f"<br>{token_chips(pieces, given)}"
            words = [] if t.schema.layout == ENCODER_ONLY else [label]     # an encoder decodes nothing
            words += ["lowercase"] if lowercase else []
            # one piece, never broken across lines ("[given" on one, "target]" on the next: QA)
            inside = " · ".join(words).replace(" ", "&nbsp;")
            tag = f" &nbsp; <span style='color:{quiet_colour()}'>[{inside}]</span>" if words else ""
            if steps:              # a class took the changed model's translations for the bundled one's
                tag += (f" &nbsp; <span style='color:{tone_colour('warning')}'>[weights changed by "
                        f"{steps} training step{'s' if steps > 1 else ''}]</span>")
            shown = result.text if len(result.text) <= MAX_SHOWN_TEXT else result.text[:MAX_SHOWN_TEXT] + "…"
            text = f"<b>{breakable_html(shown) or '(empty)'}</b>{chips}{tag}"
        self.inputs.translation.setText(text)
        # a screen reader reads the translation and its tags, not the chips (their letters joined by U+2060)
        said = f"{self.inputs.translation_label.text()} {accessible.plain(text.replace(chips, '') if chips else text)}"
        if said != self.inputs.translation.label.accessibleName():
            accessible.name(self.inputs.translation.label, said)
            if not t.meta.get("partial"):
                accessible.announce(self.inputs.translation.label, said)
        whole = "" if len(result.text) <= MAX_SHOWN_TEXT else result.text        # a long continuation: all of it
        listed = t.out_tokens[:MAX_LISTED] + ([f"… ({len(t.out_tokens)} in all)"] if len(t.out_tokens) > MAX_LISTED else [])
        tokens = f"Tokens: {' · '.join(listed)}" if compact or many else ""
        self.inputs.translation.setToolTip("\n".join(filter(None, (
            whole, tokens, pieces_note(t.out_tokens), LOWERCASE if lowercase else "", CHANGED_WEIGHTS if steps else ""))))

    def figure_caption(self) -> str:
        """The run a panel's saved figure shows, as a heatmap figure's title quotes it: “sentence” (model). A saved
        output distribution or rollout said neither (QA, a teacher's handout)."""
        return run_title(self.trace, self.shown_model_name) if self.trace is not None else ""

    @property
    def shown_model_name(self) -> str:
        """The name of the model whose run the panels show, as model_name gives it: while another model opens, or
        after its first run failed, the one before (figures had been named after the model being opened: a review)."""
        return getattr(self, "_shown_name", None) or self.model_name

    def training_steps(self) -> int:
        """Gradient steps the Training step tab has taken on the weights in memory since they were loaded or reset
        (0 when the tab was never opened)."""
        training = self.panels.get("training")
        return training.steps_taken() if training is not None else 0

    def _set_notice(self) -> None:
        """The result's notes under the translation: whole, or in a compact window (see compact_level: a 768-line
        laptop's is) each cut to its claim, before its first colon or full stop, the whole in the tooltip: at
        1280 × 720 in class two lines of a note had left the heatmap 95 pixels high, and at 1366 × 768 three to
        five lines of notes left it 80 to 160 (QA as a student)."""
        level = self.compact_level()
        notes = self._notes
        # the first MAX_CLAIMS notes' claims, the others counted (QA: five notes' claims of a pasted paragraph took
        # five lines, and left the heatmap 45 pixels at 1280 × 720); the first alone at level 2 (QA: at 1024 × 768
        # in class two claims took five lines, and left the heatmap 80 pixels for 12 rows)
        rest = max(len(notes) - (1 if level >= 2 else MAX_CLAIMS), 0) if level >= 1 else 0
        cuttable = level >= 1 and (rest > 0 or any(claim(n) != n for n in notes))
        cut = cuttable and not self._notes_whole
        # the rest of a cut note behind a link (the tooltip alone kept it from a keyboard user, QA): Tab, Return;
        # notes made whole fold back with [less]: they had left the heatmap 40 pixels high until the next result (QA)
        link = f" <a href='{'more' if cut else 'less'}' style='color:{tone_colour('warning')}'>" \
               f"[{'more' if cut else 'less'}]</a>" if cuttable else ""
        others = f" · and {rest} more note{'s' if rest > 1 else ''}" if rest else ""
        claims = " · ".join(map(claim, notes[:len(notes) - rest]))
        text = claims + others if cut else " ".join(notes)
        if cut and level >= 2:          # one line at most (the heatmap had 70 pixels for 12 rows under three)
            metrics = QtGui.QFontMetrics(self.inputs.notice.font())
            room = self.inputs.notice.contentsRect().width() - metrics.horizontalAdvance(f"{others} [more]") - 8
            if room > 100:              # (laid out: a window not shown yet keeps the claims)
                # the claims cut, the count of the other notes kept (cut with them, 4 notes read as one, QA)
                text = word_cut(metrics.elidedText(claims, QtCore.Qt.TextElideMode.ElideRight, room), claims) + others
        self._notice_fit = self._notice_key() if cut and level >= 2 else None
        fmt = QtCore.Qt.TextFormat
        self.inputs.notice.setTextFormat(fmt.RichText if link else fmt.PlainText)
        self.inputs.notice.setText(html.escape(text) + link if link else text)
        self.inputs.notice.setToolTip(" ".join(notes) if cut else "")
        self.inputs.notice.setVisible(bool(notes))
        self._cap_notes(level)
        self.inputs.notice_area.updateGeometry()
        said = " ".join(notes)
        if said != self._notes_said:    # new notes, whole, after the translation they are of (a note under it, and a
            self._notes_said = said     # failed run's, had been shown to the eye alone: QA, a screen reader's user)
            if said:                    # (escaped: its "<unk>" and "</s>" are no tags, a review)
                QtCore.QTimer.singleShot(0, self, lambda: accessible.announce(self.inputs.notice,
                                                                              html.escape(f"Note: {said}")))

    def _cap_notes(self, level: int) -> None:
        """Whole notes scroll past an eighth of the window's height (a fifth in a roomy one, three lines at least):
        at 1024 × 768 [more] gave them 12 lines and the heatmap 10 pixels (QA as a teacher)."""
        line = QtGui.QFontMetrics(self.inputs.notice.font()).lineSpacing()
        self.inputs.notice_area.set_most(max(3 * line, int(self.height() * (0.125 if level >= 1 else 0.2))))

    def _notes_link(self, link: str = "more") -> None:
        """[more] under cut notes: the notes whole, until [less] or the next result."""
        self._notes_whole = link == "more"
        self._set_notice()

    def eventFilter(self, watched, event) -> bool:
        if (watched is self.inputs.notice and event.type() in (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.FontChange)
                and getattr(self, "_notice_fit", None) not in (None, self._notice_key())):
            QtCore.QTimer.singleShot(0, self, self._set_notice)     # (dropped if the window is gone first)
        if (watched is self.inputs.notice and event.type() == QtCore.QEvent.Type.KeyPress
                and event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter, QtCore.Qt.Key.Key_Space)):
            # Return on the notes line opens them, as on their [more] link: the first Tab stop is the line, and
            # Return there did nothing until a second Tab reached the link (QA in class)
            link = next((name for name in ("more", "less") if f"href='{name}'" in self.inputs.notice.text()), None)
            if link is not None:
                self.inputs.notice.linkActivated.emit(link)
                return True
        return super().eventFilter(watched, event)

    def _notice_key(self) -> tuple[int, float]:
        return self.inputs.notice.width(), self.inputs.notice.font().pointSizeF()

    def refit_caption(self) -> None:
        """Rewrite the caption and the translation if the window's height, its font or the decoding controls
        moved them across a compact threshold; the translation's height then fits its text again, smaller too."""
        if getattr(self, "_compact", None) not in (None, self.compact_level()):
            self._set_caption()
            self._set_notice()
            self.caption.refit()        # smaller too: F9 twice in class left it as tall as the long text it had alone
            if self.translation is not None:
                self._set_translation(self.translation)
                self.inputs.translation.refit()

    def theme_changed(self) -> None:
        """The translation's tags again, in the new theme's colours (they are set in its text, not its palette)."""
        if getattr(self, "translation", None) is not None:        # (a theme chosen while the window is built)
            self._set_translation(self.translation)
        # the docks' float and close buttons drawn again in the theme's colours (theme.title_bar_icon): they kept
        # the icons of the theme they were made in, dark on black in class (QA as a teacher)
        for dock in getattr(getattr(self, "docking", None), "docks", {}).values():
            QtWidgets.QApplication.sendEvent(dock, QtCore.QEvent(QtCore.QEvent.Type.StyleChange))

    def _render_all(self) -> None:
        self._set_caption()
        self.docking.render_visible()

    # --- models ----------------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        """The open model's name as the picker shows it (a folder by its last two parts, not the bare "model" of
        …/fr-b/model); while the first model loads: the one being opened."""
        return model_label(self.state.model_name)

    def set_vocab(self, vocab) -> None:
        self.docking.call("set_vocab", vocab)

    def _load_model(self, name_or_path: str, fallback: bool = True, lm=None, say_heads: bool = True) -> bool:
        try:
            lm = lm or load(name_or_path)
        except ModelLoadError as e:
            if self.lm is None and not fallback:
                self.statusBar().showMessage(f"Cannot open {name_or_path}: {e}; opened {default_model()}", 15000)
                name_or_path = default_model()
                lm = load(name_or_path)
            else:
                self.error("Cannot open this model", f"{e}\n\nThe app goes on with {self.model_name if self.lm else 'the default model'}.")
                self._sync_inputs()
                return False
        switched_off = self.state.ablations if self.lm is not None and lm is not self.lm else frozenset()
        if self.lm is not None and lm.schema.layout != self.lm.schema.layout:
            self._swap_target(self.lm.schema.layout, lm.schema.layout)
        self.lm = lm
        one_torch_thread()                       # tests compare with runs on the GUI thread
        self.state.model_name = lasting_name(str(name_or_path))     # a session saved here opens from elsewhere
        if switched_off:                         # heads belong to the model they were switched off in
            self.state.ablations = frozenset()
            self.ablation.refresh()
        # not for a session, whose own heads come next (QA read "every head is on again" beside its "1 head off")
        if switched_off and say_heads:
            self.statusBar().showMessage(f"Every head is on again in {model_label(self.state.model_name)}: "
                                         f"{heads_were_off(len(switched_off))}", 15000)
        self.setWindowTitle(f"Attention Visualizer — {isolate(model_label(self.state.model_name))}")
        self.set_vocab(output_pieces(lm))
        self.docking.call("set_model", lm)
        if hasattr(self, "menus"):              # (the first model opens before the menus are made)
            self.menus.examples_for(self.state.model_name)     # a session's model too: its own examples
        if (problem := getattr(lm, "training_words_problem", None)) is not None:   # it opens; the note is off: why
            self.statusBar().showMessage(problem, 15000)
        return True

    def _swap_target(self, before: str, after: str) -> None:
        """Each kind of model keeps its own target: en-fr's French translation was forced through GPT-2 as its
        continuation when GPT-2 was opened (QA as a student). It is set aside, and comes back with a model of its
        kind; the new kind's own comes back (none the first time)."""
        aside = self._targets
        if self.state.target or after in aside:
            aside[before] = self.state.target
            self.state.target = aside.pop(after, "")

    def open_model(self, path: str, fallback: bool = True, lm=None) -> bool:
        """Open a model (lm: that model, already loaded) and run it; False (and a message) if it cannot open."""
        ok = self._load_model(path, fallback, lm)
        if ok:
            self._sync_inputs()
            self.runs.request(self.lm)
        return ok

    def _model_picked(self, index: int) -> None:
        name = self.inputs.model.itemData(index)
        if name is None:
            self.open_model_folder()
        elif name != self.state.model_name:
            off, before, steps = len(self.state.ablations), self.model_name, self.training_steps()
            if not self.open_model(name):
                return
            summary = model_summary(name)         # what it was trained on, at the moment it is chosen (the list's
            if summary:                           # tooltips said it; a class typed sentences to a caption model)
                # and the heads switched off before, whose own message this one replaces (a teacher saw it gone)
                again = f"; every head is on again ({heads_were_off(off)})" if off else ""
                self.statusBar().showMessage(f"{name}: {summary}{again}{steps_gone(steps, before)}",
                                             15000 if off or steps else 10000)
            elif steps:
                self.statusBar().showMessage(f"{name}{steps_gone(steps, before)}", 15000)
            elif not off:                         # a model with no summary: the one before's went on (QA)
                self.statusBar().clearMessage()

    def open_model_folder(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Open a model folder", str(start_folder(self)))
        if folder:
            remember(self, Path(folder).parent)
            before, steps = self.model_name, self.training_steps()
            if self.open_model(folder) and steps:
                self.statusBar().showMessage(f"{self.model_name}{steps_gone(steps, before)}", 15000)
        else:
            self._sync_inputs()

    # --- sessions and errors ---------------------------------------------------------------------
    def error(self, title: str, message: str) -> None:
        hook = getattr(self, "_error", None)      # a headless run's (see headless.Headless): it ends the run; it
        if hook is not None:                      # was never called, and --screenshot waited for ever (QA)
            hook(title, message)
            return
        if QtWidgets.QApplication.platformName() == "offscreen":
            self.statusBar().showMessage(f"{title}: {message.splitlines()[0]}", 15000)
            self.last_error = message
            return
        QtWidgets.QMessageBox.warning(self, title, message)

    def save_session_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save session", suggest(self, "session.json"),
                                                        "Sessions (*.json)")
        if path:
            path = str(with_type(path, ".json"))
            try:
                save_session(path, self.state)
            except SessionError as e:
                self.error("Cannot save the session", str(e))
                return
            remember(self, path)
            steps = self.training_steps()        # a session holds no weights: the trained ones are not in it (QA)
            unsaved = (f"; the training of the weights ({steps} step{'s' if steps != 1 else ''}) is not saved in "
                       "it: it reopens on the model as loaded") if steps else ""
            self.statusBar().showMessage(f"Saved the session to {path}{unsaved}", 15000 if steps else 8000)

    def open_session(self, path: str) -> bool:
        try:
            changes = read_session(path)
        except SessionError as e:
            self.error("Cannot open the session", str(e))
            return False
        model = changes.pop("model_name")
        if model != self.state.model_name:
            from model.families import check
            try:
                check(model)
            except ModelLoadError as e:           # named as the session's: "Cannot open this model" said not why
                going_on = f"The app goes on with {self.model_name}." if self.lm is not None else ""
                self.error("Cannot open the session",
                           f"{path} names the model {model}, which cannot be opened ({e}).\n\nPut the model's "
                           f"folder beside the session file ({Path(path).parent / folder_name(model)}) and open the "
                           f"session again. {going_on}".rstrip())
                return False
            if not self._load_model(model, say_heads=False):
                return False
        self.apply_session(changes)
        return True

    def apply_session(self, changes: dict) -> None:
        """A session's changes (read_session's) on the model open or opening."""
        changes = dict(changes)
        self.ablation.forget_last_run()         # the run before was not this one with other heads switched off
        # the view (layer, head, step…) is applied once the session's own run is shown: clamped against the
        # trace it belongs to, not against whatever was on screen before
        self._pending_view = {k: changes.pop(k) for k in list(changes) if k in VIEW_FIELDS}
        run = self.state.run_key()
        self.state.update(**changes)
        self._sync_inputs()
        frame = self.startup.frame
        if frame is not None and self.trace is frame.trace and self.state.run_key() == run:
            # the saved frame on screen is this run's (a reopened window's): its view now, not once the model has
            # loaded (the first look showed layer 1 for those seconds: QA)
            self.startup.show_frame(frame, self.startup.frame_origin)
        self.runs.request(self.lm)

    def open_session_dialog(self) -> None:
        path = ask_open_file(self, "Open session", str(start_folder(self)), "Sessions (*.json)", "json")
        if path and self.open_session(path):
            remember(self, path)

    # --- the rooms' entry points and Qt's events -------------------------------------------------
    def toggle_presentation(self, theme: str | None = None) -> None:
        self.presentation.toggle(theme)

    def reset_layout(self) -> None:
        """Every dock back in its first place, shown; the toolbar too."""
        self.menus.nav_toolbar.show()
        self.docking.reset_layout()
        self.menus.alone.setChecked(False)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.docking.first_shown()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().height() > event.oldSize().height():
            self._squeezed = 0            # room again, maybe: _check_room decides anew
        self.refit_caption()
        self._cap_notes(self.compact_level())
        QtCore.QTimer.singleShot(0, self, self._check_room)
        if hasattr(self.docking, "widths"):
            self.docking.widths.window_resized()

    def focusNextPrevChild(self, next_: bool) -> bool:
        """Tab and Shift+Tab pass over the panels behind a dock's tab: Qt keeps a panel once shown as a visible
        widget moved off screen, and Tab walked through its controls (11 presses with the focus frame nowhere, and a
        screen reader naming controls no one could see: QA)."""
        for _ in range(500):                   # (every widget of the window at most, whatever happens)
            if not super().focusNextPrevChild(next_):
                return False
            if not behind_a_tab(QtWidgets.QApplication.focusWidget()):
                return True
        return True

    def keyPressEvent(self, event) -> None:
        """Return or Enter on a focused button presses it, as Space does (Qt's buttons outside a dialog take Space
        only, and the key came up to the window: "Measure head effects" did nothing on Return, QA as a teacher)."""
        button = QtWidgets.QApplication.focusWidget()
        if event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter) and \
                isinstance(button, (QtWidgets.QPushButton, QtWidgets.QToolButton)) and button.isEnabled() \
                and self.isAncestorOf(button):
            button.animateClick()
            return
        super().keyPressEvent(event)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange,
                            QtCore.QEvent.Type.WindowStateChange):      # full screen: presentation's level
            self.room_changed()

    def room_changed(self) -> None:
        """The window's room for text changed (its font, full screen, the layout after presentation mode): the
        compact level is decided anew. The level the heatmap's room asked for in the middle of presentation mode's
        end (the docks not yet restored) had kept the token chips and the heatmap's title hidden after it."""
        self._squeezed = 0
        self.refit_caption()
        QtCore.QTimer.singleShot(0, self, self._check_room)

    @property
    def training(self):
        """The Training step panel (built when first asked for: see panels/registry.py)."""
        return self.panels["training"]

    def closeEvent(self, event) -> None:
        if not self.presentation.active:     # presentation mode is for one session, not the next start
            # nor is the heatmap alone: the docks as they were before it
            self.settings.save_layout(self.saveGeometry(), self.docking.alone_state or self.saveState())
            if self.docking.alone_state is None:     # (Qt's state keeps the tabs' order, not the one in front)
                self.settings.set("front_tabs", ",".join(self.docking.front_tabs()))
        # the next start reopens the window as it is (see cli.last_session), once it has shown a run
        if self.keeps_session and self.trace is not None:
            path = self.settings.session_path()
            try:                                # (the settings' folder: Qt makes it only when it writes them)
                path.parent.mkdir(parents=True, exist_ok=True)
                # a session's view waits for its run (see apply_session): closed before, the window had saved layer
                # 1, head 1 over the view it reopened on (QA)
                save_session(path, self.state, self._pending_view)
            except (OSError, SessionError):     # a read-only home, a full disk: the next start is a fresh one
                pass
        training = self.wait_for_threads()
        self.startup.close(stepped=training is not None and training.steps_taken() > 0)
        super().closeEvent(event)

    def wait_for_threads(self):
        """Wait for the window's work in other threads (runs, the beam prefix, a training step, the loader and the
        helper): an app ended by quit() with a thread still at work (--screenshot on a loaded machine) crashed at
        exit (SIGSEGV) after saving its picture. Returns the training panel, None when it was never opened."""
        self.runs.wait(10000)
        self.prefix.runner.wait(10000)
        training = self.panels.get("training")     # None: never opened, so no step was taken
        if training is not None:
            training.wait(10000)
        self.startup.stop_threads()
        return training


def token_count(trace) -> tuple[str, tuple[str, ...]]:
    """The status bar's count of the run's tokens, in the words of the model's layout, and its shorter forms."""
    layout = trace.schema.layout
    if layout == ENCODER_ONLY:
        return f"{len(trace.src_tokens)} tokens", ()
    if layout == DECODER_ONLY:           # (it counted the rows: one fewer than the text's tokens, QA)
        pieces, given = text_pieces(trace)
        return (f"{len(pieces)} tokens ({given} prompt, {len(pieces) - given} continuation)",
                (f"{len(pieces)} tokens",))
    # (the short form had read "37 / 40 tokens", as "37 of 40", on a class's projector: QA)
    return (f"{len(trace.src_tokens)} source / {len(trace.out_tokens)} output tokens",
            (f"{len(trace.src_tokens)} in, {len(trace.out_tokens)} out",))
