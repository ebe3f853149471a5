"""The main window: input bar, panels as docks, stepping actions, menus; everything renders one Trace."""
from __future__ import annotations

import html
import os
import time
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from model.assets import ModelLoadError, bundled_models

from .captions import caption
from .controls import OPEN_FOLDER, InputBar
from .examples import load_examples
from .export import ExportError, export_heatmaps, heatmap_csv, heatmap_specs
from .first_run import Helper
from .last_frame import frame_key, save_frame, saved_frame
from .panels.architecture import ArchitectureMap
from .panels.attention import AttentionPanel
from .panels.inspector import InspectorPanel
from .plotting.scenes import settle_scenes
from .panels.training_step import TrainingStepPanel
from .plot_menu import PlotExport, PlotMenu, install_plot_menus
from .session import SessionError, read_session, save_session
from .settings import Settings
from .steady_label import SteadyLabel
from .state import MAX_CHARS, RUN_FIELDS, VIEW_FIELDS, ViewState, default_model
from .theme import THEMES, apply_theme
from .worker import ModelRunner

DEBOUNCE_MS = 150
# the dock that shows a stack's stage best; raised (when it sits behind a tab) as the view moves into that stack
STAGE_DOCK = {"src_embed": "embeddings", "tgt_embed": "embeddings", "enc": "layernorm", "dec": "layernorm",
              "output": "output"}


def load(name_or_folder):
    """model.load, imported on first use: it imports torch, the slow part of starting."""
    from model import load as load_model
    one_torch_thread()
    return load_model(name_or_folder)


def one_torch_thread() -> None:
    """Translating one sentence is hundreds of tiny tensor operations, for which a second torch thread costs
    more in synchronisation than it saves (measured in one run: 56 against 63 ms for a 12-word sentence,
    93 against 110 ms for 120 words); the other core is left to the GUI thread, which paints meanwhile.
    OMP_NUM_THREADS, when set, decides instead. The setting belongs to the calling thread (OpenMP), so
    every thread that runs the model calls this."""
    import torch
    if "OMP_NUM_THREADS" not in os.environ and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def translate(*args, **kwargs):
    """model.translate, imported on first use (torch)."""
    from model import translate as run
    return run(*args, **kwargs)


def model_label(name: str) -> str:
    """What the model picker shows: a bundled name as it is, a folder by its last two path parts."""
    path = Path(name)
    return name if len(path.parts) <= 1 else str(Path(*path.parts[-2:]))


def presentation_point_size(screen_height: int) -> float:
    """The text size of presentation mode: a line per 1/55 of the screen's height, 14 to 24 points (a 720p
    projector: 14; 1080p: 19.6). A fixed 18 points left a 720-line screen too little room for the heatmap."""
    return float(min(24.0, max(14.0, round(screen_height / 55, 1))))


class MainWindow(QtWidgets.QMainWindow):
    trace_shown = QtCore.Signal()              # a new trace has been rendered in every visible panel
    run_failed = QtCore.Signal(str)            # the newest model run failed (one-line message)

    def __init__(self, model: str | None = None, sentence: str | None = None, target: str | None = None,
                 settings: Settings | None = None, lm=None, restore_layout: bool = False,
                 first=None):
        """model: a bundled name or a folder (lm: that model, already loaded). restore_layout: put docks and
        window where the user left them last time (the command line does; tests and screenshots do not).
        first: what to show until the model (loaded in the background when lm is not given) runs, from
        first_run.first_frame: a saved frame, or a helper process translating the sentence; by default the
        frame saved for this run, if any."""
        super().__init__()
        self.setWindowTitle("Attention Visualizer")
        self.settings = settings or Settings()
        self.state = ViewState.at_start(model, sentence, target)
        self.lm = None
        self.trace = None
        self.translation = None
        self._previous: tuple | None = None       # (model, Translation) of the last live run
        self._pending_view: dict | None = None     # a session's view, applied when its run is shown
        self.runner = ModelRunner(self)
        self.runner.finished.connect(self._on_result)
        self.runner.failed.connect(self._on_failure)
        self.loader = ModelRunner(self)          # opens the first model (importing torch) off the GUI thread
        self.loader.finished.connect(self._model_opened)
        self.loader.failed.connect(self._open_failed)
        self._frame = None                         # the last session's frame, shown until the model runs
        self._frame_origin = ""
        self.helper: Helper | None = None          # a process translating the first run (see first_run)
        self.helper_waiter = ModelRunner(self)     # waits for it off the GUI thread
        self.helper_waiter.finished.connect(self._helper_done)
        self._run_key: str | None = None           # the newest shown live run, as last_frame keys it
        self._run_cut = False                      # … and whether its sentence was cut to MAX_CHARS
        self.first_paint_at: float | None = None   # perf_counter() once the window was first painted
        self.seq = 0
        self.rendered_seq = -1
        self._panel_keys: dict[str, object] = {}
        self.last_run_ms = 0.0
        # typing: the model starts at each keystroke (a newer one supersedes it); the debounce holds only the repaint,
        # so that the panels are drawn once the user pauses, with a result that is usually ready by then
        self.debounce = QtCore.QTimer(self, singleShot=True, interval=DEBOUNCE_MS,
                                      timerType=QtCore.Qt.TimerType.PreciseTimer)
        self.debounce.timeout.connect(self._debounced)
        self._held: tuple | None = None            # (seq, payload): a result that came before the debounce ran out
        self._build_ui()
        self._build_actions()
        # right-click menus: the focused attention head as a titled figure, every other plot as it is on screen
        self.attention_menu = PlotMenu(self.attention.canvas, self.focused_export(),
                                     before=lambda pos: self.attention.focus_head_at(self.attention.canvas.mapToScene(pos)))
        for panel in self.panels.values():
            install_plot_menus(panel)
        self.default_layout = self.saveState()
        self.restored_layout = restore_layout and self.restore_layout()
        self.state.subscribe(self._on_state)
        if lm is not None:
            self._load_model(self.state.model_name, fallback=False, lm=lm)
            self._sync_inputs()
            self._run()
        else:                                      # the window first, the model (and torch) in the background
            self._sync_inputs()
            first = first if first is not None else saved_frame(self.settings.frame_path(), self.state)
            if isinstance(first, Helper):
                self.helper = first
                self.helper_waiter.submit(0, first.wait)
            elif first is not None:
                self._show_frame(first)
            self._open_in_background(self.state.model_name)

    # --- layout -------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.inputs = InputBar()
        self.caption = SteadyLabel(grow_only=True)   # rewritten at every view change: must not relayout the window
        # a band of the theme's alternate base colour, with room around the text (no style sheet: a label with
        # one keeps the font it was polished with, and would not grow in presentation mode)
        self.caption.label.setContentsMargins(8, 4, 8, 4)
        self.caption.label.setAutoFillBackground(True)
        self.caption.label.setBackgroundRole(QtGui.QPalette.ColorRole.AlternateBase)
        self.attention = AttentionPanel(self.state)
        self.attention.set_colormap(self.settings.get("colormap"))
        self.attention.shared.setChecked(self.settings.get("shared_scale"))
        self.attention.shared.toggled.connect(lambda on: self.settings.set("shared_scale", on))
        self.attention.cmap_group.triggered.connect(lambda act: self.settings.set("colormap", act.text()))
        central = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(central)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.inputs)
        v.addWidget(self.caption)
        v.addWidget(self.attention, 1)
        self.setCentralWidget(central)
        self.architecture = ArchitectureMap(self.state)
        self.inspector = InspectorPanel()
        self.training = TrainingStepPanel()
        self.training.weights_changed.connect(self._run)
        self.panels = {"architecture": self.architecture, "attention": self.attention, "inspector": self.inspector,
                       "training": self.training}
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        left, right = QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, QtCore.Qt.DockWidgetArea.RightDockWidgetArea
        self._add_dock("architecture", "Architecture map", self.architecture, left)
        for name, title, panel in self._extra_panels():
            self.panels[name] = panel
            self._add_dock(name, title, panel, right)
        self._add_dock("inspector", "Math", self.inspector, right)
        self._add_dock("training", "Training step", self.training, right)
        # right column: the output distribution on top (always in view while stepping through the decoder),
        # below it one tab group whose tab follows the stage (embeddings, LayerNorm) unless the user picks another
        below = [self.docks[n] for n in ("layernorm", "embeddings", "inspector", "training") if n in self.docks]
        if "output" in self.docks and below:
            self.splitDockWidget(self.docks["output"], below[0], QtCore.Qt.Orientation.Vertical)
        for d in below[1:]:
            self.tabifyDockWidget(below[0], d)
        if below:
            below[0].raise_()
        self._sized = False
        self.setTabPosition(QtCore.Qt.DockWidgetArea.AllDockWidgetAreas, QtWidgets.QTabWidget.TabPosition.North)
        self._stage_dock = STAGE_DOCK.get(self.state.stack)
        self.tabifiedDockWidgetActivated.connect(lambda _: self._readable_tabs())
        self.status_notice = QtWidgets.QLabel()
        self.status_notice.setStyleSheet("color: #b35900; font-weight: bold")
        self.status_notice.setVisible(False)
        self.status_model = QtWidgets.QLabel()
        self.status_tokens = QtWidgets.QLabel()
        self.status_time = QtWidgets.QLabel()
        self.statusBar().addWidget(self.status_notice)
        for w in (self.status_model, self.status_tokens, self.status_time):
            self.statusBar().addPermanentWidget(w)
        i = self.inputs
        i.sentence.textChanged.connect(lambda t: self.state.update(sentence=t))
        i.target.textChanged.connect(lambda t: self.state.update(target=t))
        for w in (i.method, i.beam, i.temperature, i.top_k, i.seed):
            (w.currentIndexChanged if isinstance(w, QtWidgets.QComboBox) else w.valueChanged).connect(
                lambda *_: self.state.update(decoding=self.inputs.settings()))
        i.positional.toggled.connect(lambda on: self.state.update(positional=on))
        i.model.activated.connect(self._model_picked)
        screen = QtGui.QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() if screen is not None else QtCore.QSize(1500, 950)
        self.resize(min(1500, room.width()), min(950, room.height()))      # projectors are often 1280 × 720

    def _extra_panels(self):
        """Output, LayerNorm and embeddings panels; one that fails to build is left out with a note on stderr."""
        import importlib
        import sys
        panels = []
        for name, title, module, cls in (("output", "Output distribution", "output", "OutputPanel"),
                                         ("layernorm", "LayerNorm", "layernorm", "LayerNormPanel"),
                                         ("embeddings", "Embeddings", "embeddings", "EmbeddingsPanel")):
            try:
                panel = getattr(importlib.import_module(f".panels.{module}", __package__), cls)()
            except Exception as e:  # a broken panel must not take the window down with it
                print(f"note: the {title} panel is unavailable ({type(e).__name__}: {e})".splitlines()[0],
                      file=sys.stderr)
                continue
            panels.append((name, title, panel))
        return panels

    def _add_dock(self, name: str, title: str, widget: QtWidgets.QWidget, area) -> None:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"dock-{name}")
        if name == "architecture":
            dock.setWidget(widget)           # it scales its drawing to any size
        else:
            # a scroll area lets the window shrink below a panel's own minimum (small projectors, big fonts)
            scroll = QtWidgets.QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
            scroll.setWidget(widget)
            scroll.setMinimumSize(160, 120)
            dock.setWidget(scroll)
        dock.visibilityChanged.connect(lambda visible, n=name: visible and self.trace is not None and self._render_panel(n))
        self.addDockWidget(area, dock)
        self.docks[name] = dock

    def _build_actions(self) -> None:
        menu = self.menuBar()
        file = menu.addMenu("&File")
        self.act_open_model = file.addAction("Open model folder…", self._open_model_folder)
        file.addAction("Open session…", self._open_session, QtGui.QKeySequence.StandardKey.Open)
        file.addAction("Save session…", self._save_session, QtGui.QKeySequence.StandardKey.Save)
        file.addSeparator()
        file.addAction("Export focused heatmap…", self._export_focused, QtGui.QKeySequence("Ctrl+E"))
        file.addAction("Export all…", self._export_all, QtGui.QKeySequence("Ctrl+Shift+E"))
        file.addAction("Copy focused heatmap", self._copy_focused, QtGui.QKeySequence("Ctrl+Shift+C"))
        file.addSeparator()
        file.addAction("Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        examples = menu.addMenu("E&xamples")
        for ex in load_examples():
            act = examples.addAction(ex.sentence)
            act.setToolTip(ex.shows)
            act.setStatusTip(ex.shows)
            act.triggered.connect(lambda _=False, s=ex.sentence: self.inputs.sentence.setText(s))
        examples.setToolTipsVisible(True)
        nav = menu.addMenu("&Navigate")
        self.nav_toolbar = self.addToolBar("Navigate")
        self.nav_toolbar.setObjectName("toolbar-navigate")
        # every shortcut has a modifier, so arrows, Home/End and PgUp/PgDn keep their meaning in text fields;
        # the toolbar shows the short text (iconText), the menu the full one
        steps = [("First stage", "« First", "Alt+Home", self.state.first),
                 ("Previous sublayer", "◀ Sublayer", "Alt+Left", self.state.prev_sublayer),
                 ("Next sublayer", "Sublayer ▶", "Alt+Right", self.state.next_sublayer),
                 ("Last stage", "Last »", "Alt+End", self.state.last),
                 ("Previous layer", "▲ Layer", "Alt+Up", self.state.prev_layer),
                 ("Next layer", "Layer ▼", "Alt+Down", self.state.next_layer),
                 ("Previous head", "◀ Head", "Alt+PgUp", self.state.prev_head),
                 ("Next head", "Head ▶", "Alt+PgDown", self.state.next_head),
                 ("Previous step", "◀ Step", "Alt+,", self.state.prev_step),
                 ("Next step", "Step ▶", "Alt+.", self.state.next_step)]
        self.step_actions = {}
        for i, (label, short, keys, fn) in enumerate(steps):
            if i in (4, 6, 8):
                nav.addSeparator()
                self.nav_toolbar.addSeparator()
            act = QtGui.QAction(label, self)
            act.setIconText(short)
            act.setShortcuts([QtGui.QKeySequence(keys)])
            act.setToolTip(f"{label} ({keys})")
            act.triggered.connect(lambda _=False, f=fn: f())
            nav.addAction(act)
            self.nav_toolbar.addAction(act)
            self.step_actions[label] = act
        # presenter remotes send PageDown / PageUp: walk the whole pipeline with one key
        for keys, fn in (("PgDown", self.state.next_sublayer), ("PgUp", self.state.prev_sublayer)):
            act = QtGui.QAction(self)
            act.setShortcut(QtGui.QKeySequence(keys))
            act.triggered.connect(lambda _=False, f=fn: f())
            self.addAction(act)
        view = menu.addMenu("&View")
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        view.addAction(self.nav_toolbar.toggleViewAction())
        self.act_follow = view.addAction("Panels follow the stage")
        self.act_follow.setCheckable(True)
        self.act_follow.setChecked(True)
        self.act_follow.setToolTip("Bring the Embeddings or LayerNorm tab to the front as the view enters that stage")
        self.act_details = view.addAction("Target and decoding controls")
        self.act_details.setCheckable(True)
        self.act_details.setChecked(True)
        self.act_details.toggled.connect(self.inputs.set_details_visible)
        view.addAction("Reset layout", self.reset_layout)
        view.addSeparator()
        self.act_present = view.addAction("Presentation mode", self.toggle_presentation, QtGui.QKeySequence("F11"))
        self.act_present.setCheckable(True)
        view.addAction("Larger text", lambda: self.zoom(+1), QtGui.QKeySequence.StandardKey.ZoomIn)
        view.addAction("Smaller text", lambda: self.zoom(-1), QtGui.QKeySequence.StandardKey.ZoomOut)
        themes = view.addMenu("Theme")
        group = QtGui.QActionGroup(self)
        for name in THEMES:
            act = themes.addAction(name.capitalize(), lambda n=name: self.set_theme(n))
            act.setCheckable(True)
            act.setChecked(name == self.settings.get("theme"))
            group.addAction(act)
        self.inputs.model.clear()
        for name in bundled_models():
            self.inputs.model.addItem(name, name)
        self.inputs.model.addItem(OPEN_FOLDER, None)

    # --- state -> model runs and renders ------------------------------------------------------
    def _sync_inputs(self) -> None:
        i, s = self.inputs, self.state
        for w, text in ((i.sentence, s.sentence), (i.target, s.target)):
            if w.text() != text:
                w.blockSignals(True); w.setText(text); w.blockSignals(False)
        i.show_settings(s.decoding)
        i.positional.blockSignals(True); i.positional.setChecked(s.positional); i.positional.blockSignals(False)
        idx = i.model.findData(s.model_name)
        if idx < 0:
            i.model.insertItem(max(0, i.model.count() - 1), model_label(s.model_name), s.model_name)
            idx = i.model.findData(s.model_name)
            i.model.setItemData(idx, s.model_name, QtCore.Qt.ItemDataRole.ToolTipRole)
        i.model.setCurrentIndex(idx)

    def _on_state(self, changed: set[str]) -> None:
        if changed & RUN_FIELDS:
            if changed == {"decoding"} and self.trace is not None and self.state.decoding.method == "greedy" \
                    and self.translation is not None and self.translation.trace.meta.get("mode") == "greedy":
                self._render_all()               # temperature alone: the output panel re-reads the logits
                return
            self.debounce.start()
            self._run()
            return
        if changed & {"stack", "sublayer"}:
            self._follow_stage()
        if self.trace is not None:
            self._render_all()

    def _follow_stage(self) -> None:
        """Bring the dock that shows the new stage to the front of its tab group, when the stack changed."""
        name = STAGE_DOCK.get(self.state.stack)
        if name == self._stage_dock:
            return
        self._stage_dock = name
        dock = self.docks.get(name)
        if self.act_follow.isChecked() and dock is not None and not dock.isHidden() and self.tabifiedDockWidgets(dock):
            dock.raise_()

    def _run(self) -> None:
        """Start a model run for the current state (in the worker; the newest request wins)."""
        if self.lm is None:
            return
        self.seq += 1
        lm, cut_chars = self.lm, self.state.cut_chars      # read now: the state may change while the job waits
        text, target, settings, positional = self.state.run_fields()
        key = self._frame_key()
        # the translation on screen, if this model made it: given again if the run reads the same (a space between
        # words), else greedy decoding checks its output first, as a keystroke seldom changes more than the end
        previous = self._previous[1] if self._previous is not None and self._previous[0] is lm else None

        def job():
            one_torch_thread()
            with lm.lock:                         # a gradient step (GUI thread) waits for the run, and vice versa
                t0 = time.perf_counter()
                result = translate(lm, text, settings, target=target or None, positional=positional,
                                   previous=previous)
            return result, (time.perf_counter() - t0) * 1000, cut_chars, key, lm

        self.runner.submit(self.seq, job)

    def _debounced(self) -> None:
        """The user paused typing: show the newest run's result if it came meanwhile (else it shows when it comes)."""
        held, self._held = self._held, None
        if held is not None and held[0] == self.seq:
            self._on_result(*held)

    def _on_result(self, seq: int, payload) -> None:
        self._previous = (payload[4], payload[0])  # any run of this model: the next one's draft
        if seq != self.seq:
            return                               # a newer request is on its way: never show stale results
        if self.debounce.isActive():
            self._held = (seq, payload)          # drawn when the user pauses
            return
        result, ms, cut_chars, self._run_key, _ = payload
        self._run_cut = cut_chars
        self._frame = None
        if self.helper is not None:
            self.helper.stop()                   # the live run came first: the other core is free again
        self._show_result(result, ms, cut_chars)
        self.rendered_seq = seq
        self.trace_shown.emit()

    def _show_result(self, result, ms: float, cut_chars: bool) -> None:
        same = self.trace is not None and result.trace.arrays is self.trace.arrays    # a run given again
        self.translation, self.trace, self.last_run_ms = result, result.trace, ms
        if not same:
            self._panel_keys.clear()             # every panel shows the new run when it is next visible
        t = self.trace
        self.state.set_shape(t.n_layers("enc"), t.n_layers("dec"), t.n_heads, t.n_steps)
        if self._pending_view:
            view, self._pending_view = self._pending_view, None
            self.state.update(**view)
        self._show_translation(result, cut_chars)
        self._render_all()

    def _on_failure(self, seq: int, message: str) -> None:
        if seq == self.seq:
            self.run_failed.emit(message)
            self.last_error = message
            self.inputs.notice.setText(f"Could not run the model on this input ({message}); "
                                       "the panels still show the last result.")
            self.inputs.notice.setVisible(True)
            self.status_notice.setText("model error")
            self.status_notice.setVisible(True)

    def _show_translation(self, result, cut_chars: bool) -> None:
        t = result.trace
        cfg = self.lm.cfg if self.lm is not None else result.cfg
        chips = " ".join(
            f"<span style='background:#e4ecf7;color:#111;border-radius:3px;padding:1px 3px'>&nbsp;{html.escape(p)}&nbsp;</span>"
            for p in t.out_tokens)
        mode = t.meta.get("mode", "")
        label = "given target" if mode == "teacher-forced" else mode
        self.inputs.translation.setText(f"<b>{html.escape(result.text) or '(empty)'}</b><br>{chips} &nbsp; "
                                        f"<span style='color:#888'>[{label}]</span>")
        notes = []
        if cut_chars:
            notes.append(f"Only the first {MAX_CHARS} characters are used.")
        if result.truncated:
            notes.append(f"The sentence is longer than the model's {cfg.max_len} tokens: "
                         f"the last {result.truncated} token(s) were cut.")
        if not self.state.sentence.strip():
            notes.append("The sentence is empty: the model sees only the end-of-sentence token.")
        self.inputs.notice.setText(" ".join(notes))
        self.inputs.notice.setVisible(bool(notes))
        cut = []
        if cut_chars or result.truncated:
            cut.append(f"input cut at {cfg.max_len} tokens" if result.truncated else
                       f"input cut at {MAX_CHARS} characters")
        self.status_notice.setText(" · ".join(cut))
        self.status_notice.setVisible(bool(cut))
        self.status_model.setText(f"Model: {self.model_name} ({cfg.N_enc}+{cfg.N_dec} layers, {cfg.h} heads, "
                                  f"d_model {cfg.d_model})")
        self.status_model.setToolTip(self.state.model_name)
        self.status_tokens.setText(f"{len(t.src_tokens)} source / {len(t.out_tokens)} output tokens")
        if self.lm is None:
            self.status_time.setText(f"{self._frame_origin}; the model is loading…")
        else:
            self.status_time.setText(f"updated {time.strftime('%H:%M:%S')} ({self.last_run_ms:.0f} ms)")

    def _render_panel(self, name: str, force: bool = False) -> None:
        """Render one panel, unless what it shows (its view_key) is unchanged since its last render."""
        panel = self.panels[name]
        key = panel.view_key(self.state) if hasattr(panel, "view_key") else None
        if not force and key is not None and self._panel_keys.get(name) == key:
            return
        panel.render(self.trace, self.state)
        self._panel_keys[name] = key
        settle_scenes(panel)

    def compact_caption(self) -> bool:
        """A window under 33 lines of text tall (a 720p projector at the presentation font) drops the caption's
        explanation, keeping its title and equation, and the focused heatmap's title, which the caption and the
        selectors repeat, so that the heatmap keeps room to be read. The explanation is then the caption's
        tooltip."""
        return self.height() < 33 * QtGui.QFontMetrics(QtWidgets.QApplication.font()).height()

    def _set_caption(self) -> None:
        title, text, equation = caption(self.state.stage)
        step = ""
        if self.state.stack in ("dec", "tgt_embed", "output") and self.trace is not None:
            s = self.state.step
            step = (f" &nbsp;|&nbsp; generation step {s}: predicting token {s + 1} "
                    f"(“{html.escape(self.trace.out_tokens[s])}”)")
        self._caption_compact = self.compact_caption()
        self.attention.focus.show_title(not self._caption_compact)   # the caption and the selectors name it too
        middle = "" if self._caption_compact else f"{html.escape(text)}<br>"
        self.caption.setText(f"<b>{html.escape(title)}</b>{step}<br>{middle}"
                             f"<span style='font-family:serif;font-style:italic'>{html.escape(equation)}</span>")
        self.caption.setToolTip(text if self._caption_compact else "")

    def _refit_caption(self) -> None:
        """Rewrite the caption if the window's height or font moved it across the compact threshold."""
        if getattr(self, "_caption_compact", None) not in (None, self.compact_caption()):
            self._set_caption()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._refit_caption()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange):
            self._refit_caption()

    def _render_all(self) -> None:
        self._set_caption()
        for name, panel in self.panels.items():
            dock = self.docks.get(name)
            if dock is not None and self.isVisible() and (dock.isHidden() or dock.visibleRegion().isEmpty()):
                continue                         # hidden and background-tab panels render when shown
            self._render_panel(name)

    # --- models: the first one opens in the background ---------------------------------------------
    def _frame_key(self) -> str | None:
        """The key of a run of the current state (see last_frame)."""
        return frame_key(self.state.model_name, *self.state.run_fields())

    def _show_frame(self, frame, origin: str = "shown from a saved run") -> None:
        """Show a frame (last_frame.Frame) until the model runs; origin: where it came from, for the status bar."""
        from model.assets import TGT_TOK
        from model.tokenizer import TextTokenizer
        try:
            tok = TextTokenizer.load(frame.folder / TGT_TOK)
        except Exception:   # the live run shows everything a moment later
            return
        self._frame, self._frame_origin = frame, origin
        self._set_vocab(tok.pieces(range(tok.vocab_size)))
        self._show_result(frame, 0.0, frame.cut_chars)
        self.trace_shown.emit()

    def _helper_done(self, _seq: int, frame) -> None:
        """Show the helper's frame if nothing newer is on screen and the run asked for is still the same."""
        if frame is not None and self.trace is None and self._run_key is None and self._frame_key() == self.helper.key:
            self._show_frame(frame, "translated in a helper process")
        if self.lm is None and self.loader.runs == 0:
            self._start_model_loader()

    def _open_in_background(self, name: str) -> None:
        self.status_model.setText(f"Loading {model_label(name)}…")
        if self.trace is None:                   # no saved frame to show meanwhile: say what is happening
            self.inputs.translation.setText(f"<i>Loading the model {html.escape(model_label(name))}… "
                                            "the translation appears in a moment.</i>")
        fallback = default_model()

        def job():
            try:
                return name, load(name), ""
            except ModelLoadError as e:
                if name == fallback:
                    raise
                return fallback, load(fallback), f"Cannot open {name}: {e}; opened {fallback}"

        # after the first paint: importing torch next to building and painting the window slows both (the GIL).
        # With a helper process translating meanwhile, after its frame: the helper imports torch quicker alone, and
        # its frame is painted sooner (measured, 5 starts each: median 2.43 against 2.69 s to the first frame)
        self._start_model_loader = lambda: self._start_loader(job)
        if self.helper is None:
            QtCore.QTimer.singleShot(0, self._start_model_loader)

    def _start_loader(self, job) -> None:
        QtWidgets.QApplication.processEvents()     # paint the window (and the last frame, if there is one)
        self.first_paint_at = time.perf_counter()
        self.loader.submit(0, job)

    def _model_opened(self, _seq: int, payload) -> None:
        name, lm, message = payload
        if self.lm is not None:
            return                                 # the user opened another model meanwhile
        if message:
            self.statusBar().showMessage(message, 15000)
        self._load_model(name, lm=lm)
        self._sync_inputs()
        self._run()

    def _open_failed(self, _seq: int, message: str) -> None:
        if self.lm is None:
            self.status_model.setText("No model")
            self._error("Cannot open the model", message)

    @property
    def model_name(self) -> str:
        """The open model's name (while the first model loads: the one being opened)."""
        return self.lm.name if self.lm is not None else model_label(self.state.model_name)

    def _set_vocab(self, vocab) -> None:
        for panel in self.panels.values():
            if hasattr(panel, "set_vocab"):
                panel.set_vocab(vocab)

    def _load_model(self, name_or_path: str, fallback: bool = True, lm=None) -> bool:
        try:
            lm = lm or load(name_or_path)
        except ModelLoadError as e:
            if self.lm is None and not fallback:
                self.statusBar().showMessage(f"Cannot open {name_or_path}: {e}; opened {default_model()}", 15000)
                name_or_path = default_model()
                lm = load(name_or_path)
            else:
                self._error("Cannot open this model", f"{e}\n\nThe app goes on with {self.lm.name if self.lm else 'the default model'}.")
                self._sync_inputs()
                return False
        self.lm = lm
        one_torch_thread()                       # the GUI thread runs gradient steps (and tests compare with it)
        self.state.model_name = str(name_or_path)
        self.setWindowTitle(f"Attention Visualizer — {model_label(self.state.model_name)}")
        self._set_vocab(lm.tgt_tok.pieces(range(lm.tgt_tok.vocab_size)))
        self.training.set_model(lm)
        return True

    def _model_picked(self, index: int) -> None:
        name = self.inputs.model.itemData(index)
        if name is None:
            self._open_model_folder()
            return
        if name != self.state.model_name and self._load_model(name):
            self._sync_inputs()
            self._run()

    def open_model(self, path: str) -> bool:
        ok = self._load_model(path)
        if ok:
            self._sync_inputs()
            self._run()
        return ok

    def _open_model_folder(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Open a model folder")
        if folder:
            self.open_model(folder)
        else:
            self._sync_inputs()

    # --- files --------------------------------------------------------------------------------
    def _error(self, title: str, message: str) -> None:
        if QtWidgets.QApplication.platformName() == "offscreen":
            self.statusBar().showMessage(f"{title}: {message.splitlines()[0]}", 15000)
            self.last_error = message
            return
        QtWidgets.QMessageBox.warning(self, title, message)

    def _save_session(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save session", "session.json", "Sessions (*.json)")
        if path:
            try:
                save_session(path, self.state)
            except SessionError as e:
                self._error("Cannot save the session", str(e))

    def open_session(self, path: str) -> bool:
        try:
            changes = read_session(path)
        except SessionError as e:
            self._error("Cannot open the session", str(e))
            return False
        model = changes.pop("model_name")
        if model != self.state.model_name and not self._load_model(model):
            return False
        # the view (layer, head, step…) is applied once the session's own run is shown: clamped against the
        # trace it belongs to, not against whatever was on screen before
        self._pending_view = {k: changes.pop(k) for k in list(changes) if k in VIEW_FIELDS}
        self.state.update(**changes)
        self._sync_inputs()
        self._run()
        return True

    def _open_session(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open session", "", "Sessions (*.json)")
        if path:
            self.open_session(path)

    def _focused_spec(self):
        if self.trace is None:
            return None
        a = self.attention
        head = None if a.mean.isChecked() else a.shown_head
        for spec in heatmap_specs(self.trace, self.model_name):
            if spec.kind == a.shown_kind and spec.layer == a.shown_layer and spec.head == head:
                return spec
        return None

    def focused_export(self) -> PlotExport:
        """The focused heatmap as an export: a figure with title and colour bar, in the colours on screen."""
        def spec():
            found = self._focused_spec()
            if found is None:
                raise ExportError("there is no heatmap to export yet")
            return found

        def figure():
            from .heatmap_figure import HeatmapFigure
            s, fig = spec(), HeatmapFigure()
            fig.set_colormap(self.attention.colormap)
            levels = self.attention.focus.image.getLevels()
            fig.show_matrix(s.matrix, s.mask, s.rows, s.cols, s.title,
                            levels=(0.0, 1.0) if levels is None else (float(levels[0]), float(levels[1])))
            return fig

        return PlotExport(lambda: spec().stem, lambda scale: figure().png_image(scale),
                          lambda: figure().svg_bytes(), lambda: heatmap_csv(spec()))

    def _export_focused(self) -> None:
        if self.trace is not None:
            self.attention_menu.save("png")

    def _copy_focused(self) -> None:
        if self.trace is None:
            return
        self.attention_menu.copy()
        self.statusBar().showMessage("Heatmap copied to the clipboard", 4000)

    def export_all(self, folder: str, fmt: str = "png", progress=None) -> list[Path]:
        """Every head of every kind and layer, plus a PNG picture of every open panel (not for CSV), into folder."""
        specs = heatmap_specs(self.trace, self.model_name)
        written = export_heatmaps(specs, folder, fmt, progress=progress)
        if fmt != "csv" and (progress is None or len(written) == len(specs)):
            from .export import write_bytes
            from .heatmap_figure import encode_png
            for name, dock in self.docks.items():
                if dock.isHidden():
                    continue
                self._render_panel(name)          # a panel behind a tab may still show an older view
                path = Path(folder) / f"panel_{name}.png"
                write_bytes(path, encode_png(dock.widget().grab().toImage()))
                written.append(path)
        return written

    def _export_all(self) -> None:
        if self.trace is None:
            return
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Export every heatmap into a folder")
        if not folder:
            return
        fmt, ok = QtWidgets.QInputDialog.getItem(self, "Export all", "Format:", ["png", "svg", "csv"], 0, False)
        if not ok:
            return
        dialog = QtWidgets.QProgressDialog("Exporting heatmaps…", "Cancel", 0, 1, self)
        dialog.setWindowModality(QtCore.Qt.WindowModality.WindowModal)

        def progress(done, total):
            dialog.setMaximum(total)
            dialog.setValue(done)
            QtWidgets.QApplication.processEvents()
            return not dialog.wasCanceled()

        try:
            written = self.export_all(folder, fmt, progress)
            self.statusBar().showMessage(f"Exported {len(written)} files to {folder}", 8000)
        except ExportError as e:
            self._error("Export failed", str(e))
        finally:
            dialog.close()

    # --- presentation, fonts, themes ------------------------------------------------------------
    def toggle_presentation(self) -> None:
        on = not self.isFullScreen()
        self.act_present.setChecked(on)
        if on:
            self._normal_font = QtWidgets.QApplication.font().pointSizeF()
            self.set_font_size(presentation_point_size(self.screen().geometry().height()))
            self._theme_before = self.settings.get("theme")
            self.set_theme("high-contrast", remember=False)
            self._details_before = self.act_details.isChecked()
            self.act_details.setChecked(False)      # room for the plots; View menu brings the controls back
            self._layout_before = self.saveState()
            self.showFullScreen()
            QtCore.QTimer.singleShot(0, self._size_presentation_docks)
        else:
            self.set_font_size(getattr(self, "_normal_font", self.settings.get("font_size")))
            self.set_theme(getattr(self, "_theme_before", "light"), remember=False)
            self.act_details.setChecked(getattr(self, "_details_before", True))
            self.showNormal()
            if getattr(self, "_layout_before", None) is not None:
                self.restoreState(self._layout_before)      # the docks as they were before the class

    def _size_presentation_docks(self) -> None:
        """In class the prediction matters more than LayerNorm statistics: the output panel gets 60% of the right
        column, so that its bars and their tokens can be read at the large font."""
        if self.isFullScreen() and "output" in self.docks and "layernorm" in self.docks:
            h = self.height()
            self.resizeDocks([self.docks["output"], self.docks["layernorm"]], [int(h * 0.6), int(h * 0.4)],
                             QtCore.Qt.Orientation.Vertical)

    def zoom(self, direction: int) -> None:
        size = QtWidgets.QApplication.font().pointSizeF() + 2 * direction
        self.set_font_size(size)
        if not self.isFullScreen():
            self.settings.set("font_size", size)

    def set_font_size(self, size: float) -> None:
        apply_theme(QtWidgets.QApplication.instance(), self.settings.get("theme") if not self.isFullScreen()
                    else "high-contrast", point_size=size)

    def set_theme(self, name: str, remember: bool = True) -> None:
        apply_theme(QtWidgets.QApplication.instance(), name)
        if remember:
            self.settings.set("theme", name)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._sized:                  # dock sizes only take once the window has its own size
            self._sized = True
            QtCore.QTimer.singleShot(0, self._size_docks)

    def _readable_tabs(self) -> None:
        """Dock tabs show their whole title, with scroll arrows when they do not fit, rather than 'La…'."""
        for bar in self.findChildren(QtWidgets.QTabBar):
            bar.setElideMode(QtCore.Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)

    def _size_docks(self) -> None:
        self._readable_tabs()
        if self.restored_layout:
            return
        w, h = self.width(), self.height()
        right = self.docks.get("output") or self.docks.get("layernorm")
        if right is not None:
            self.resizeDocks([self.docks["architecture"], right], [max(230, w // 6), max(360, int(w * 0.3))],
                             QtCore.Qt.Orientation.Horizontal)
        if "output" in self.docks and "layernorm" in self.docks:
            self.resizeDocks([self.docks["output"], self.docks["layernorm"]], [int(h * 0.4), int(h * 0.6)],
                             QtCore.Qt.Orientation.Vertical)

    def restore_layout(self) -> bool:
        """Docks, toolbar and window geometry as the user left them (saved when the window closes)."""
        geometry, state = self.settings.layout()
        if state is None:
            return False
        try:
            if geometry is not None:
                self.restoreGeometry(geometry)
            return self.restoreState(state)
        except TypeError:          # a stored value of the wrong type: keep the default layout
            return False

    def reset_layout(self) -> None:
        """Every dock back in its first place, shown; the toolbar too."""
        self.restored_layout = False
        self.restoreState(self.default_layout)
        for dock in self.docks.values():
            dock.show()
        self.nav_toolbar.show()
        if "layernorm" in self.docks:
            self.docks["layernorm"].raise_()
        self._size_docks()

    def closeEvent(self, event) -> None:
        if not self.isFullScreen():          # presentation mode is for one session, not the next start
            self.settings.save_layout(self.saveGeometry(), self.saveState())
        self.runner.wait(10000)
        self.loader.wait(30000)
        if self.helper is not None:
            self.helper.stop()               # its frame would come too late to be seen
            self.helper_waiter.wait(10000)
        stepped = self.training.stepper is not None and self.training.stepper.steps_taken > 0
        if self._run_key is not None and self.translation is not None and self._frame is None and not stepped:
            try:                             # the next start shows this at once (see last_frame)
                save_frame(self.settings.frame_path(), self._run_key, self.translation, self._run_cut)
            except Exception:                # a read-only home, a full disk: the next start waits for the model
                pass
        super().closeEvent(event)
