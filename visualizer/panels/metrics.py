"""Head metrics: a sortable table, one row per attention kind × layer × head (model/analysis/metrics.py). Click a
header to sort, a row to focus that head in the attention panel; right-click a row to switch the head off or on, or
to save or copy the table (the `metrics` command's CSV); right-click a header to choose the columns shown (kept for
the next start: a narrow dock showed 4 of the 11)."""
from __future__ import annotations

import math
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from model.ablation import ablated_heads
from model.analysis.metrics import COLUMNS, HeadMetrics, metrics_csv, trace_metrics

from .. import accessible
from ..ablation_actions import toggle_text
from .widgets import PagingKeys, shift_f10

METRICS_FILE = "head_metrics.csv"                    # the table's file, from the window and in Export all
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole           # the raw value (numbers sort as numbers)
# with their units (QA: "entropy" and "distance" said neither bits nor positions), on a second line so that the
# columns stay narrow; the shares are of the weight
HEADERS = {"kind": "kind", "layer": "layer", "head": "head", "entropy_bits": "entropy\n(bits)",
           "mean_distance": "distance\n(pos.)", "max_weight": "max", "first_token": "first", "end_token": "end",
           "punctuation": "punct.", "diagonal": "diagonal", "previous_token": "previous", "off": "off",
           "effect_logp": "effect\n(log p)"}
# what a screen reader says for each header: the drawn one's abbreviations and line breaks read as "punct." (QA)
SAID = {"entropy_bits": "entropy in bits", "mean_distance": "mean distance in positions",
        "max_weight": "largest weight", "first_token": "share on the first token",
        "end_token": "share on the end token",
        "punctuation": "share on punctuation", "diagonal": "share on its own position",
        "previous_token": "share on the previous position", "off": "switched off", "effect_logp": "effect on log p"}
ALWAYS_SHOWN = ("kind", "layer", "head")             # which head a row is
HIDDEN_SETTING = "metrics_hidden"


def short_kind(label: str) -> str:
    """The kind column's words for a kind's label (the whole label is its tooltip): "Decoder masked self" took 166
    of a narrow dock's 384 pixels (QA). "Enc. self", "Dec. self", "Cross"; from the schema's label, as the panels."""
    label = label.split(" (")[0]
    for long, short in (("Encoder ", "Enc. "), ("Decoder masked ", "Dec. "), ("Decoder ", "Dec. ")):
        if label.startswith(long):
            return short + label[len(long):]
    return label


TIPS = {"entropy_bits": "Mean over query rows of each row's entropy in bits (masked cells left out): 0 = one key",
        "mean_distance": "Mean over query rows of Σ α·|i − j|: how far (in positions) the head looks",
        "max_weight": "The head's largest weight, over the rows with a choice of keys (a causal head's first row, "
                      "whose one key takes all of it, is left out, as in every column here)",
        "first_token": "Share of the weight on the first key token",
        "end_token": "Share of the weight on the end token (</s>, [SEP])",
        "punctuation": "Share of the weight on punctuation keys",
        "diagonal": "Share of the weight on the query's own position",
        "previous_token": "Share of the weight on the position before the query's",
        "off": "The head is switched off (ablated) in this run",
        "effect_logp": "The head switched off alone, the output forced the same: the mean change in the "
                       "log-probability of the output's tokens (nats). Negative: the head helps write the output"}
NOT_MEASURED = "Switched off in this run already: not measured"
UNDEFINED = ("Not defined here: cross-attention's queries and keys are positions in two different sentences "
             "(or no query row has a choice of keys)")


def undefined(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


class MetricsModel(QtCore.QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[HeadMetrics] = []
        self.off: frozenset = frozenset()
        self.labels: dict[str, str] = {}          # kind -> the panels' name for it ("Encoder self")
        self.effects: dict | None = None          # key -> effect on the output, once measured (head_effects)
        self.columns = COLUMNS + ("off",)

    def set_rows(self, rows: list[HeadMetrics], off: frozenset, labels: dict[str, str] | None = None) -> None:
        self.beginResetModel()
        self.rows, self.off, self.labels, self.effects = rows, off, dict(labels or {}), None
        self.columns = COLUMNS + (("off",) if off else ())     # as the CSV: an empty column said nothing (QA)
        self.endResetModel()

    def set_effects(self, effects: dict) -> None:
        """A column of each head's effect on the output (a head already off has none: NaN)."""
        self.beginResetModel()
        self.effects = effects
        self.columns = COLUMNS[:3] + ("effect_logp",) + COLUMNS[3:] + (("off",) if self.off else ())   # in sight
        self.endResetModel()

    def rowCount(self, parent=QtCore.QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def value(self, row: int, col: int):
        r = self.rows[row]
        name = self.columns[col]
        if name == "effect_logp":
            return self.effects.get(r.key, math.nan)
        return ("yes" if r.key in self.off else "") if name == "off" else getattr(r, name)   # as the CSV (QA)

    def data(self, index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        value = self.value(index.row(), index.column())
        if role == SORT_ROLE:
            return None if undefined(value) else value                   # last, either way (UndefinedLast)
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            if self.columns[index.column()] == "kind":    # the CSV and the command line keep enc_self
                return short_kind(self.labels.get(value, value))
            if undefined(value):
                return "—"
            if self.columns[index.column()] == "effect_logp":
                return f"{value:+.4f}"              # small: −0.0206 read "-0.021" beside "-0.017"
            return f"{value:.3f}" if isinstance(value, float) else str(value)
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and self.columns[index.column()] == "kind":
            return self.labels.get(value, value)              # "Cross (decoder → encoder)"
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and undefined(value):
            return NOT_MEASURED if self.columns[index.column()] == "effect_logp" else UNDEFINED
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and not isinstance(value, str):
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):
        if orientation != QtCore.Qt.Orientation.Horizontal:
            return None
        name = self.columns[section]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            return HEADERS[name]
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return TIPS.get(name)
        if role == QtCore.Qt.ItemDataRole.AccessibleTextRole:
            return SAID.get(name, HEADERS[name])
        if role == QtCore.Qt.ItemDataRole.AccessibleDescriptionRole:
            return TIPS.get(name)
        return None


class UndefinedLast(QtCore.QSortFilterProxyModel):
    """Sorts by SORT_ROLE with the undefined values ("—": a cross-attention's distance, a head not measured) after
    the others in either order: sorted up to find the most local heads, the eight "—" of cross-attention came first
    (QA)."""

    def lessThan(self, left, right) -> bool:
        a, b = (self.sourceModel().data(i, SORT_ROLE) for i in (left, right))
        if a is None or b is None:            # Qt shows a descending sort as the ascending one reversed
            ascending = self.sortOrder() == QtCore.Qt.SortOrder.AscendingOrder
            return a is not None if ascending else b is not None
        return a < b


class CompactHeader(QtWidgets.QHeaderView):
    """A header that leaves room for the sort arrow in the sorted column alone, as wide as the arrow: Qt leaves each
    section its whole height beside its text, and at a class's font the two-line headers ("entropy" over "(bits)")
    took 68 pixels for an arrow, so that a 720p projector's dock cut the entropy column (kind, layer, head and
    entropy took 406 of its 360 pixels)."""

    def __init__(self, orientation, parent=None):
        super().__init__(orientation, parent)
        self.sortIndicatorChanged.connect(lambda *_: QtCore.QTimer.singleShot(0, self, self.resizeSections))

    def sectionSizeFromContents(self, logical: int) -> QtCore.QSize:
        size = super().sectionSizeFromContents(logical)
        if self.isSortIndicatorShown() and self.orientation() == QtCore.Qt.Orientation.Horizontal:
            margin = self.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_HeaderMargin)
            arrow = round(0.6 * self.fontMetrics().height()) + margin if logical == self.sortIndicatorSection() else 0
            size.setWidth(size.width() - size.height() - margin + arrow)
        return size


class RowTable(QtWidgets.QTableView):
    """A table whose context menu is for a row: the current one when the keyboard asks (Menu key, Shift+F10), the
    one under the pointer for a click; and Return or Space picks the current row, as a click does. (The Menu key's
    position is the table's, not its viewport's: read as the viewport's, it named the row below, and a student
    switched off head 4 for head 3.)"""
    menu_asked = QtCore.Signal(int, QtCore.QPoint)       # view row, global position
    row_picked = QtCore.Signal(int)

    def contextMenuEvent(self, event) -> None:
        if event.reason() == event.Reason.Keyboard:
            index = self.currentIndex()
            where = self.viewport().mapToGlobal(self.visualRect(index).center()) if index.isValid() else \
                event.globalPos()
        else:
            index, where = self.indexAt(self.viewport().mapFromGlobal(event.globalPos())), event.globalPos()
        if index.isValid():
            self.menu_asked.emit(index.row(), where)

    def keyPressEvent(self, event) -> None:
        if event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter, QtCore.Qt.Key.Key_Space) \
                and self.currentIndex().isValid():
            self.row_picked.emit(self.currentIndex().row())
            return
        if shift_f10(event):            # (the shortcuts sheet promised it: it did nothing)
            self.contextMenuEvent(QtGui.QContextMenuEvent(QtGui.QContextMenuEvent.Reason.Keyboard,
                                                          self.rect().center(), self.mapToGlobal(self.rect().center())))
            return
        super().keyPressEvent(event)


class MetricsPanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.model = MetricsModel(self)
        self.proxy = UndefinedLast(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = RowTable()
        self.table.setHorizontalHeader(CompactHeader(QtCore.Qt.Orientation.Horizontal, self.table))
        accessible.name(self.table, "Head metrics, one row per head")
        # Tab leaves the table for the next control, as from any field: it went cell by cell through 120 rows × 11
        # columns and back to the first, and only a shortcut got a keyboard user out (QA); the arrows move in it
        self.table.setTabKeyNavigation(False)
        PagingKeys(self.table)
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)      # pipeline order until a header is clicked
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.table.clicked.connect(lambda index: self.focus_row(index.row()))
        self.table.row_picked.connect(self.focus_row)
        self.table.menu_asked.connect(self._menu)
        header = self.table.horizontalHeader()
        header.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(lambda pos: self.open_menu(self.columns_menu(),
                                                                             header.mapToGlobal(pos)))
        self.hidden: set[str] | None = None           # the columns hidden; read from the settings at the first rows
        # the sort, by the column's name: columns come and go (effects measured, a head off), and the sort stayed on
        # the position, a column the user never chose, off-screen (QA)
        self._sorted: tuple[str, QtCore.Qt.SortOrder] | None = None
        header.sortIndicatorChanged.connect(self._remember_sort)
        self.model.modelReset.connect(self._hide_columns)
        self.model.modelReset.connect(self._sort_again)
        hint = QtWidgets.QLabel("Click a header to sort, a row (or Return on it) to focus its head; right-click a row "
                                "(or the Menu key) to switch a head off or to save the table as CSV, a header to "
                                "choose the columns.")
        self.hint = hint
        hint.setWordWrap(True)
        # which heads the output leans on: each switched off alone (a student switched 120 heads off one by one,
        # reading the output chart each time: QA)
        self.measure = QtWidgets.QPushButton("Measure head effects")     # (its tip: below; short: a class's dock)
        self.measure.clicked.connect(self.measure_effects)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(hint)
        layout.addWidget(self.measure, 0, QtCore.Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.table, 1)
        self._trace = None
        self.lm = None
        self._update_measure()

    def set_model(self, lm) -> None:
        self.lm = lm
        self._update_measure()

    def _update_measure(self) -> None:
        from model.analysis.head_effects import cannot_measure
        lm, trace = self.lm, self._trace
        why = "The model is not open yet" if lm is None or trace is None else cannot_measure(lm) or ""
        self.measure.setEnabled(not why)
        self.measure.setToolTip(why or TIPS["effect_logp"] + "; one run a head, then sorted by it")

    def measure_effects(self) -> None:
        """Each head's effect on the output of the run shown, with a progress dialog that can stop it; the table
        gains the column and is sorted by it, the heads the output leans on most first."""
        from model.analysis.head_effects import head_effects
        lm, trace = self.lm, self._trace
        if lm is None or trace is None:
            return
        n = len(self.model.rows) - len(self.model.off)
        dialog = QtWidgets.QProgressDialog("Switching each head off alone…", "Stop", 0, n, self)
        dialog.setWindowTitle("Measuring the heads")
        dialog.setWindowModality(QtCore.Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(400)

        def progress(done: int, _total: int) -> bool:
            dialog.setValue(done)
            QtWidgets.QApplication.processEvents()
            return not dialog.wasCanceled() and self._trace is trace      # a new run: this one's numbers are no use
        try:
            with lm.lock:                       # (the window's runs use the model from another thread)
                effects = head_effects(lm, trace, progress=progress)
        except Exception as e:                  # a family's failure is said, never a traceback (the window's rule)
            QtWidgets.QMessageBox.warning(self.window(), "Could not measure the heads", str(e).splitlines()[0])
            return
        finally:
            dialog.close()
        if self._trace is not trace:
            return
        self.model.set_effects(effects)
        self.table.sortByColumn(self.model.columns.index("effect_logp"), QtCore.Qt.SortOrder.AscendingOrder)
        self.table.scrollToTop()
        window = self.window()
        if isinstance(window, QtWidgets.QMainWindow):
            done = "" if len(effects) == n else f" ({len(effects)} of {n}: stopped)"
            window.statusBar().showMessage(f"Measured each head's effect on the output{done}: the table is sorted "
                                           "by it, the heads the output leans on most first", 10000)

    def _remember_sort(self, section: int, order) -> None:
        columns = self.model.columns
        self._sorted = (columns[section], order) if 0 <= section < len(columns) else None

    def _sort_again(self) -> None:
        """After the columns changed: sorted by the same column where it still is, else in pipeline order."""
        name, order = self._sorted or (None, QtCore.Qt.SortOrder.AscendingOrder)
        self.table.sortByColumn(self.model.columns.index(name) if name in self.model.columns else -1, order)

    def resizeEvent(self, event) -> None:
        # a short dock (presentation mode at 1024 × 768: 233 pixels) showed the hint and the button, no table (QA):
        # the hint shows where it takes at most a quarter of the panel (the header's menu and the README say it too)
        lines = self.hint.heightForWidth(max(1, event.size().width() - 8))
        self.hint.setVisible(lines <= event.size().height() // 4)
        super().resizeEvent(event)

    def _settings(self):
        return getattr(self.window(), "settings", None)

    def _hide_columns(self) -> None:
        """Hide the chosen columns (again after each reset: the columns change with the effects and the off heads)."""
        if self.hidden is None:
            settings = self._settings()
            if settings is None:                      # not in the window yet: nothing hidden, read them later
                return
            self.hidden = {name for name in settings.get(HIDDEN_SETTING).split(",")
                           if name in HEADERS and name not in ALWAYS_SHOWN}
        for i, name in enumerate(self.model.columns):
            self.table.setColumnHidden(i, name in self.hidden)

    def show_column(self, name: str, shown: bool) -> None:
        """Show or hide a column, and remember the choice for the next start."""
        self._hide_columns()
        if self.hidden is None:
            self.hidden = set()
        (self.hidden.discard if shown else self.hidden.add)(name)
        self._hide_columns()
        settings = self._settings()
        if settings is not None:
            settings.set(HIDDEN_SETTING, ",".join(sorted(self.hidden)))

    def columns_menu(self) -> QtWidgets.QMenu:
        """The header's menu: a check for each column that can be hidden, and one to show them all."""
        self._hide_columns()
        menu = QtWidgets.QMenu(self)
        menu.setToolTipsVisible(True)
        # and the columns hidden that this run has not (the effects, "off"): ticked all, "Show every column" still
        # showed as something to do (QA)
        for name in [*self.model.columns, *sorted((self.hidden or set()) - set(self.model.columns))]:
            if name in ALWAYS_SHOWN:
                continue
            action = menu.addAction(HEADERS[name].replace("\n", " "))
            action.setCheckable(True)
            action.setChecked(name not in (self.hidden or ()))
            action.setToolTip(TIPS.get(name, ""))
            action.toggled.connect(lambda shown, n=name: self.show_column(n, shown))
        menu.addSeparator()
        every = menu.addAction("Show every column", lambda: [self.show_column(n, True) for n in list(self.hidden)])
        every.setEnabled(bool(self.hidden))
        return menu

    def view_key(self, state):
        return ()                 # the table depends on the trace alone (a new run draws it again)

    def render(self, trace, state) -> None:
        if trace is self._trace:
            return
        self._trace = trace
        self.model.set_rows(trace_metrics(trace), ablated_heads(trace), {k.name: k.label for k in trace.schema.kinds})
        self._update_measure()

    def row_key(self, view_row: int) -> tuple[str, int, int]:
        """(kind, layer, head), 0-based, of a row as the table shows it (sorted)."""
        return self.model.rows[self.proxy.mapToSource(self.proxy.index(view_row, 0)).row()].key

    def focus_row(self, view_row: int) -> None:
        kind, layer, head = self.row_key(view_row)
        self.state.update(kind=kind, layer=layer, head=head)

    def _menu(self, view_row: int, where: QtCore.QPoint) -> None:
        self.open_menu(self.row_menu(self.row_key(view_row)), where)

    @staticmethod
    def open_menu(menu: QtWidgets.QMenu, where: QtCore.QPoint) -> None:
        menu.exec(where)

    def row_menu(self, key: tuple[str, int, int]) -> QtWidgets.QMenu:
        """The menu of a row's head (kind, layer, head)."""
        menu = QtWidgets.QMenu(self)
        off = key in self.state.ablations
        menu.addAction(toggle_text(self.state.schema, key, off), lambda: self.state.toggle_ablation(*key))
        menu.addAction("Every head back on", self.state.reset_ablations).setEnabled(
            bool(self.state.ablations))
        menu.addSeparator()
        menu.addAction("Save table as CSV…", self.save_csv)
        menu.addAction("Copy table", self.copy_table)
        return menu

    @property
    def trace(self):
        """The run the table shows (None before the first)."""
        return self._trace

    def table_csv(self) -> str:
        """The table as the `metrics` command writes it: pipeline order, 1-based layers and heads, empty for —."""
        return metrics_csv(self.model.rows, self.model.off, self.model.effects)

    def copy_table(self) -> None:
        QtWidgets.QApplication.clipboard().setText(self.table_csv())
        window = self.window()
        if isinstance(window, QtWidgets.QMainWindow):
            window.statusBar().showMessage("Head metrics copied to the clipboard (CSV)", 4000)

    def save_csv(self, path: str | None = None) -> Path | None:
        """Ask for a file (unless path is given) and write the table there; errors go to a dialog."""
        from ..export import ExportError, write_text
        from ..folders import remember, suggest
        window = self.window()
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save head metrics", suggest(window, METRICS_FILE),
                                                            "CSV table (*.csv)")
            if not path:
                return None
        target = Path(path) if Path(path).suffix.lower() == ".csv" else Path(path + ".csv")
        try:
            write_text(target, self.table_csv())
        except ExportError as e:
            QtWidgets.QMessageBox.warning(window, "Could not save the table", str(e))
            return None
        remember(window, target)
        if isinstance(window, QtWidgets.QMainWindow):
            window.statusBar().showMessage(f"Saved {target}", 8000)
        return target
