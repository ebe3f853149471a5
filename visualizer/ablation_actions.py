"""Switching heads off in the window: the attention panel's right-click menu on a head, the Heads menu (a head, every
head of a layer or a kind, reset), and a status-bar note of how many heads are off. The state's `ablations` is a run
field: a change runs the model again and every panel shows the new run (model/ablation.py says what switching off
means)."""
from __future__ import annotations

from PySide6 import QtWidgets

from model.ablation import ablated_heads, describe
from model.families import can_ablate

from .panels.widgets import ElidedLabel


def toggle_text(schema, head: tuple[str, int, int], off: bool) -> str:
    """A menu item's words for a head (kind, layer, head; 0-based) in the panels' own names, counted from 1:
    "Switch off Encoder self, layer 2, head 3" (the kind's short name, enc_self, is for the command line)."""
    kind, layer, h = head
    name = f"{schema.kind(kind).label}, layer {layer + 1}, head {h + 1}"
    return f"Switch {name} on again" if off else f"Switch off {name}"


def group_text(schema, kind: str, layer: int | None, off: bool) -> str:
    """A menu item's words for every head of a layer (or, layer None, of every layer) of a kind."""
    where = f"layer {layer + 1}" if layer is not None else "every layer"
    name = f"every head of {schema.kind(kind).label}, {where}"
    return f"Switch {name} on again" if off else f"Switch off {name}"


class AblationActions:
    def __init__(self, window):
        self.window = w = window
        self.state = w.state
        menu = w.menuBar().addMenu("Hea&ds")     # Alt+D: Alt+H is Help's (Alt+H, Return switched a head off)
        # the focused head as it is now when the menu opens (the first run came after the last change of state)
        menu.aboutToShow.connect(self.refresh)
        self.toggle_focused = menu.addAction("Switch the focused head off", self.toggle_focused_head)
        # a whole layer or kind at once (a student's 40 right-clicks to switch a kind off, where only that changed
        # the translation: QA)
        self.toggle_layer = menu.addAction("Switch off every head of this layer", lambda: self.toggle_group(True))
        self.toggle_kind = menu.addAction("Switch off every head of this kind", lambda: self.toggle_group(False))
        self.reset = menu.addAction("Every head back on", self.state.reset_ablations)
        self.note = ElidedLabel(tone="alert", keeps_shortest=True)        # squeezed: "1 head off", then "…"
        self.note.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Preferred)
        w.statusBar().addPermanentWidget(self.note)
        w.exports.attention_menu.extra = self.add_to_menu
        self.state.subscribe(lambda changed: self.refresh())
        self._last_run: tuple | None = None     # (sentence, model, target, heads off, translation) last shown
        w.trace_shown.connect(self.say_what_changed)
        self.refresh()

    def say_what_changed(self) -> None:
        """After heads were switched off or on, the status bar says whether the translation changed: a student
        switched a head off, saw the same translation, and thought nothing had happened (QA)."""
        t = self.window.trace
        if t is None or t.meta.get("partial"):
            return
        run = (t.meta.get("sentence"), t.meta.get("model"), t.meta.get("target"), ablated_heads(t),
               str(t.meta.get("translation", "")))
        last, self._last_run = self._last_run, run
        if last is None or last[:3] != run[:3] or last[3] == run[3]:
            return
        forced = t.meta.get("mode") == "teacher-forced"       # the output is the given target, always
        if forced and not run[3]:     # ("the same translation as with them off" said nothing of the heads, QA)
            text = ("Every head is on again. The target is given, so the output is the same whatever the heads: "
                    "they changed the attention and the output distribution.")
        elif last[4] == run[4] and not run[3]:     # every head on again ("one head rarely…" read as advice, QA)
            text = "Every head is on again: the same translation as with them off."
        elif forced:
            text = ("The target is given, so the output stays the same: switching heads off shows in the attention "
                    "and the output distribution (Compare runs).")
        elif last[4] == run[4] and len(run[3]) == 1:
            text = ("Same translation as before: one head rarely changes the output alone; its effect shows in "
                    "later layers (Compare runs).")
        elif last[4] == run[4]:          # (it said "one head rarely…" with two off: QA)
            text = (f"Same translation as before with {len(run[3])} heads off: their effect shows in the attention "
                    "and the output distribution (Compare runs).")
        else:
            text = f"The translation changed: “{last[4]}” → “{run[4]}”."
        self.window.statusBar().showMessage(text, 15000)

    def forget_last_run(self) -> None:
        """The next run is not compared with the one shown (a session opened: "Same translation as before" read
        as if the heads had been switched off in the window, QA)."""
        self._last_run = None

    def allowed(self) -> bool:
        """Heads can be switched off in the open model (its family supports it)."""
        return self.window.lm is not None and can_ablate(self.window.lm)

    def focused(self) -> tuple[str, int, int] | None:
        """(kind, layer, head) of the attention panel's focused head, 0-based; None for the mean of heads."""
        a = self.window.attention
        if self.window.trace is None or a.mean.isChecked() or a.shown_kind not in self.state.schema.kind_names:
            return None                         # (no head drawn yet)
        return a.shown_kind, a.shown_layer, a.shown_head

    def toggle_focused_head(self) -> None:
        head = self.focused()
        if head is not None and self.allowed():
            self.state.toggle_ablation(*head)

    def shown(self) -> tuple[str, int] | None:
        """(kind, layer) of the attention panel's view, 0-based (the mean of heads too)."""
        a = self.window.attention
        if self.window.trace is None or a.shown_kind not in self.state.schema.kind_names:
            return None
        return a.shown_kind, a.shown_layer

    def group(self, one_layer: bool) -> frozenset:
        """Every head of the shown layer (or of every layer) of the shown kind; empty when nothing is shown."""
        shown = self.shown()
        if shown is None:
            return frozenset()
        kind, layer = shown
        schema = self.state.schema
        layers = [layer] if one_layer else range(schema.stack(schema.kind(kind).stack).n_layers)
        return frozenset((kind, l, h) for l in layers for h in range(schema.n_heads))

    def toggle_group(self, one_layer: bool) -> None:
        """Every head of the layer (or kind) off, or on again when every one of them is off already."""
        heads = self.group(one_layer)
        if heads and self.allowed():
            ablations = self.state.ablations
            self.state.update(ablations=ablations - heads if heads <= ablations else ablations | heads)

    def _group_texts(self) -> list[str]:
        shown = self.shown()
        if shown is None:
            return []
        return [group_text(self.state.schema, shown[0], shown[1] if one else None,
                           self.group(one) <= self.state.ablations) for one in (True, False)]

    def add_to_menu(self, menu: QtWidgets.QMenu) -> None:
        """The attention panel's right-click menu: switch the head under the mouse (now focused) off or on, or every
        head of its layer or kind."""
        head = self.focused()
        if head is not None:
            off = head in self.state.ablations
            act = menu.addAction(toggle_text(self.state.schema, head, off), lambda: self.state.toggle_ablation(*head))
            self._explain(act)
        for text, one in zip(self._group_texts(), (True, False)):
            self._explain(menu.addAction(text, lambda one=one: self.toggle_group(one)))
        reset = menu.addAction("Every head back on", self.state.reset_ablations)
        reset.setEnabled(bool(self.state.ablations))

    def _explain(self, act) -> None:
        if not self.allowed():
            act.setEnabled(False)
            act.setToolTip(f"Heads of {self.window.model_name} cannot be switched off yet")

    def refresh(self) -> None:
        head = self.focused()
        off = head is not None and head in self.state.ablations
        self.toggle_focused.setText(toggle_text(self.state.schema, head, off) + " (the focused head)" if head else
                                    "Switch the focused head off (choose a head, not the mean)")
        self.toggle_focused.setEnabled(head is not None and self.allowed())
        texts = self._group_texts()
        for act, text, plain in zip((self.toggle_layer, self.toggle_kind), texts or ["", ""],
                                    ("Switch off every head of this layer", "Switch off every head of this kind")):
            act.setText(text or plain)
            act.setEnabled(bool(text) and self.allowed())
        self.reset.setEnabled(bool(self.state.ablations))
        # the status bar's note names one head; more are counted, and listed in its tooltip: six names widened the
        # window past a 1600-pixel screen and cut the status bar's messages short (QA)
        heads = self.state.ablations
        text = describe(heads, self.state.schema) if len(heads) <= 1 else f"{len(heads)} heads off"
        self.note.setText(text, (f"{len(heads)} head off",) if len(heads) == 1 else ())
        self.note.setToolTip("\n".join(filter(None, (
            describe(heads, self.state.schema, listed=None) if len(heads) > 1 else "",
            "Right-click a head in the attention panel (or use the Heads menu) to switch it on again"
            if heads else ""))))
        self.note.setVisible(bool(text))
