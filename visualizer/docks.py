"""The panels (built from panels/registry.py) and the docks that hold them: where each sits, their sizes, the tab
that follows the stage, the layout kept between starts, and drawing each panel when what it shows changed and it
can be seen."""
from __future__ import annotations

import sys

from PySide6 import QtCore, QtWidgets

from model.schema import OUTPUT

from .column_widths import ColumnWidths
from .plotting.scenes import settle_scenes
from .panels.registry import PANELS, build



def stage_dock(state) -> str | None:
    """The dock that shows the stage in view best: the embeddings for an embedding, the norm panel in a layer, the
    output distribution at the output; raised (when it sits behind a tab) as the view moves there."""
    schema = state.schema
    if schema is None:
        return None
    if state.stack == OUTPUT:
        return "output"
    return "layernorm" if schema.is_layer_stage(state.stage) else "embeddings"


ROOMY = {entry.name for entry in PANELS if entry.roomy}
ROOM = 0.6                 # of its column's height, for a roomy panel gone to
SLACK = 8                  # pixels

AREAS = {"left": QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, "right": QtCore.Qt.DockWidgetArea.RightDockWidgetArea,
         "right-top": QtCore.Qt.DockWidgetArea.RightDockWidgetArea}


class Panels(dict):
    """name -> panel. A lazy panel (see panels/registry.py) is built the first time it is asked for by name
    (panels[name]); iterating, `in` and get() see only the panels built so far."""

    def __init__(self, build_missing):
        super().__init__()
        self._build_missing = build_missing

    def __missing__(self, name: str):
        return self._build_missing(name)


class Docks:
    """window.panels and window.docks (name -> panel, name -> QDockWidget) and what is done with them."""

    def __init__(self, window, state):
        self.window, self.state = window, state
        self.panels: dict[str, QtWidgets.QWidget] = Panels(self._build_lazy)
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        self._keys: dict[str, object] = {}        # name -> the view_key each panel was last drawn with
        self._lazy = {entry.name: entry for entry in PANELS if entry.lazy}     # not built yet
        self._calls: dict[str, tuple] = {}        # the last set_vocab / set_model, for panels built later
        self.alone_state = None                   # the layout before View ▸ Heatmap alone (None: not alone)
        self._when_built: dict[str, list] = {}    # name -> what to do with a lazy panel once it is built
        for entry in PANELS:
            if entry.lazy:
                continue
            try:
                panel = build(entry, state)
            except Exception as e:  # a broken panel must not take the window down with it
                if not entry.optional:
                    raise
                why = (str(e).splitlines() or [""])[0]
                print(f"note: the {entry.title} panel is unavailable ({type(e).__name__}: {why})", file=sys.stderr)
                continue
            self.panels[entry.name] = panel
        self.sized = False                        # dock sizes are set once the window is first shown
        self.default_layout: QtCore.QByteArray | None = None
        self.restored = False                     # the user's layout came back (then sizes are left as they are)

    def dock(self) -> None:
        """Put the panels in their docks; after the central widget, which comes first in the focus chain (the
        sentence field has the focus when the window opens)."""
        window, state = self.window, self.state
        for entry in PANELS:
            if entry.place in AREAS and (entry.name in self.panels or entry.name in self._lazy):
                self._add_dock(entry, self.panels.get(entry.name))
        # right column: the output distribution on top (always in view while stepping through the decoder),
        # below it one tab group whose tab follows the stage (embeddings, LayerNorm) unless the user picks another
        top = [self.docks[e.name] for e in PANELS if e.place == "right-top" and e.name in self.docks]
        below = [self.docks[e.name] for e in PANELS if e.place == "right" and e.name in self.docks]
        if top and below:
            window.splitDockWidget(top[0], below[0], QtCore.Qt.Orientation.Vertical)
        for d in below[1:]:
            window.tabifyDockWidget(below[0], d)
        if below:
            below[0].raise_()
        window.setTabPosition(QtCore.Qt.DockWidgetArea.AllDockWidgetAreas, QtWidgets.QTabWidget.TabPosition.North)
        self._stage_dock = stage_dock(state)
        window.tabifiedDockWidgetActivated.connect(lambda _: self.readable_tabs())
        self.widths = ColumnWidths(window, self.docks)

    def _add_dock(self, entry, panel: QtWidgets.QWidget | None) -> None:
        """A dock for the panel; a lazy panel's dock holds an empty widget until its tab is first shown."""
        dock = QtWidgets.QDockWidget(entry.title, self.window)
        dock.setObjectName(f"dock-{entry.name}")
        dock.setWidget(self._holder(entry, panel) if panel is not None else QtWidgets.QWidget())
        dock.visibilityChanged.connect(lambda visible, n=entry.name: visible and self._shown(n))
        self.window.addDockWidget(AREAS[entry.place], dock)
        self.docks[entry.name] = dock

    @staticmethod
    def _holder(entry, panel: QtWidgets.QWidget) -> QtWidgets.QWidget:
        if not entry.scrolls:
            return panel
        # a scroll area lets the window shrink below a panel's own minimum (small projectors, big fonts)
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        scroll.setWidget(panel)
        scroll.setMinimumSize(160, 120)
        # no Tab stop of its own (a screen reader's nameless "pane"): Tab goes to the panel's controls and plots,
        # which the scroll area scrolls into view
        scroll.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        scroll.setAccessibleName(f"{entry.title} panel")
        return scroll

    def _shown(self, name: str) -> None:
        """A dock came into view: build its panel if it is a lazy one, and draw it."""
        if name in self._lazy:
            try:
                self.panels[name]
            except KeyError:
                return
        if self.window.trace is not None and name in self.panels:
            self.render(name)

    def _build_lazy(self, name: str) -> QtWidgets.QWidget:
        """Build a lazy panel now: into its dock, with the vocabulary and model the others were given and its
        right-click menus. KeyError for a name that is no panel (or one that failed to build)."""
        entry = self._lazy.pop(name, None)
        if entry is None:
            raise KeyError(name)
        try:
            panel = build(entry, self.state)
        except Exception as e:  # a broken panel must not take the window down with it
            why = (str(e).splitlines() or [""])[0]
            print(f"note: the {entry.title} panel is unavailable ({type(e).__name__}: {why})", file=sys.stderr)
            raise KeyError(name) from None
        dict.__setitem__(self.panels, name, panel)
        for method, args in self._calls.items():
            if hasattr(panel, method):
                getattr(panel, method)(*args)
        from .plot_menu import install_plot_menus
        install_plot_menus(panel, self.window.figure_caption)
        if name in self.docks:
            self.docks[name].setWidget(self._holder(entry, panel))
        for fn in self._when_built.pop(name, []):
            fn(panel)
        return panel

    def when_built(self, name: str, fn) -> None:
        """fn(panel) now if the panel is built, else once it is (a lazy panel: its signals connected then)."""
        if name in self.panels:
            fn(self.panels[name])
        else:
            self._when_built.setdefault(name, []).append(fn)

    # --- drawing ------------------------------------------------------------------------------------
    def render(self, name: str, force: bool = False) -> None:
        """Render one panel, unless what it shows (its view_key) is unchanged since its last render."""
        panel = self.panels[name]
        key = panel.view_key(self.state) if hasattr(panel, "view_key") else None
        if not force and key is not None and self._keys.get(name) == key:
            return
        panel.render(self.window.trace, self.state)
        self._keys[name] = key
        settle_scenes(panel)

    def render_visible(self) -> None:
        """Render every panel that can be seen; hidden and background-tab panels render when they are shown."""
        for name in self.panels:
            dock = self.docks.get(name)
            if dock is not None and self.window.isVisible() and (dock.isHidden() or dock.visibleRegion().isEmpty()):
                continue
            self.render(name)

    def new_run(self) -> None:
        """Every panel shows the new run when it is next visible."""
        self._keys.clear()

    def call(self, method: str, *args) -> None:
        """panel.method(*args) for every panel that has it (set_vocab, set_model); panels built later get it then."""
        self._calls[method] = args
        for panel in self.panels.values():
            if hasattr(panel, method):
                getattr(panel, method)(*args)

    def follow_stage(self, enabled: bool) -> None:
        """Bring the dock that shows the new stage to the front of its tab group, when the stack changed."""
        name = stage_dock(self.state)
        if name == self._stage_dock:
            return
        first, self._stage_dock = self._stage_dock is None, name
        if first and self.restored:      # the start's view: the tabs as the window closed (Math came back behind)
            return
        dock = self.docks.get(name)
        if enabled and dock is not None and not dock.isHidden() and self.window.tabifiedDockWidgets(dock):
            dock.raise_()

    def go_to(self, name: str) -> None:
        """Show a panel and bring it to the front of its tab group (a narrow column hides tabs behind arrows)."""
        dock = self.docks[name]
        dock.show()
        dock.raise_()
        if name in ROOMY:
            self._give_room(dock)
        # its first control that takes the keyboard (the holder itself takes none: the focus stayed where it was,
        # and Space after "Go to panel ▸ Compare runs" did nothing; QA)
        tab = QtCore.Qt.FocusPolicy.TabFocus
        first = next((c for c in dock.widget().findChildren(QtWidgets.QWidget)
                      if c.focusPolicy() & tab == tab and c.isEnabled() and c.isVisibleTo(dock)), dock.widget())
        first.setFocus(QtCore.Qt.FocusReason.ShortcutFocusReason)

    def _give_room(self, dock: QtWidgets.QDockWidget) -> None:
        """A grid or table gone to from the menu takes ROOM of its column's height from the output distribution
        above it, where it has less: the model view's 40 heads were a strip 20 pixels high under the output chart
        at 1024 × 768 in class (QA). A user's own layout (another column, a floating dock) is left as it is."""
        w, top = self.window, self.docks.get("output")
        if (top is None or top is dock or top.isHidden() or top.isFloating() or dock.isFloating()
                or w.dockWidgetArea(top) != w.dockWidgetArea(dock) or top in w.tabifiedDockWidgets(dock)):
            return
        below = max((dock, *w.tabifiedDockWidgets(dock)), key=lambda d: d.height())   # a raised tab's own may lag
        if abs(below.x() - top.x()) > SLACK or below.y() < top.y() + top.height():
            return                                   # not under the output distribution
        total = top.height() + below.height()
        if below.height() < ROOM * total - SLACK:
            w.resizeDocks([top, dock], [total - round(ROOM * total), round(ROOM * total)],
                          QtCore.Qt.Orientation.Vertical)

    # --- sizes and layouts --------------------------------------------------------------------------
    def first_shown(self) -> None:
        if not self.sized:                  # dock sizes only take once the window has its own size
            self.sized = True
            QtCore.QTimer.singleShot(0, self.size_docks)

    def readable_tabs(self) -> None:
        """Dock tabs show their whole title, with scroll arrows when they do not fit, rather than 'La…'."""
        for bar in self.window.findChildren(QtWidgets.QTabBar):
            bar.setElideMode(QtCore.Qt.TextElideMode.ElideNone)
            bar.setUsesScrollButtons(True)

    def size_columns(self) -> None:
        """The side columns at their default shares of the window's width: a sixth and 30% (the map at least 230
        pixels, 18% on a screen under 1280): at 1024 pixels the old floors (230 and 360) left the heatmap's column
        434 pixels. Presentation mode sets them too (see presentation.py)."""
        w = self.window.width()
        right = self.docks.get("output") or self.docks.get("layernorm")
        if right is not None and "architecture" in self.docks:
            self.window.resizeDocks([self.docks["architecture"], right],
                                    [max(w // 6, min(230, int(0.18 * w))), int(0.3 * w)],
                                    QtCore.Qt.Orientation.Horizontal)

    def size_docks(self) -> None:
        self.readable_tabs()
        self.widths.remember_soon()          # the sizes set here, or the user's restored layout
        if self.restored:
            return
        h = self.window.height()
        self.size_columns()
        if "output" in self.docks and "layernorm" in self.docks:
            # a short window (1366x768) gives the output distribution 58% of the column: at 40% its ten bars
            # scrolled, at 50% its axis
            top = 0.58 if h < 1000 else 0.4
            self.window.resizeDocks([self.docks["output"], self.docks["layernorm"]], [int(h * top), int(h * (1 - top))],
                                    QtCore.Qt.Orientation.Vertical)

    def start_layout(self, settings, restore: bool) -> None:
        """Keep the default layout (for Reset layout); restore: docks, toolbar and window geometry as the user left
        them (saved when the window closes)."""
        self.default_layout = self.window.saveState()
        geometry, state = settings.layout() if restore else (None, None)
        if state is None:
            return
        try:
            if geometry is not None:
                self.window.restoreGeometry(geometry)
            self.restored = self.restore_state(state)
        except TypeError:          # a stored value of the wrong type: keep the default layout
            self.restored = False
        if self.restored:          # Math in front at the close came back behind LayerNorm (QA as a teacher)
            self.raise_tabs(n for n in settings.get("front_tabs").split(",") if n)

    def restore_state(self, state) -> bool:
        """QMainWindow.restoreState, then the dock tabs made readable again: the restore builds new tab bars, which
        elided every title to its first letter ("L… E… M…") after presentation mode ended."""
        done = self.window.restoreState(state)
        self.readable_tabs()
        if hasattr(self, "widths"):
            self.widths.remember_soon()
        QtCore.QTimer.singleShot(0, self.window, self._settled)    # tab bars made as the layout settles
        return done

    def _settled(self) -> None:
        self.readable_tabs()
        self.hide_stale_tab_bars()

    def hide_stale_tab_bars(self) -> None:
        """Hide a dock tab bar that a restored layout left shown where it was, over a dock: after presentation mode
        the class's tab bar (its large text) stayed drawn over the LayerNorm panel beside the new one. Only a bar
        whose tabs another shown bar also lists is hidden, and only where it covers a dock."""
        shown = [bar for bar in self.window.findChildren(QtWidgets.QTabBar)
                 if bar.parent() is self.window and bar.isVisible()]
        tabs = lambda bar: tuple(bar.tabText(i) for i in range(bar.count()))       # noqa: E731
        docks = [d.geometry() for d in self.docks.values() if d.isVisible()]
        for bar in shown:
            twin = any(other is not bar and tabs(other) == tabs(bar) for other in shown)
            if twin and any(bar.geometry().intersects(rect) for rect in docks):
                bar.hide()

    def front_tabs(self) -> list[str]:
        """The docks in front of their tab groups, by name."""
        return [name for name, dock in self.docks.items()
                if self.window.tabifiedDockWidgets(dock) and dock.isVisible() and not dock.visibleRegion().isEmpty()]

    def raise_tabs(self, names) -> None:
        """Bring these docks to the front of their tab groups (those still in one)."""
        for name in names:
            dock = self.docks.get(name)
            if dock is not None and not dock.isHidden() and self.window.tabifiedDockWidgets(dock):
                dock.raise_()

    def toggle_alone(self) -> bool:
        """The centre alone (View ▸ Heatmap alone, F9): every dock hidden so that the attention heatmap takes the
        window, on a small projector above all; again: the docks as they were. Whether the centre is alone now."""
        if self.alone_state is None:
            self.alone_state = self.window.saveState()
            for dock in self.docks.values():
                dock.hide()
        else:
            state, self.alone_state = self.alone_state, None
            self.restore_state(state)
            self.window.presentation.keep_full_screen()     # the restore left full screen in class
        alone = self.alone_state is not None
        self.window.attention.alone = alone     # its hint says F9 only while F9 can give more room (QA)
        return alone

    def reset_layout(self) -> None:
        """Every dock back in its first place, shown."""
        self.restored = False
        self.alone_state = None
        self.window.attention.alone = False
        self.restore_state(self.default_layout)
        for dock in self.docks.values():
            dock.show()
        if "layernorm" in self.docks:
            self.docks["layernorm"].raise_()
        self.size_docks()
