from __future__ import annotations

import pytest
from PySide6 import QtCore


@pytest.fixture
def settings(tmp_path_factory):
    """Preferences in a throw-away file, never the user's own; in a folder of its own, apart from the files a
    test writes into tmp_path (a dialog remembers its folder in the settings)."""
    from visualizer.settings import Settings
    folder = tmp_path_factory.mktemp("config")
    return Settings(QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot, tiny_model_dir, settings):
    """The window on the tiny model, showing "the cat sat on the mat". Earlier tests' closed windows are destroyed
    (pytest-qt's deleteLater) and their Python garbage collected first, at this safe point: a collection triggered
    inside a Qt call (QObject::disconnect looking up a Python override under its signal-slot lock) destroyed one's
    QMenu, whose destruction waited on that lock for ever, and this fixture's wait hung (twice in full runs under
    load; the app collects from its event loop instead, with pyqtgraph's GarbageCollector: see visualizer/cli.py).
    Collected before the deletions, the wrappers took their Qt objects with them in any order, and a run crashed."""
    import gc

    from PySide6 import QtWidgets
    QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    gc.collect()
    from visualizer.window import MainWindow
    w = MainWindow(model=str(tiny_model_dir), sentence="the cat sat on the mat", settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy, timeout=20000)
    yield w
    w.runs.runner.wait(10000)


@pytest.fixture(scope="module")
def trace(tiny_lm):
    """The tiny model's trace of "the cat sat on the mat" (greedy), run as the window and the commands run it (on
    one torch thread: the floats of another count differ in the last digits); a test module may define its own."""
    from model import translate
    from model.threads import one_torch_thread
    one_torch_thread()
    return translate(tiny_lm, "the cat sat on the mat").trace


@pytest.fixture
def shown_panel(qtbot):
    """shown_panel(PanelClass, width, height): a panel that takes the view state, built with a blank one and shown
    at that size; show_trace renders a trace in it."""
    from visualizer.state import ViewState

    def build(panel_class, width: int, height: int):
        panel = panel_class(ViewState())
        qtbot.addWidget(panel)
        panel.resize(width, height)
        panel.show()
        return panel
    return build


def _show_trace(panel, trace, **view):
    """Render trace in panel as the window would, with a state fitted to the trace at the given view; the state."""
    from visualizer.plotting.scenes import settle_scenes
    from visualizer.state import ViewState
    panel.state = ViewState.for_trace(trace, **view)
    panel.render(trace, panel.state)
    settle_scenes(panel)
    return panel.state


@pytest.fixture
def show_trace():
    """show_trace(panel, trace, **view) -> the ViewState the panel now shows trace with."""
    return _show_trace
