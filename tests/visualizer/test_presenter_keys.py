"""The keys a teacher presses in class (a presenter remote's F5 and Esc, Ctrl+=, Return on a button, the arrow keys
on the Model box), found by a QA pass as a teacher on a projector with the keyboard only."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

Key, Mod = QtCore.Qt.Key, QtCore.Qt.KeyboardModifier


def settle(n: int = 3) -> None:
    for _ in range(n):
        QtWidgets.QApplication.processEvents()


def test_f5_enters_presentation_mode_and_esc_leaves_it(qtbot, window):
    window.inputs.sentence.setFocus()
    qtbot.keyClick(window.inputs.sentence, Key.Key_Escape)          # outside presentation mode: nothing
    assert not window.presentation.active
    qtbot.keyClick(window.inputs.sentence, Key.Key_F5)
    try:
        assert window.presentation.active and window.menus.present.isChecked()
        settle()
        qtbot.keyClick(window.inputs.sentence, Key.Key_Escape)
        assert not window.presentation.active and not window.menus.present.isChecked()
    finally:
        if window.presentation.active:
            window.toggle_presentation()
    settle()


def test_a_given_target_stays_in_view_in_presentation_mode(qtbot, window):
    """Presentation mode hid the Target row, and a target from the last session was forced through the decoder
    unseen: "[given target]" under a sentence it did not translate."""
    inputs = window.inputs
    window.toggle_presentation()
    try:
        settle()
        assert inputs.target.isHidden() and inputs.method.isHidden()            # no target: tucked away
        inputs.target.setText("le chat")                                       # (a session opened in class)
        assert not inputs.target.isHidden() and not inputs.target_label.isHidden() and inputs.method.isHidden()
        inputs.target.clear()
        assert not inputs.target.isHidden()                  # not hidden under the keyboard as it is cleared
    finally:
        window.toggle_presentation()
    settle()
    window.toggle_presentation()
    try:
        settle()
        assert inputs.target.isHidden()                       # empty when the class began
    finally:
        window.toggle_presentation()
    settle()
    assert not inputs.target.isHidden() and not inputs.method.isHidden()


def test_presentation_mode_keeps_the_theme_asked_for(qtbot, window):
    window.toggle_presentation("dark")
    try:
        assert window.presentation.theme == "dark" and window.menus.theme_actions["dark"].isChecked()
    finally:
        window.toggle_presentation()
    settle()
    window.toggle_presentation()
    try:
        assert window.presentation.theme == "high-contrast"
    finally:
        window.toggle_presentation()
    settle()


def test_an_alt_letter_that_is_no_shortcut_types_nothing(qtbot, window):
    """Alt+G (the Target's key) typed "g" into the sentence while presentation mode hid the Target."""
    field = window.inputs.sentence
    field.setFocus()
    field.setText("the park")
    for key in (Key.Key_Q, Key.Key_Z):
        qtbot.keyClick(field, key, Mod.AltModifier)
    assert field.text() == "the park"
    qtbot.keyClick(field, Key.Key_S)
    assert field.text() == "the parks"                     # typing is the field's still


def test_ctrl_equals_makes_the_text_larger(qtbot, window):
    size = QtWidgets.QApplication.font().pointSizeF()
    qtbot.keyClick(window.inputs.sentence, Key.Key_Equal, Mod.ControlModifier)
    try:
        assert QtWidgets.QApplication.font().pointSizeF() == size + 2
    finally:
        window.presentation.zoom(-1)
    settle()


def test_return_on_a_focused_button_presses_it(qtbot, window):
    window.docks["metrics"].raise_()
    qtbot.waitUntil(lambda: "metrics" in window.panels)
    button = next(b for b in window.panels["metrics"].findChildren(QtWidgets.QPushButton) if b.isEnabled())
    pressed = []
    button.clicked.connect(lambda: pressed.append(True))
    button.setFocus()
    qtbot.waitUntil(button.hasFocus)
    qtbot.keyClick(button, Key.Key_Return)
    qtbot.waitUntil(lambda: pressed == [True], timeout=2000)


def test_the_arrow_keys_and_the_wheel_on_the_model_box_open_its_list_and_choose_nothing(qtbot, window):
    """Down from en-fr opened the toy seed-example model, then "Open model folder…" and its dialog."""
    box = window.inputs.model
    index, opened = box.currentIndex(), []
    box.activated.connect(opened.append)
    box.setFocus()
    qtbot.keyClick(box, Key.Key_Down)
    try:
        assert box.view().isVisible() and box.currentIndex() == index
    finally:
        box.hidePopup()
    QtWidgets.QApplication.sendEvent(box, wheel_down(box))
    assert box.currentIndex() == index and opened == []


def wheel_down(widget) -> QtGui.QWheelEvent:
    centre = QtCore.QPointF(widget.rect().center())
    return QtGui.QWheelEvent(centre, widget.mapToGlobal(centre), QtCore.QPoint(0, 0), QtCore.QPoint(0, -120),
                             QtCore.Qt.MouseButton.NoButton, Mod.NoModifier, QtCore.Qt.ScrollPhase.NoScrollPhase, False)


def test_b_and_w_blank_the_screen_in_presentation_mode_and_any_key_brings_it_back(qtbot, window):
    """A remote's "blank" button sends B (or "."): it typed "b" into the sentence, which translated again. In
    presentation mode the keyboard leaves the sentence for the heatmap, and B or W blanks the whole window."""
    field, canvas, blank = window.inputs.sentence, window.attention.canvas, window.menus.blank
    field.setFocus()
    qtbot.keyClick(canvas, Key.Key_B)                       # outside presentation mode: nothing
    assert not blank.isVisible()
    text = field.text()
    window.toggle_presentation()
    try:
        settle()
        assert QtWidgets.QApplication.focusWidget() is canvas
        for key, colour in ((Key.Key_B, (0, 0, 0)), (Key.Key_Period, (0, 0, 0)), (Key.Key_W, (255, 255, 255))):
            qtbot.keyClick(canvas, key)
            assert blank.isVisible() and blank.geometry() == window.rect()
            picture = window.grab().toImage()               # the whole window, menus and docks, in one colour
            for x, y in ((2, 2), (picture.width() // 2, picture.height() // 2), (picture.width() - 3, 40)):
                assert picture.pixelColor(x, y).getRgb()[:3] == colour
            qtbot.keyClick(blank, Key.Key_Escape)           # any key brings the view back, and does nothing else
            assert not blank.isVisible() and window.presentation.active
            assert QtWidgets.QApplication.focusWidget() is canvas
        field.setFocus()
        qtbot.keyClick(field, Key.Key_B)                    # typing in the sentence stays typing
        assert field.text() == text + "b" and not blank.isVisible()
        field.setText(text)
        qtbot.keyClick(canvas, Key.Key_B)
        assert blank.isVisible()
    finally:
        window.toggle_presentation()
    settle()
    assert not blank.isVisible()                            # leaving presentation mode ends the blank screen
    assert not any(act.isEnabled() for act in window.menus.blank_actions.values())


def test_started_in_presentation_mode_the_keyboard_is_on_the_heatmap(qtbot, tiny_model_dir, settings):
    """`--presentation` enters the mode before the window is shown: the keyboard went to the sentence when it was,
    and the remote's B typed "bThe cat sat on the mat." (QA as a teacher on HiDPI)."""
    from visualizer.window import MainWindow
    w = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings)
    qtbot.addWidget(w)
    w.toggle_presentation()                                   # as cli.app_main does, before any show
    try:
        w.activateWindow()
        qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is not None, timeout=5000)
        assert QtWidgets.QApplication.focusWidget() is w.attention.canvas
        qtbot.waitUntil(lambda: w.trace is not None and not w.runs.runner.busy, timeout=20000)
        qtbot.keyClick(w.attention.canvas, Key.Key_B)
        assert w.menus.blank.isVisible() and w.inputs.sentence.text() == "the cat sat on the mat"
    finally:
        w.toggle_presentation()
        w.runs.runner.wait(10000)
    settle()


def test_the_blank_keys_pass_the_layer_and_head_boxes_and_hide_a_floating_dock(qtbot, window):
    """QA: with the Layer box clicked in class, B did nothing (the box took it as typing); a dock floated off the
    window stayed over the black screen."""
    box, blank, dock = window.attention.layer, window.menus.blank, window.docks["output"]
    box.setFocus()
    qtbot.keyClick(box, Key.Key_B)                                 # outside presentation mode: the box's
    assert not blank.isVisible()
    window.toggle_presentation()
    try:
        settle()
        dock.setFloating(True)
        dock.show()
        window.activateWindow()                                    # (the floated dock took the activation)
        qtbot.waitUntil(window.isActiveWindow)
        box.setFocus()
        qtbot.waitUntil(box.hasFocus)
        qtbot.keyClick(box, Key.Key_B)
        assert blank.isVisible() and dock.isHidden()
        qtbot.keyClick(blank, Key.Key_Space)
        assert not blank.isVisible() and dock.isVisible() and dock.isFloating()
    finally:
        dock.setFloating(False)
        window.toggle_presentation()
    settle()
