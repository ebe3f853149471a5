from __future__ import annotations

import pytest
from PySide6 import QtCore


@pytest.fixture(autouse=True)
def collect_between_tests():
    """Python's automatic garbage collection off during each test, and a collection after it, once its windows are
    closed (this fixture is set up before qtbot, so torn down after it): a collection triggered inside a Qt call
    destroyed a closed window's QMenu while Qt held the signal-slot mutex its destruction waits for, and the next
    test's window waited for ever (twice in a full run, under load). The app collects from its event loop instead
    (visualizer/collector.py)."""
    import gc
    was = gc.isenabled()
    gc.disable()
    yield
    gc.collect()
    if was:
        gc.enable()


@pytest.fixture
def settings(tmp_path_factory):
    """Preferences in a throw-away file, never the user's own; in a folder of its own, apart from the files a
    test writes into tmp_path (a dialog remembers its folder in the settings)."""
    from visualizer.settings import Settings
    folder = tmp_path_factory.mktemp("config")
    return Settings(QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot, tiny_model_dir, settings):
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
