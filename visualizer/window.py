"""The main window: input bar, panels as docks, stepping actions, menus; everything renders one Trace."""
from __future__ import annotations

import html
import time
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from model import ModelLoadError, bundled_models, load, translate
from model.decoding import DecodingSettings

from .captions import caption
from .controls import OPEN_FOLDER, InputBar
from .examples import load_examples
from .export import ExportError, atomic_write, export_heatmaps, heatmap_specs
from .panels.architecture import ArchitectureMap
from .panels.attention import AttentionPanel
from .panels.inspector import InspectorPanel
from .panels.training_step import TrainingStepPanel
from .session import SessionError, read_session, save_session
from .settings import Settings
from .state import RUN_FIELDS, ViewState
from .theme import THEMES, apply_theme
from .worker import ModelRunner

DEBOUNCE_MS = 150
MAX_CHARS = 2000        # longer text is cut before tokenizing (the model's limit cuts further, with a notice)


def default_model() -> str:
    names = bundled_models()
    return "en-fr" if "en-fr" in names else names[0]


class MainWindow(QtWidgets.QMainWindow):
    trace_shown = QtCore.Signal()              # a new trace has been rendered in every visible panel

    def __init__(self, model: str | None = None, sentence: str | None = None, target: str | None = None,
                 settings: Settings | None = None):
        super().__init__()
        self.setWindowTitle("Attention Visualizer")
        self.settings = settings or Settings()
        self.state = ViewState(model_name=model or default_model(), sentence=sentence or "The red car is fast.",
                               target=target or "")
        self.lm = None
        self.trace = None
        self.translation = None
        self.runner = ModelRunner(self)
        self.runner.finished.connect(self._on_result)
        self.runner.failed.connect(self._on_failure)
        self.seq = 0
        self.rendered_seq = -1
        self._panel_keys: dict[str, object] = {}
        self.last_run_ms = 0.0
        self.debounce = QtCore.QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self.debounce.timeout.connect(self._run)
        self._build_ui()
        self._build_actions()
        self.state.subscribe(self._on_state)
        self._load_model(self.state.model_name, fallback=False)
        self._sync_inputs()
        self._run()

    # --- layout -------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.inputs = InputBar()
        self.caption = QtWidgets.QLabel()
        self.caption.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet("padding: 4px 8px; background: palette(alternate-base)")
        self.attention = AttentionPanel(self.state)
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
        self._add_dock("architecture", "Architecture map", self.architecture, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea)
        for name, title, panel in self._extra_panels():
            self.panels[name] = panel
            self._add_dock(name, title, panel, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("inspector", "Math inspector", self.inspector, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("training", "One training step", self.training, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        right = [d for n, d in self.docks.items() if n != "architecture"]
        for d in right[1:]:
            self.tabifyDockWidget(right[0], d)
        if right:
            right[0].raise_()
            self.resizeDocks([self.docks["architecture"], right[0]], [330, 470], QtCore.Qt.Orientation.Horizontal)
        self.status_model = QtWidgets.QLabel()
        self.status_tokens = QtWidgets.QLabel()
        self.status_time = QtWidgets.QLabel()
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
        self.resize(1500, 950)

    def _extra_panels(self):
        """Embeddings, LayerNorm and output panels."""
        from .panels.embeddings import EmbeddingsPanel
        from .panels.layernorm import LayerNormPanel
        from .panels.output import OutputPanel
        return [("output", "Output distribution", OutputPanel()), ("layernorm", "LayerNorm", LayerNormPanel()),
                ("embeddings", "Embeddings & positions", EmbeddingsPanel())]

    def _add_dock(self, name: str, title: str, widget: QtWidgets.QWidget, area) -> None:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"dock-{name}")
        dock.setWidget(widget)
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
        steps = [("Previous sublayer", "Alt+Left", self.state.prev_sublayer), ("Next sublayer", "Alt+Right", self.state.next_sublayer),
                 ("Previous layer", "Alt+Up", self.state.prev_layer), ("Next layer", "Alt+Down", self.state.next_layer),
                 ("Previous head", "Alt+PgUp", self.state.prev_head), ("Next head", "Alt+PgDown", self.state.next_head),
                 ("Previous step", "Alt+,", self.state.prev_step), ("Next step", "Alt+.", self.state.next_step),
                 ("First stage", "Alt+Home", self.state.first), ("Last stage", "Alt+End", self.state.last)]
        self.step_actions = {}
        for label, keys, fn in steps:
            act = QtGui.QAction(label, self)
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
            i.model.insertItem(max(0, i.model.count() - 1), s.model_name, s.model_name)
            idx = i.model.findData(s.model_name)
        i.model.setCurrentIndex(idx)

    def _on_state(self, changed: set[str]) -> None:
        if changed & RUN_FIELDS:
            if changed == {"decoding"} and self.trace is not None and self.state.decoding.method == "greedy" \
                    and self.translation is not None and self.translation.trace.meta.get("mode") == "greedy":
                self._render_all()               # temperature alone: the output panel re-reads the logits
                return
            self.debounce.start()
            return
        if self.trace is not None:
            self._render_all()

    def _run(self) -> None:
        """Start a model run for the current state (in the worker; the newest request wins)."""
        if self.lm is None:
            return
        self.seq += 1
        lm, s = self.lm, self.state
        text = s.sentence[:MAX_CHARS]
        settings, target, positional = s.decoding, s.target, s.positional

        def job():
            lm.model.positional = positional and lm.cfg.pe != "none"
            t0 = time.perf_counter()
            result = translate(lm, text, settings, target=target or None)
            return result, (time.perf_counter() - t0) * 1000, len(s.sentence) > MAX_CHARS

        self.runner.submit(self.seq, job)

    def _on_result(self, seq: int, payload) -> None:
        if seq != self.seq:
            return                               # a newer request is on its way: never show stale results
        result, ms, cut_chars = payload
        self.translation, self.trace, self.last_run_ms = result, result.trace, ms
        t = self.trace
        self.state.set_shape(t.n_layers("enc"), t.n_layers("dec"), t.n_heads, t.n_steps)
        self._show_translation(result, cut_chars)
        self._render_all()
        self.rendered_seq = seq
        self.trace_shown.emit()

    def _on_failure(self, seq: int, message: str) -> None:
        if seq == self.seq:
            self.statusBar().showMessage(f"Could not run the model: {message}", 10000)

    def _show_translation(self, result, cut_chars: bool) -> None:
        t = result.trace
        chips = " ".join(
            f"<span style='background:#e4ecf7;color:#111;border-radius:3px;padding:1px 3px'>&nbsp;{html.escape(p)}&nbsp;</span>"
            for p in t.out_tokens)
        mode = t.meta.get("mode", "")
        label = "given target" if mode == "teacher-forced" else mode
        self.inputs.translation.setText(f"<b>{html.escape(result.text) or '(empty)'}</b> &nbsp; "
                                        f"<span style='color:#666'>[{label}]</span><br>{chips}")
        notes = []
        if cut_chars:
            notes.append(f"Only the first {MAX_CHARS} characters are used.")
        if result.truncated:
            notes.append(f"The sentence is longer than the model's {self.lm.cfg.max_len} tokens: "
                         f"the last {result.truncated} token(s) were cut.")
        if not self.state.sentence.strip():
            notes.append("The sentence is empty: the model sees only the end-of-sentence token.")
        self.inputs.notice.setText(" ".join(notes))
        self.inputs.notice.setVisible(bool(notes))
        self.status_model.setText(f"Model: {self.lm.name}")
        self.status_tokens.setText(f"{len(t.src_tokens)} source / {len(t.out_tokens)} output tokens")
        self.status_time.setText(f"updated {time.strftime('%H:%M:%S')} ({self.last_run_ms:.0f} ms)")

    def _render_panel(self, name: str, force: bool = False) -> None:
        """Render one panel, unless what it shows (its view_key) is unchanged since its last render."""
        panel = self.panels[name]
        key = (id(self.trace), panel.view_key(self.state)) if hasattr(panel, "view_key") else None
        if not force and key is not None and self._panel_keys.get(name) == key:
            return
        panel.render(self.trace, self.state)
        self._panel_keys[name] = key

    def _render_all(self) -> None:
        title, text, equation = caption(self.state.stage)
        step = ""
        if self.state.stack in ("dec", "tgt_embed", "output") and self.trace is not None:
            s = self.state.step
            step = (f" &nbsp;|&nbsp; generation step {s}: predicting token {s + 1} "
                    f"(“{html.escape(self.trace.out_tokens[s])}”)")
        self.caption.setText(f"<b>{html.escape(title)}</b>{step}<br>{html.escape(text)}<br>"
                             f"<span style='font-family:serif;font-style:italic'>{html.escape(equation)}</span>")
        for name, panel in self.panels.items():
            dock = self.docks.get(name)
            if dock is not None and self.isVisible() and (dock.isHidden() or dock.visibleRegion().isEmpty()):
                continue                         # hidden and background-tab panels render when shown
            self._render_panel(name)

    # --- models -------------------------------------------------------------------------------
    def _load_model(self, name_or_path: str, fallback: bool = True) -> bool:
        try:
            lm = load(name_or_path)
        except ModelLoadError as e:
            if self.lm is None and not fallback:
                lm = load(default_model())
            else:
                self._error("Cannot open this model", f"{e}\n\nThe app goes on with {self.lm.name if self.lm else 'the default model'}.")
                self._sync_inputs()
                return False
        self.lm = lm
        self.state.model_name = str(name_or_path)
        vocab = lm.tgt_tok.pieces(range(lm.tgt_tok.vocab_size))
        for panel in self.panels.values():
            if hasattr(panel, "set_vocab"):
                panel.set_vocab(vocab)
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
        for spec in heatmap_specs(self.trace, self.lm.name):
            if spec.kind == a.shown_kind and spec.layer == a.shown_layer and spec.head == head:
                return spec
        return None

    def _export_focused(self) -> None:
        spec = self._focused_spec()
        if spec is None:
            return
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export heatmap", f"{spec.stem}.png",
                                                        "PNG image (*.png);;SVG image (*.svg);;CSV table (*.csv)")
        if not path:
            return
        fmt = Path(path).suffix.lstrip(".").lower() or "png"
        try:
            written = export_heatmaps([spec], Path(path).parent, fmt)
            if written and written[0] != Path(path):
                written[0].replace(path)
        except (ExportError, OSError) as e:
            self._error("Export failed", str(e))

    def _copy_focused(self) -> None:
        spec = self._focused_spec()
        if spec is None:
            return
        from .heatmap_figure import HeatmapFigure
        fig = HeatmapFigure()
        fig.show_spec(spec)
        QtWidgets.QApplication.clipboard().setImage(fig.png_image())
        self.statusBar().showMessage("Heatmap copied to the clipboard", 4000)

    def export_all(self, folder: str, fmt: str = "png", progress=None) -> list[Path]:
        """Every head of every kind and layer, plus a picture of every panel (PNG), into folder."""
        specs = heatmap_specs(self.trace, self.lm.name)
        written = export_heatmaps(specs, folder, fmt, progress=progress)
        if fmt == "png" and (progress is None or len(written) == len(specs)):
            from .heatmap_figure import encode_png
            from .export import write_bytes
            for name, dock in self.docks.items():
                if not dock.isHidden():
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
            self._normal_font = self.settings.get("font_size")
            self.set_font_size(max(18.0, self._normal_font * 1.6))
            self._theme_before = self.settings.get("theme")
            self.set_theme("high-contrast", remember=False)
            self.showFullScreen()
        else:
            self.set_font_size(getattr(self, "_normal_font", self.settings.get("font_size")))
            self.set_theme(getattr(self, "_theme_before", "light"), remember=False)
            self.showNormal()

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

    def closeEvent(self, event) -> None:
        self.settings.save_layout(self.saveGeometry(), self.saveState())
        self.runner.wait(10000)
        super().closeEvent(event)
