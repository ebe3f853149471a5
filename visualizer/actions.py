"""The window's menus, toolbar and keyboard shortcuts: what each does is some room's method."""
from __future__ import annotations

from PySide6 import QtCore, QtGui

from model.assets import bundled_models, model_summary

from .blank_screen import BLANKS, BlankScreen
from .controls import OPEN_FOLDER, show_from_start
from .examples import load_examples
from .nav_toolbar import FittedTexts
from .theme import THEMES

# every shortcut has a modifier, so arrows, Home/End and PgUp/PgDn keep their meaning in text fields;
# the toolbar shows the short text (iconText), the menu the full one. A separator comes before the rows marked True.
STEPS = (("First stage", "« First", "Alt+Home", "first", False),
         ("Previous sublayer", "◀ Sublayer", "Alt+Left", "prev_sublayer", False),
         ("Next sublayer", "Sublayer ▶", "Alt+Right", "next_sublayer", False),
         ("Last stage", "Last »", "Alt+End", "last", False),
         ("Previous layer", "▲ Layer", "Alt+Up", "prev_layer", True),
         ("Next layer", "Layer ▼", "Alt+Down", "next_layer", False),
         ("Previous head", "◀ Head", "Alt+PgUp", "prev_head", True),
         ("Next head", "Head ▶", "Alt+PgDown", "next_head", False),
         ("Previous step", "◀ Step", "Alt+,", "prev_step", True),
         ("Next step", "Step ▶", "Alt+.", "next_step", False))
# presenter remotes send PageDown / PageUp: walk the whole pipeline with one key
REMOTE = (("PgDown", "next_in_talk", "Next stage, after linear + softmax the next step (a presenter's remote)"),
          ("PgUp", "prev_in_talk", "Previous stage, before the decoder the previous step (a presenter's remote)"))


class Actions:
    """Builds the menu bar, the navigation toolbar and the shortcuts of a window; keeps the actions others read."""

    def __init__(self, window):
        self.window = w = window
        menu = w.menuBar()
        file = menu.addMenu("&File")
        self.open_model = file.addAction("Open model folder…", w.open_model_folder)
        file.addAction("Open session…", w.open_session_dialog, QtGui.QKeySequence.StandardKey.Open)
        file.addAction("Save session…", w.save_session_dialog, QtGui.QKeySequence.StandardKey.Save)
        file.addSeparator()
        file.addAction("Export focused heatmap…", w.exports.export_focused, QtGui.QKeySequence("Ctrl+E"))
        file.addAction("Export all…", w.exports.export_all_dialog, QtGui.QKeySequence("Ctrl+Shift+E"))
        file.addAction("Copy focused heatmap", w.exports.copy_focused, QtGui.QKeySequence("Ctrl+Shift+C"))
        file.addSeparator()
        file.addAction("Quit", w.close, QtGui.QKeySequence.StandardKey.Quit)
        self._examples(menu.addMenu("E&xamples"))
        self._navigate(menu.addMenu("&Navigate"))
        self._view(menu.addMenu("&View"))
        w.inputs.model.clear()
        for name in bundled_models():
            w.inputs.model.addItem(name, name)
            summary = model_summary(name)
            if summary:
                w.inputs.model.setItemData(w.inputs.model.count() - 1, f"{name}: {summary}",
                                           QtCore.Qt.ItemDataRole.ToolTipRole)
        w.inputs.model.addItem(OPEN_FOLDER, None)

    def _examples(self, examples) -> None:
        self.examples_menu = examples
        examples.setToolTipsVisible(True)
        examples.aboutToShow.connect(self.fit_examples)
        self.examples_for(self.window.state.model_name)

    def fit_examples(self) -> None:
        """The topics' column only where the menu then fits the screen: at 1024 × 768 in class it ran past the
        screen's edge, "Word rec", "A simple" (QA); without it the status bar still says what each shows."""
        actions = [a for a in self.examples_menu.actions() if a.data()]
        for a in actions:
            a.setText("\t".join(a.data()))
        screen = self.window.screen().availableGeometry().width()
        if self.examples_menu.sizeHint().width() > screen:
            for a in actions:
                a.setText(a.data()[0])

    def examples_for(self, model: str) -> None:
        """The examples menu for this model: its sentences, and what each shows in the menu's second column (after
        a tab, where shortcuts stand: a class saw sentences only, the tooltip came on hover) and its tooltip."""
        self.examples_menu.clear()
        for ex in load_examples(model, getattr(self.window.lm, "schema", None)):
            act = self.examples_menu.addAction(f"{ex.sentence}\t{ex.topic(model)}")
            act.setData((ex.sentence, ex.topic(model)))
            act.setToolTip(ex.shows(model))
            act.setStatusTip(ex.shows(model))
            act.triggered.connect(lambda _=False, s=ex.sentence: self.show_example(s))

    def show_example(self, sentence: str) -> None:
        """A new sentence, translated by the model: a target typed for the sentence before is not its translation."""
        inputs = self.window.inputs
        inputs.target.clear()
        show_from_start(inputs.sentence, sentence)

    def _navigate(self, nav) -> None:
        w, state = self.window, self.window.state
        self.nav_toolbar = w.addToolBar("Navigate")
        self.nav_toolbar.setObjectName("toolbar-navigate")
        self.step_actions: dict[str, QtGui.QAction] = {}
        self._moves: dict[QtGui.QAction, str] = {}          # each step action's ViewState method
        for label, short, keys, method, separated in STEPS:
            if separated:
                nav.addSeparator()
                self.nav_toolbar.addSeparator()
            act = QtGui.QAction(label, w)
            act.setIconText(short)
            act.setShortcuts([QtGui.QKeySequence(keys)])
            act.setToolTip(f"{label} ({keys})")
            act.triggered.connect(lambda _=False, f=getattr(state, method): f())
            nav.addAction(act)
            self.nav_toolbar.addAction(act)
            self.step_actions[label] = act
            self._moves[act] = method
        self.fitted = FittedTexts(self.nav_toolbar, list(self._moves), self.grey_moves)
        state.subscribe(lambda _changed: self.grey_moves())
        self.grey_moves()
        for keys, method, text in REMOTE:
            act = QtGui.QAction(text, w)          # the text for Help ▸ Keyboard shortcuts
            act.setShortcut(QtGui.QKeySequence(keys))
            act.triggered.connect(lambda _=False, f=getattr(state, method): f() or self._at_end(f.__name__))
            w.addAction(act)

    def _at_end(self, method: str) -> None:
        """A remote's press that moved nothing says why: at the end, PageDown did nothing without a word (QA as a
        teacher)."""
        if self.window.trace is None:
            return
        end = ("The end: the last step's linear + softmax (PageUp goes back, Alt+Home to the start)"
               if method == "next_in_talk" else "The start: the first stage (PageDown goes on)")
        self.window.statusBar().showMessage(end, 6000)

    def grey_moves(self) -> None:
        """Grey the toolbar's steps that would not move the view (at the pipeline's first stage, the last head,
        the last step): a class pressed a bright "Sublayer ▶" at the output and nothing happened. The buttons,
        not their actions: an action's change lays the whole window out again (its toolbar asks), at every step
        to or from an end; the menu's and the shortcut's press there still does nothing, as before."""
        for act, method in self._moves.items():
            button = self.nav_toolbar.widgetForAction(act)
            if button is not None:
                button.setEnabled(self.window.state.can(method))

    def _view(self, view) -> None:
        w = self.window
        go = view.addMenu("Go to panel")            # the tabs a narrow column hides behind its arrows
        self.go_to = {}
        for n, (name, dock) in enumerate(w.docks.items(), 1):
            act = go.addAction(dock.windowTitle(), lambda name=name: w.docking.go_to(name))
            if n <= 9:
                act.setShortcut(QtGui.QKeySequence(f"Alt+{n}"))
            self.go_to[name] = act
        view.addSeparator()
        for dock in w.docks.values():
            view.addAction(dock.toggleViewAction())
        view.addAction(self.nav_toolbar.toggleViewAction())
        self.follow = view.addAction("Panels follow the stage")
        self.follow.setCheckable(True)
        self.follow.setChecked(True)
        self.follow.setToolTip("Bring the Embeddings or LayerNorm tab to the front as the view enters that stage")
        self.details = view.addAction("Target and decoding controls")
        self.details.setCheckable(True)
        self.details.setChecked(True)
        self.details.toggled.connect(w.inputs.set_details_visible)
        self.details.toggled.connect(lambda _: w.refit_caption())     # three rows more or less for the heatmap
        self.alone = view.addAction("Heatmap alone", lambda: self.alone.setChecked(w.docking.toggle_alone()),
                                    QtGui.QKeySequence("F9"))
        self.alone.setCheckable(True)
        self.alone.setToolTip("Hide every panel around the attention heatmap (F9 again brings them back)")
        view.addAction("Reset layout", w.reset_layout)
        view.addSeparator()
        self.present = view.addAction("Presentation mode", lambda: w.toggle_presentation())
        # F5 too, and Escape leaves it: a presenter remote's keys, as a slide show takes them (QA as a teacher)
        self.present.setShortcuts([QtGui.QKeySequence("F11"), QtGui.QKeySequence("F5")])
        self.present.setCheckable(True)
        # (no text: the shortcut sheet lists Esc once, with Qt's own Esc: help.QT_KEYS)
        self.leave_presentation = QtGui.QAction(w, shortcut=QtGui.QKeySequence("Esc"), enabled=False)
        self.leave_presentation.triggered.connect(lambda: w.presentation.active and w.toggle_presentation())
        w.addAction(self.leave_presentation)           # (enabled in presentation mode only: see Presentation)
        self.blank = BlankScreen(w)
        self.blank_actions = {}                        # enabled in presentation mode only, as Esc
        for colour, (text, keys) in BLANKS.items():
            act = view.addAction(text, lambda c=colour: self.blank.show_colour(c))
            act.setShortcuts([QtGui.QKeySequence(k) for k in keys])
            act.setToolTip(f"In presentation mode: the whole screen {colour}; any key brings the view back")
            act.setEnabled(False)
            self.blank_actions[colour] = act
        larger = view.addAction("Larger text", lambda: w.presentation.zoom(+1))
        # Ctrl+= as well: the key of "+" without Shift, as browsers take it (Ctrl++ needs Shift on most keyboards)
        larger.setShortcuts([*QtGui.QKeySequence.keyBindings(QtGui.QKeySequence.StandardKey.ZoomIn),
                             QtGui.QKeySequence("Ctrl+=")])
        view.addAction("Smaller text", lambda: w.presentation.zoom(-1), QtGui.QKeySequence.StandardKey.ZoomOut)
        view.addAction("Normal text size", w.presentation.normal_text, QtGui.QKeySequence("Ctrl+0"))
        themes = view.addMenu("Theme")
        group = QtGui.QActionGroup(w)
        self.theme_actions: dict[str, QtGui.QAction] = {}      # checked: the theme on screen (presentation's too)
        for name in THEMES:
            act = themes.addAction(name.capitalize(), lambda n=name: w.presentation.set_theme(n))
            act.setCheckable(True)
            act.setChecked(name == w.settings.get("theme"))
            group.addAction(act)
            self.theme_actions[name] = act


class ShortcutsOverFields(QtCore.QObject):
    """The window's shortcuts win over a text field's own bindings. QLineEdit takes Ctrl+E (end of line, an Emacs
    binding on Linux) before the menu sees it, so Export focused heatmap did nothing while the cursor was in the
    sentence, where it starts. Keys without Ctrl or Alt (typing, arrows, Home, End) stay the field's. An Alt+letter
    that is no shortcut types nothing (Alt+G, the Target's key, typed "g" into the sentence while presentation mode
    hid the Target; QA as a teacher)."""

    def __init__(self, window, fields):
        super().__init__(window)
        self.window = window
        for field in fields:
            field.installEventFilter(self)

    def eventFilter(self, field, event) -> bool:
        Mod = QtCore.Qt.KeyboardModifier
        if event.type() == QtCore.QEvent.Type.KeyPress:     # (AltGr's characters come without Alt, or with Ctrl)
            return bool(event.modifiers() & Mod.AltModifier and not event.modifiers() & Mod.ControlModifier
                        and event.text().isprintable() and event.text())
        if event.type() != QtCore.QEvent.Type.ShortcutOverride:
            return False
        mods = event.modifiers() & (QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
        if not mods:
            return False
        pressed = QtGui.QKeySequence(event.keyCombination())
        for action in self.window.findChildren(QtGui.QAction):
            if action.isEnabled() and pressed in action.shortcuts():
                return True          # not accepted by the field: the shortcut goes to the window's action
        return False

