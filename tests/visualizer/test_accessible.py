"""What a screen reader finds: a name for every control and plot the keyboard reaches, the translation read as text,
and what changes without the focus moving (a heatmap cell read by the arrow keys, a stage stepped to, a status-bar
message) announced. A blind student's QA pass found no accessible name on any spin box, plot or table."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from visualizer import accessible
from visualizer.window import behind_a_tab


def said_name(widget) -> str:
    return QtGui.QAccessible.queryAccessibleInterface(widget).text(QtGui.QAccessible.Text.Name)


def tab_walk(window, presses: int = 60) -> list[QtWidgets.QWidget]:
    window.inputs.sentence.setFocus()
    reached = []
    for _ in range(presses):
        QTest.keyClick(QtWidgets.QApplication.focusWidget(), QtCore.Qt.Key.Key_Tab)
        reached.append(QtWidgets.QApplication.focusWidget())
    return reached


def test_every_control_the_keyboard_reaches_has_a_name(qtbot, window):
    window.resize(1400, 900)
    for name in window.docks:                      # every panel built and shown once, then the first ones again
        window.docks[name].raise_()
        qtbot.wait(5)
    for name in ("output", "layernorm"):
        window.docks[name].raise_()
    qtbot.wait(50)
    reached = tab_walk(window)
    for widget in [w for w in window.findChildren(QtWidgets.QWidget) if w.isVisible() and not behind_a_tab(w)
                   and w.focusPolicy() & QtCore.Qt.FocusPolicy.TabFocus] + reached:
        if isinstance(widget.parentWidget(), (QtWidgets.QAbstractSpinBox, QtWidgets.QAbstractScrollArea)):
            continue                              # a spin box's line edit, a view's viewport: the box, the view speak
        words = said_name(widget)
        assert words.strip(), f"{type(widget).__name__} has no name"
        if isinstance(widget, QtWidgets.QAbstractSpinBox):      # it said "1.00": the value alone
            assert words != widget.text() and not any(c.isdigit() for c in words), words
    names = {said_name(w) for w in reached}
    assert {"Temperature", "Layer", "Head", "Beam width"} - names == {"Beam width"}     # (beam: greedy disables it)
    assert any(n.startswith("Attention heatmap: Encoder self-attention — layer") for n in names)
    assert not any(isinstance(w, QtWidgets.QScrollArea) for w in reached)    # a nameless "pane" before each panel


def test_every_drop_down_list_is_named_by_a_label(qtbot, window):
    """On Linux Qt names a combo box by the label whose buddy it is and passes over its accessibleName: Orca read
    the attention kind's box as "Encoder self", the Rollout tab's as "Rollout (self-attention, heads averaged)" (QA).
    Every drop-down list in every panel has a label, whose words are not its current item's."""
    window.resize(1400, 900)
    for name in window.docks:                      # every panel built
        window.docks[name].raise_()
        qtbot.wait(5)
    boxes = window.findChildren(QtWidgets.QComboBox)
    assert len(boxes) >= 5
    for box in boxes:
        labels = QtGui.QAccessible.queryAccessibleInterface(box).relations(QtGui.QAccessible.RelationFlag.Label)
        words = [i.text(QtGui.QAccessible.Text.Name).replace("&", "").rstrip(":") for i, _ in labels]
        assert words and all(w.strip() and w != box.currentText() for w in words), (box.currentText(), words)
    assert "Attention kind" in {w for box in boxes for i, _ in QtGui.QAccessible.queryAccessibleInterface(
        box).relations(QtGui.QAccessible.RelationFlag.Label) for w in [i.text(QtGui.QAccessible.Text.Name)]}


def test_the_translation_is_reached_and_read_as_text(qtbot, window):
    """Its label held the chips too, a letter at a time (U+2060 between them), and Tab never reached it."""
    window.resize(1400, 900)
    label = window.inputs.translation.label
    assert label in tab_walk(window, 12)
    words = said_name(label)
    assert words.startswith(f"Translation: {window.translation.text}") and "\u2060" not in words
    assert "<" not in words.replace("</s>", "") and words.count(window.translation.text) == 1


def test_a_cell_read_by_the_arrow_keys_a_stage_and_a_message_are_announced(qtbot, window, monkeypatch):
    heard = []
    monkeypatch.setattr(accessible, "announce", lambda widget, text: heard.append(accessible.plain(text)))
    a = window.attention
    a.canvas.setFocus()
    QTest.keyClick(a.canvas, QtCore.Qt.Key.Key_Right)
    assert heard[-1] == a.hover.text() and heard[-1].startswith("query “")
    assert "Strongest key of each query: “" in a.canvas.accessibleDescription()
    # the cell read is kept in the description, read again where asked (it had been said once, then nowhere)
    assert a.canvas.accessibleDescription().startswith(f"Read: {heard[-1]}. Strongest key of each query: “")
    qtbot.keyClick(window, QtCore.Qt.Key.Key_Down, QtCore.Qt.KeyboardModifier.AltModifier)     # the next layer
    qtbot.waitUntil(lambda: heard[-1].startswith("Encoder self-attention + Add & Norm — layer 2"))
    window.statusBar().showMessage("Saved /tmp/somewhere/cross_L2_H3.png")
    assert heard[-1] == "Saved /tmp/somewhere/cross_L2_H3.png"


def test_shift_f10_opens_the_heatmaps_menu_at_the_cell_read_and_the_cell_stays(qtbot, window, monkeypatch):
    """Shift+F10 (a laptop without a Menu key) did nothing; after the menu the framed cell and its read-out were
    gone, and the student started again from the first cell (QA)."""
    from visualizer.plot_menu import PlotMenu
    opened = []

    class Closed:
        def exec(self, where):
            opened.append(where)

        def deleteLater(self):
            pass
    monkeypatch.setattr(PlotMenu, "build", lambda self: Closed())
    a = window.attention
    a.canvas.setFocus()
    for key in (QtCore.Qt.Key.Key_Down, QtCore.Qt.Key.Key_Down, QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Right):
        QTest.keyClick(a.canvas, key)
    before = a.hover.text()
    QTest.keyClick(a.canvas, QtCore.Qt.Key.Key_F10, QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert len(opened) == 1
    assert a.focus.cell_at(a.canvas.mapToScene(a.canvas.mapFromGlobal(opened[0]))) == (1, 2)
    assert a.hover.text() == before and "(position 1) → key" in before and all(m.isVisible() for m in a._cell_marks)


def test_the_note_under_the_translation_is_framed_while_it_has_the_keyboard(qtbot, window):
    """Tab stopped on the note itself with nothing to see, then went on to its [more] link (QA as a teacher)."""
    from visualizer.panels.widgets import FocusMark
    notice = window.inputs.notice
    mark = notice.findChild(FocusMark)
    window.inputs.sentence.setText("zzz qqq")                     # words outside the vocabulary: a note
    qtbot.waitUntil(lambda: notice.isVisible() and notice.text() != "", timeout=20000)
    notice.setFocus(QtCore.Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(notice.hasFocus)
    assert mark is not None and mark.isVisible() and mark.geometry() == notice.rect()
    window.inputs.sentence.setFocus()
    qtbot.waitUntil(lambda: not mark.isVisible())


def test_the_notes_under_the_translation_and_a_failed_run_are_announced(qtbot, window, monkeypatch):
    """A note under the translation (the text looks like French, the sentence is empty…) and a failed run's note
    were shown to the eye alone (QA, a screen reader's user): each new note is said, once, after the translation."""
    heard = []
    monkeypatch.setattr(accessible, "announce", lambda widget, text: heard.append(accessible.plain(text)))
    window.inputs.sentence.setText("   ")
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "   " and not window.runs.runner.busy)
    qtbot.waitUntil(lambda: any(h.startswith("Note: ") for h in heard))
    notes = [h for h in heard if h.startswith("Note: ")]
    assert notes == [f"Note: {' '.join(window._notes)}"] and "no sentence is typed" in notes[0]
    assert heard.index(notes[0]) > max(i for i, h in enumerate(heard) if h.startswith("Translation:"))
    window.resize(window.width() - 40, window.height())          # laid out again: nothing new to say
    qtbot.wait(50)
    assert [h for h in heard if h.startswith("Note: ")] == notes
    window._on_failure("the model ran out of memory at <unk>")         # a token in it is said, not taken as a tag
    qtbot.waitUntil(lambda: heard[-1].startswith("Note: Could not run the model on this input (the model ran out"))
    assert "at <unk>)" in heard[-1]


def test_a_plot_the_keyboard_moves_to_is_scrolled_into_view(qtbot, window):
    """Shift+Tab put the LayerNorm panel's β plot 900 pixels below its dock's edge, and Tab left the focus frames of
    five plots cut at the window's bottom (QA, a keyboard user): the plot with the keyboard is scrolled into view,
    in the panel's grid and in its dock."""
    window.resize(1400, 900)
    window.docking.go_to("layernorm")
    panel = window.panels["layernorm"]
    qtbot.waitUntil(lambda: panel.isVisible())
    plots = [w for w, _ in panel.grid.items if w.focusPolicy() & QtCore.Qt.FocusPolicy.TabFocus and w.isVisible()]
    last = plots[-1]
    dock = window.docks["layernorm"]

    def seen(widget) -> bool:             # inside the dock: wholly, or from its top where taller than the grid
        rect = QtCore.QRect(widget.mapTo(dock, QtCore.QPoint(0, 0)), widget.size()).adjusted(0, 0, -1, -1)
        room = QtCore.QRect(panel.grid.viewport().mapTo(dock, QtCore.QPoint(0, 0)), panel.grid.viewport().size())
        return room.contains(rect) or (rect.height() > room.height() - 16 and room.contains(rect.topLeft()))
    assert not seen(last)                          # below the dock's edge, as it is laid out
    last.setFocus(QtCore.Qt.FocusReason.BacktabFocusReason)
    qtbot.waitUntil(lambda: seen(last))
    plots[0].setFocus(QtCore.Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: seen(plots[0]))
    # the window given the keyboard back (Alt+Tab: from no widget of the app) leaves where the user scrolled to
    # (a review: it scrolled back to the plot with the keyboard)
    from visualizer.panels.widgets import FocusInView
    mover = window.findChild(FocusInView)
    panel.grid.verticalScrollBar().setValue(0)
    mover._moved(None, last)
    assert panel.grid.verticalScrollBar().value() == 0 and not seen(last)
    dock.setFloating(True)                         # a floated dock is a window of its own: Tab there too
    qtbot.wait(50)
    mover._moved(plots[0], last)
    assert panel.grid.verticalScrollBar().value() > 0
    dock.setFloating(False)
