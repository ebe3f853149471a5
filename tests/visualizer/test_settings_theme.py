"""Settings persist through QSettings files and survive bad values; themes apply."""
from __future__ import annotations

import pytest

from PySide6 import QtCore, QtGui, QtWidgets

from visualizer.settings import DEFAULTS, Settings
from visualizer.theme import THEMES, apply_theme


def test_settings_round_trip_and_bad_values(tmp_path, qapp):
    path = str(tmp_path / "settings.ini")
    s = Settings(QtCore.QSettings(path, QtCore.QSettings.Format.IniFormat))
    assert s.get("theme") == "light" and s.get("font_size") == 11.0
    s.set("theme", "high-contrast")
    s.set("font_size", 20)
    s.set("colour_scale", "one")
    s.sync()
    t = Settings(QtCore.QSettings(path, QtCore.QSettings.Format.IniFormat))
    assert t.get("theme") == "high-contrast" and t.get("font_size") == 20.0 and t.get("colour_scale") == "one"
    t.set("theme", "purple")
    t.set("font_size", "huge")
    assert t.get("theme") == "light" and t.get("font_size") == 11.0


def test_apply_theme_sets_palette_and_font(qapp):
    theme = apply_theme(qapp, "dark", point_size=18)
    role = qapp.palette().color(qapp.palette().ColorRole.Window).name()
    assert role == THEMES["dark"].window and theme.name == "dark"
    assert qapp.font().pointSizeF() == 18
    apply_theme(qapp, "light", point_size=10)


def test_plots_are_black_on_white_even_without_a_theme(qapp):
    """Panels built by a script that never called apply_theme (pyqtgraph's default: black) still draw figures."""
    import pyqtgraph as pg
    from visualizer.plotting.plot_box import PlotBox

    before = pg.getConfigOption("background"), pg.getConfigOption("foreground")
    pg.setConfigOptions(background="k", foreground="d")
    try:
        box = PlotBox("title", left="y", bottom="x")
        assert box.backgroundBrush().color().name() == "#ffffff"
        assert box.item.getAxis("left").pen().color().name() == "#000000"
    finally:
        pg.setConfigOptions(background=before[0], foreground=before[1])


def test_a_check_box_can_be_seen_in_the_high_contrast_theme(qapp, qtbot):
    """On black, Fusion drew the box's frame black: its pixels are read back here, unchecked and checked."""

    def colours(box) -> set[tuple[int, int, int]]:
        image = box.grab().toImage()
        h = image.height()
        return {image.pixelColor(x, y).getRgb()[:3] for x in range(min(h + 4, image.width())) for y in range(h)}

    for name in ("high-contrast", "light", "high-contrast", "high-contrast"):   # as presentation mode toggles
        apply_theme(qapp, name, point_size=14)
    try:
        box = QtWidgets.QCheckBox("Mean over heads")
        qtbot.addWidget(box)
        box.resize(box.sizeHint())
        box.setText("")                                  # only the indicator: no white text to mistake for it
        unchecked = colours(box)
        assert any(min(c) > 230 for c in unchecked)      # a white frame
        box.setChecked(True)
        checked = colours(box)
        yellow = [c for c in checked if c[0] > 230 and c[1] > 180 and c[2] < 60]
        assert yellow and not any(c[0] > 230 and c[1] > 180 and c[2] < 60 for c in unchecked)
    finally:
        apply_theme(qapp, "light", point_size=10)
    assert not qapp.style().frames                      # the light theme keeps Fusion's own boxes


@pytest.mark.parametrize("theme", ["dark", "high-contrast"])
def test_radio_buttons_and_unchecked_boxes_show_on_the_dark_themes(qapp, qtbot, theme):
    """The dark theme's unchecked box was #1e1e1e on #2b2b2b (1.2:1) and the high-contrast unselected radio button
    had no indicator at all: both are drawn in the text colour."""
    apply_theme(qapp, theme, point_size=12)
    try:
        for box in (QtWidgets.QCheckBox(), QtWidgets.QRadioButton()):
            qtbot.addWidget(box)
            box.resize(box.sizeHint())
            image = box.grab().toImage()
            light = max(image.pixelColor(x, y).lightness() for x in range(image.width()) for y in range(image.height()))
            assert light > 180, (theme, type(box).__name__, light)
    finally:
        apply_theme(qapp, "light", point_size=10)


@pytest.mark.parametrize("theme", ["dark", "high-contrast"])
def test_a_checked_box_of_the_dark_themes_has_a_tick_on_its_fill(qapp, qtbot, theme):
    """QA: a ticked box was a plain square of the highlight colour; its tick is drawn in the fields' colour."""
    apply_theme(qapp, theme, point_size=14)
    try:
        box = QtWidgets.QCheckBox()
        qtbot.addWidget(box)
        box.resize(box.sizeHint())
        box.setChecked(True)
        image = box.grab().toImage()
        base, highlight = QtGui.QColor(THEMES[theme].base), QtGui.QColor(THEMES[theme].highlight)

        def near(c, target):
            return abs(c.red() - target.red()) + abs(c.green() - target.green()) + abs(c.blue() - target.blue()) < 40
        # the indicator's inside: its frame's 3 pixels in from each side
        size = min(image.width(), image.height())
        inside = [image.pixelColor(x, y) for x in range(4, size - 4) for y in range(4, size - 4)]
        ticked = sum(near(c, base) for c in inside)
        filled = sum(near(c, highlight) for c in inside)
        assert filled > len(inside) * 0.3 and ticked > len(inside) * 0.1, (theme, filled, ticked, len(inside))
    finally:
        apply_theme(qapp, "light", point_size=10)


@pytest.mark.parametrize("theme", ["light", "dark", "high-contrast"])
def test_the_field_with_the_keyboard_has_a_thick_frame_in_the_highlight_colour(qapp, qtbot, theme):
    """Focus was a 1-pixel blue line, and on a high-contrast drop-down list nothing at all (QA, keyboard only)."""
    from visualizer.theme import THEMES
    apply_theme(qapp, theme, point_size=12)
    try:
        highlight = QtGui.QColor(THEMES[theme].highlight)
        for field in (QtWidgets.QLineEdit(), QtWidgets.QComboBox(), QtWidgets.QSpinBox()):
            qtbot.addWidget(field)
            field.resize(200, field.sizeHint().height())
            field.show()
            field.setFocus()
            qtbot.waitUntil(field.hasFocus)
            image = field.grab().toImage()
            row = image.height() // 2
            edge = [image.pixelColor(x, row) for x in range(4)]
            assert any(abs(c.red() - highlight.red()) + abs(c.green() - highlight.green())
                       + abs(c.blue() - highlight.blue()) < 60 for c in edge), (theme, type(field).__name__)
            field.hide()
    finally:
        apply_theme(qapp, "light", point_size=10)


def test_text_fields_and_spin_boxes_have_a_frame_on_black(qapp, qtbot):
    """The sentence and target fields and the layer and head boxes read as plain text in the high-contrast theme:
    Fusion drew their frames black on black. The left edge's middle pixels are read back."""
    apply_theme(qapp, "high-contrast", point_size=14)
    try:
        for field in (QtWidgets.QLineEdit(), QtWidgets.QSpinBox(), QtWidgets.QComboBox()):
            qtbot.addWidget(field)
            field.resize(200, field.sizeHint().height())
            image = field.grab().toImage()
            edge = [image.pixelColor(x, image.height() // 2).lightness() for x in range(3)]
            assert max(edge) > 120, (type(field).__name__, edge)
    finally:
        apply_theme(qapp, "light", point_size=10)


@pytest.mark.parametrize("name", ["light", "dark", "high-contrast"])
def test_a_disabled_control_reads_dimmer_but_still_readable(qapp, name):
    """The palette set each colour for every group: a disabled beam width (greedy decoding) or decoding method (a
    masked-word model) looked exactly like an enabled one."""
    from PySide6 import QtGui
    from visualizer.theme import THEMES, palette

    p = palette(THEMES[name])
    group, role = QtGui.QPalette.ColorGroup, QtGui.QPalette.ColorRole
    for r in (role.Text, role.WindowText, role.ButtonText):
        off, on = p.color(group.Disabled, r), p.color(group.Active, r)
        assert off != on
        assert contrast(off, p.color(group.Active, role.Base)) >= 3.0      # readable against the field it sits in


def contrast(one, other) -> float:
    """WCAG's contrast ratio of two colours (QColor or "#rrggbb"): 1 to 21."""
    from PySide6 import QtGui

    def luminance(c) -> float:
        c = QtGui.QColor(c)

        def lin(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())
    a, b = sorted((luminance(one), luminance(other)))
    return (b + 0.05) / (a + 0.05)


@pytest.mark.parametrize("name", ["light", "dark", "high-contrast"])
def test_warning_and_alert_text_reads_at_the_wcag_aa_contrast_on_every_theme(qapp, name):
    """The light theme's orange notes ("The model repeats itself …") were 4.39:1 on its window, under the 4.5:1
    of WCAG AA (QA as a low-vision teacher); the orange that marks rare words on a plot's white, likewise."""
    from visualizer.panels.widgets import TONES, tone_colour
    from visualizer.plotting.colormaps import MARKED
    from visualizer.theme import PLOT_BACKGROUND, THEMES
    try:
        apply_theme(qapp, name)
        theme = THEMES[name]
        for tone in TONES:
            assert min(contrast(tone_colour(tone), theme.window), contrast(tone_colour(tone), theme.base)) >= 4.5
    finally:
        apply_theme(qapp, "light", point_size=10)
    assert contrast(MARKED, {"w": "#ffffff"}.get(PLOT_BACKGROUND, PLOT_BACKGROUND)) >= 4.5


def test_a_damaged_saved_layout_is_a_notice_not_a_qt_warning(tmp_path, qapp, qtlog):
    """Garbage in the settings file's window state made Qt print "QVariant::load: unknown user type" at start:
    the layout reads as not saved, with the app's own notice, and the damaged keys are removed."""
    path = tmp_path / "settings.ini"
    path.write_text("[General]\ngeometry=@ByteArray(garbage)\n"
                    "window_state=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x7fjunk)\n", encoding="utf-8")
    s = Settings(QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    assert s.get("theme") == "light"                # Qt decodes the whole file at the first read
    assert s.layout() == (None, None)
    assert s.notices == ["the saved window layout could not be read; the default layout is used"]
    assert not [r for r in qtlog.records if "QVariant" in r.message]
    assert s.q.value("geometry") is None and s.q.value("window_state") is None
    good = Settings(QtCore.QSettings(str(tmp_path / "good.ini"), QtCore.QSettings.Format.IniFormat))
    good.save_layout(QtCore.QByteArray(b"g"), QtCore.QByteArray(b"s"))
    assert good.layout() == (QtCore.QByteArray(b"g"), QtCore.QByteArray(b"s")) and not good.notices


def test_a_damaged_value_of_another_setting_leaves_the_saved_layout_alone(tmp_path, qtlog):
    """Qt decodes the whole file at the first read: a damaged metrics_hidden had thrown the intact layout away,
    with a notice blaming the layout (QA). The damaged setting is named and removed; the layout stays."""
    path = tmp_path / "settings.ini"
    good = Settings(QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    good.save_layout(QtCore.QByteArray(b"geometry"), QtCore.QByteArray(b"state"))
    good.sync()
    with path.open("a", encoding="utf-8") as f:
        f.write("metrics_hidden=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18)\n")
    s = Settings(QtCore.QSettings(str(path), QtCore.QSettings.Format.IniFormat))
    assert s.layout() == (QtCore.QByteArray(b"geometry"), QtCore.QByteArray(b"state")) and s.notices == []
    assert s.get("metrics_hidden") == DEFAULTS["metrics_hidden"]
    default = DEFAULTS["metrics_hidden"]
    assert s.notices == [f"setting metrics_hidden: None is not text; the default {default!r} is used"]
    assert not [r for r in qtlog.records if "QVariant" in r.message]


def test_the_toolbars_more_button_is_drawn_in_the_themes_text_colour(qtbot, window):
    """QA: at a class's text size ◀ Step and Step ▶ went behind the toolbar's "»" button, a dark grey speck on the
    high-contrast theme's black; it is the theme's text colour, wide as a line of text, after a change of theme too."""
    button = window.menus.nav_toolbar.findChild(QtWidgets.QToolButton, "qt_toolbar_ext_button")
    app = QtWidgets.QApplication.instance()
    try:
        for name in ("high-contrast", "light"):
            apply_theme(app, name)
            image = button.icon().pixmap(48, 48).toImage()
            drawn = {QtGui.QColor(image.pixel(x, y)).name() for x in range(48) for y in range(48)
                     if QtGui.QColor(image.pixelColor(x, y)).alpha() == 255}
            assert drawn == {QtGui.QColor(THEMES[name].text).name()}
            assert window.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_ToolBarExtensionExtent) >= \
                QtGui.QFontMetrics(app.font()).height()
    finally:
        apply_theme(app, "light")


def test_a_settings_folder_that_cannot_be_written_is_said_at_the_start(tmp_path):
    """A read-only home: Quit lost the session and the settings without a word (QA)."""
    from visualizer.settings import Settings
    good = Settings(QtCore.QSettings(str(tmp_path / "ok" / "settings.ini"), QtCore.QSettings.Format.IniFormat))
    assert good.cannot_keep() is None and (tmp_path / "ok").is_dir()
    (tmp_path / "file").write_text("not a folder")
    bad = Settings(QtCore.QSettings(str(tmp_path / "file" / "cfg" / "settings.ini"),
                                    QtCore.QSettings.Format.IniFormat))
    said = bad.cannot_keep()
    assert said is not None and said.startswith(str(tmp_path / "file" / "cfg"))
    assert said.endswith("the settings and the session will not be kept")


@pytest.mark.parametrize("theme", ["light", "dark", "high-contrast"])
def test_a_button_or_check_box_with_the_keyboard_is_framed_in_the_highlight_colour(qapp, qtbot, theme):
    """On a projector in the dark themes a focused check box was a faint fill and a button a 1-pixel line: the
    teacher could not see where the keyboard was (QA). They get the fields' frame."""
    from visualizer.theme import THEMES
    apply_theme(qapp, theme, point_size=12)
    try:
        highlight = QtGui.QColor(THEMES[theme].highlight)

        def framed(widget) -> int:
            image = widget.grab().toImage()
            return sum(abs(c.red() - highlight.red()) + abs(c.green() - highlight.green())
                       + abs(c.blue() - highlight.blue()) < 60
                       for c in (image.pixelColor(x, y) for x in range(image.width()) for y in range(image.height())))
        tool = QtWidgets.QToolButton()
        tool.setText("Colours")
        tabs = QtWidgets.QTabBar()                       # a dock's tabs (its focus had been a faint fill: QA)
        for text in ("LayerNorm", "Math"):
            tabs.addTab(text)
        for widget in (QtWidgets.QCheckBox("Positional encoding"), QtWidgets.QPushButton("Measure head effects"), tool,
                       tabs):
            qtbot.addWidget(widget)
            widget.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
            widget.show()
            widget.clearFocus()
            before = framed(widget)
            widget.setFocus()
            qtbot.waitUntil(widget.hasFocus)
            # a frame around it: some two pixels deep along its text's length
            text = widget.tabText(0) if isinstance(widget, QtWidgets.QTabBar) else widget.text()
            assert framed(widget) - before > widget.fontMetrics().horizontalAdvance(text), \
                (theme, type(widget).__name__)
            widget.hide()
    finally:
        apply_theme(qapp, "light", point_size=10)


def test_a_docks_buttons_follow_the_theme_chosen_after_it_was_made(qtbot, window):
    """The docks' float and close buttons kept the icons of the theme they were made in: dark grey on black once a
    class switched to the high-contrast theme (QA as a teacher)."""
    def lightest(button) -> int:
        image = button.icon().pixmap(32, 32).toImage()
        return max((image.pixelColor(x, y).lightness() for x in range(image.width()) for y in range(image.height())
                    if image.pixelColor(x, y).alpha() > 200), default=0)
    dock = window.docks["output"]
    buttons = [dock.findChild(QtWidgets.QAbstractButton, name)
               for name in ("qt_dockwidget_closebutton", "qt_dockwidget_floatbutton")]
    try:
        window.presentation.set_theme("high-contrast", remember=False)
        assert all(lightest(b) > 200 for b in buttons)
    finally:
        window.presentation.set_theme("light", remember=False)
    assert all(lightest(b) < 150 for b in buttons)
