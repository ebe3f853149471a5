"""Per-head metrics (model/analysis/metrics.py) against a direct computation on the exported matrices, the
`metrics` command's CSV, and the metrics table panel."""
from __future__ import annotations

import re

import csv
import io
import math
import unicodedata

import numpy as np
import pytest
from PySide6 import QtCore

from model.analysis.metrics import COLUMNS, metrics_csv, trace_metrics
from model.synthetic import synthetic_trace
from visualizer.export import heatmap_csv, heatmap_specs, read_heatmap_csv


def direct(matrix: np.ndarray, mask: np.ndarray, keys: list[str], ends: set[str], positional: bool) -> list[float]:
    """The metrics of one head, row by row with plain Python loops: rows with one key or none left out; the
    position-comparing ones NaN when queries and keys are two sentences (cross-attention)."""
    per_row, previous, peak = [], [], 0.0
    for i, row in enumerate(matrix):
        allowed = [j for j in range(len(row)) if mask[i, j]]
        if len(allowed) < 2:
            continue
        peak = max([peak] + [float(row[j]) for j in allowed])
        w = {j: float(row[j]) for j in allowed}
        punct = [j for j in allowed if keys[j].strip("▁Ġ#Ċ@").strip()
                 and all(unicodedata.category(c).startswith("P") for c in keys[j].strip("▁Ġ#Ċ@").strip())]
        per_row.append([
            -sum(p * math.log2(p) for p in w.values() if p > 0),
            sum(p * abs(i - j) for j, p in w.items()),
            w.get(0, 0.0),
            sum(p for j, p in w.items() if keys[j] in ends and j > 0),
            sum(w[j] for j in punct),
            w.get(i, 0.0),
        ])
        if i >= 1 and (i - 1) in w:                   # the first row has no previous position: left out
            previous.append(w[i - 1])
    means = np.mean(per_row, axis=0)
    if not any(k in ends for k in keys[1:]):          # no end token among the keys (a decoder's): nothing to share
        means[3] = np.nan
    means = [*means, np.mean(previous) if previous else np.nan]
    if not positional:
        means[1] = means[5] = means[6] = np.nan
    return [means[0], means[1], peak, *means[2:]]


def check_against_exports(trace, tmp_path) -> None:
    rows = trace_metrics(trace)
    ends = {trace.schema.special[r] for r in ("eos", "sep") if trace.schema.special.get(r)}
    specs = [s for s in heatmap_specs(trace, include_mean=False)]
    assert len(rows) == len(specs)
    for spec, row in zip(specs, rows):
        path = tmp_path / f"{spec.stem}.csv"
        path.write_text(heatmap_csv(spec), encoding="utf-8")
        _, cols, matrix = read_heatmap_csv(path)                 # the numbers a user exports
        assert (row.kind, row.layer, row.head) == (spec.kind, spec.layer + 1, spec.head + 1)
        kind = trace.schema.kind(spec.kind)
        expected = direct(matrix, spec.mask, cols, ends, positional=kind.queries == kind.keys)
        np.testing.assert_allclose([getattr(row, c) for c in COLUMNS[3:]], expected, rtol=1e-5, atol=1e-6)
    crosses = [r for r in rows if r.kind == "cross"]
    assert all(np.isnan([r.mean_distance, r.diagonal, r.previous_token]).all() for r in crosses)
    assert all(not np.isnan(r.entropy_bits) for r in rows)


def test_metrics_equal_a_direct_computation_on_the_exported_matrices(trace, tmp_path):
    check_against_exports(trace, tmp_path)


def test_metrics_on_every_shape(shaped_trace, tmp_path):
    check_against_exports(shaped_trace, tmp_path)


def previous_token_head(trace, T: int):
    """Head 1 of the first attention kind's layer 1 made a previous-token head: row i puts all its weight on
    i − 1, the first row (which has none) on itself. Returns the kind."""
    shift = np.zeros((T, T), np.float32)
    shift[0, 0] = 1
    shift[np.arange(1, T), np.arange(T - 1)] = 1
    kind = trace.schema.kinds[0]
    trace.arrays[f"{kind.stack}.0.{kind.sublayer}.weights"][0] = shift
    return kind


def test_known_values_on_a_hand_made_head(shapes):
    """One head attending only to the previous token; the first row, which can only attend to itself, is left out
    (of the max too): entropy 0, distance 1, previous-token share 1, diagonal 0."""
    trace = synthetic_trace(shapes["decoder-only"], tgt_tokens=["<s>", "a", ",", "b", "."])
    T = 5
    kind = previous_token_head(trace, T)
    row = trace_metrics(trace)[0]
    assert (row.kind, row.layer, row.head) == (kind.name, 1, 1)
    assert row.entropy_bits == pytest.approx(0.0, abs=1e-12)
    assert row.mean_distance == pytest.approx(1.0)
    assert row.previous_token == pytest.approx(1.0)
    assert row.diagonal == pytest.approx(0.0)
    assert row.first_token == pytest.approx(1 / (T - 1))     # row 1 looks at "<s>"
    assert row.punctuation == pytest.approx(1 / (T - 1))     # row 3 looks at ","
    assert row.max_weight == 1.0
    trace.arrays[f"{kind.stack}.0.{kind.sublayer}.weights"][0] = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    uniform = trace_metrics(trace)[0]                        # every row spread evenly over what it may see
    assert uniform.max_weight == pytest.approx(1 / 2)        # row 1's; row 0's forced 1.0 left out
    assert np.isnan(row.end_token) and np.isnan(uniform.end_token)     # "<s> a , b ." holds no end token


def test_an_encoders_first_row_has_no_previous_token_and_is_left_out_of_that_share(shapes):
    """A previous-token head of an encoder: every row but the first puts all its weight on the token before, the
    first (which has none) on itself. Averaged over every row its share read 0.8; over the rows with a previous
    token it is 1 (QA pass). An end token among the keys gives end_token a number."""
    import dataclasses
    schema = dataclasses.replace(shapes["encoder-only"], special={"sep": "[SEP]"})
    trace = synthetic_trace(schema, src_tokens=["[CLS]", "a", "b", "c", "[SEP]"])
    T = 5
    previous_token_head(trace, T)
    row = trace_metrics(trace)[0]
    assert row.previous_token == pytest.approx(1.0) and row.diagonal == pytest.approx(1 / T)
    assert row.end_token == 0.0                          # a number: [SEP] is among the keys, and gets nothing


def test_metrics_command_writes_the_table(run_command, tiny_model_dir, tmp_path, trace):
    out = tmp_path / "m.csv"
    code, stdout, _ = run_command(["metrics", "the cat sat on the mat", "--model", str(tiny_model_dir),
                                   "--out", str(out)])
    assert code == 0 and "wrote" in stdout
    table = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert tuple(table[0]) == COLUMNS
    rows = trace_metrics(trace)
    assert [(r["kind"], int(r["layer"]), int(r["head"])) for r in table] == [(m.kind, m.layer, m.head) for m in rows]
    assert {r["kind"] for r in table} == set(trace.schema.kind_names)
    np.testing.assert_allclose([float(r["entropy_bits"]) for r in table], [m.entropy_bits for m in rows], rtol=1e-6)
    assert out.read_text(encoding="utf-8") == metrics_csv(rows)
    for r in table:                      # cross-attention's position-comparing metrics are empty cells
        assert (r["mean_distance"] == r["diagonal"] == r["previous_token"] == "") == (r["kind"] == "cross")


def test_metrics_command_bad_input(run_command, tiny_model_dir, tmp_path):
    code, _, err = run_command(["metrics", "   ", "--model", str(tiny_model_dir)])
    assert code == 2 and "empty" in err
    code, _, err = run_command(["metrics", "x", "--model", str(tiny_model_dir), "--out", str(tmp_path / "no" / "m.csv")])
    assert code == 2 and "does not exist" in err


def test_the_table_is_saved_and_copied_from_the_window_as_the_command_writes_it(qtbot, window, tmp_path):
    """Only the `metrics` command wrote the CSV: the tab could neither save nor copy its table (QA pass)."""
    from PySide6 import QtCore, QtWidgets
    window.state.update(kind="cross", layer=0, head=0)
    panel = window.panels["metrics"]
    panel.render(window.trace, window.state)
    expected = metrics_csv(trace_metrics(window.trace))
    saved = panel.save_csv(str(tmp_path / "heads"))                       # the suffix is added
    assert saved == tmp_path / "heads.csv" and saved.read_text(encoding="utf-8") == expected
    panel.copy_table()
    assert QtWidgets.QApplication.clipboard().text() == expected
    written = window.exports.export_all(str(tmp_path / "all"), "csv")
    assert tmp_path / "all" / "head_metrics.csv" in written
    assert (tmp_path / "all" / "head_metrics.csv").read_text(encoding="utf-8") == expected
    model = panel.table.model()
    headers = [model.headerData(i, QtCore.Qt.Orientation.Horizontal) for i in range(model.columnCount())]
    assert "entropy\n(bits)" in headers and "distance\n(pos.)" in headers     # with their units (QA)
    assert "off" not in headers                          # every head on: no empty "off" column (QA)


def test_a_run_with_heads_off_marks_them_in_its_metrics_csv(run_command, tiny_model_dir, tiny_lm):
    """`metrics --ablate` and Export all's head_metrics.csv of an ablated run read like a plain run's table: an
    "off" column says "yes" for each head switched off; a plain run's table has no such column."""
    from model import translate

    code, out, _ = run_command(["metrics", "the cat sat", "--model", str(tiny_model_dir), "--ablate", "cross:1:2"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and list(rows[0]) == [*COLUMNS, "off"]
    assert [(r["kind"], r["layer"], r["head"]) for r in rows if r["off"] == "yes"] == [("cross", "1", "2")]
    ablated = translate(tiny_lm, "the cat sat", ablations=frozenset({("cross", 0, 1)})).trace
    expected = trace_metrics(ablated)
    assert [float(r["entropy_bits"]) for r in rows] == pytest.approx([m.entropy_bits for m in expected])
    code, out, _ = run_command(["metrics", "the cat sat", "--model", str(tiny_model_dir)])
    assert code == 0 and out.splitlines()[0] == ",".join(COLUMNS)


@pytest.mark.parametrize("command", ["translate", "metrics", "export", "animate"])
def test_every_command_says_a_long_text_was_cut(run_command, tiny_model_dir, tmp_path, command):
    """A text longer than the model's positions is cut, and what a command prints, measures or draws is the cut
    text's: each says so on stderr (metrics and animate said nothing: a paper's numbers of the first 64 tokens)."""
    extra = {"translate": [], "metrics": ["--out", str(tmp_path / "m.csv")],
             "export": ["--out", str(tmp_path / "figs"), "--format", "csv"],
             "animate": ["--kind", "enc_self", "--over", "heads", "--out", str(tmp_path / "a.gif")]}[command]
    code, _, err = run_command([command, "the cat sat on the mat . " * 40, "--model", str(tiny_model_dir), *extra])
    assert code == 0
    assert re.search(r"note: The sentence is longer than the model's 64 tokens: the last \d+ token\(s\) were "
                     r"cut\.\n", err)
    code, _, err = run_command([command, "the cat sat on the mat", "--model", str(tiny_model_dir), *extra])
    assert "were cut" not in err


def test_the_metrics_command_computes_as_the_window_does(run_command, tmp_path, monkeypatch):
    """The window runs torch on one thread; the commands ran on torch's default (a thread a core), and their floats
    differed from the window's in the 7th digit: `metrics` was not Export all's head_metrics.csv (QA)."""
    import torch

    from model import load, translate
    from model.analysis.metrics import metrics_csv
    from model.threads import one_torch_thread
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    text, before = "The animal didn't cross the street.", torch.get_num_threads()
    try:
        one_torch_thread()                           # the window's run
        expected = metrics_csv(trace_metrics(translate(load("en-fr"), text).trace))
        torch.set_num_threads(2)                     # torch's default on two cores
        code, _, _ = run_command(["metrics", text, "--model", "en-fr", "--out", str(tmp_path / "m.csv")])
    finally:
        torch.set_num_threads(before)
    assert code == 0 and (tmp_path / "m.csv").read_text(encoding="utf-8") == expected


def test_a_decoder_that_starts_with_its_end_token_reads_none_at_the_start(shapes):
    """BART's decoder starts with </s> (its decoder_start_token_id is its eos): that first key is the start, not an
    end, so end_token is empty where no other end token is among the keys, not first_token again (QA), and counts
    a later </s> alone."""
    import dataclasses
    schema = dataclasses.replace(shapes["decoder-only"], special={"eos": "</s>"})
    trace = synthetic_trace(schema, tgt_tokens=["</s>", "a", "b", "c"])
    previous_token_head(trace, 4)
    row = trace_metrics(trace)[0]
    assert row.first_token == pytest.approx(1 / 3) and np.isnan(row.end_token)
    trace = synthetic_trace(schema, tgt_tokens=["</s>", "a", "</s>", "c"])
    previous_token_head(trace, 4)
    row = trace_metrics(trace)[0]
    assert row.first_token == pytest.approx(1 / 3) and row.end_token == pytest.approx(1 / 3)    # row 3 reads it


def test_the_tab_measures_each_heads_effect_on_the_output_and_sorts_by_it(qtbot, window, tmp_path):
    """A student switched 120 heads off one at a time to find the ones en-fr's agreement leans on (QA): the tab
    measures each head's effect (model/analysis/head_effects.py) for the run shown, sorts by it, and keeps it in the
    CSV; a new run has none until measured again."""
    from model.analysis.head_effects import head_effects
    window.state.update(kind="cross", layer=0, head=0)
    panel = window.panels["metrics"]
    panel.render(window.trace, window.state)
    qtbot.waitUntil(lambda: panel.measure.isEnabled())
    assert "effect_logp" not in panel.model.columns
    panel.measure.click()
    expected = head_effects(window.lm, window.trace)
    col = panel.model.columns.index("effect_logp")
    shown = [panel.table.model().data(panel.table.model().index(r, col), QtCore.Qt.ItemDataRole.UserRole)
             for r in range(panel.table.model().rowCount())]
    assert shown == sorted(expected.values())                          # sorted: the most helpful head first
    assert panel.row_key(0) == min(expected, key=expected.get)
    table = list(csv.DictReader(io.StringIO(panel.table_csv())))
    assert all(float(r["effect_logp"]) == pytest.approx(expected[(r["kind"], int(r["layer"]) - 1,
                                                                  int(r["head"]) - 1)]) for r in table)
    window.inputs.sentence.setText("the dog runs")                      # another run: its own heads, not measured
    qtbot.waitUntil(lambda: window.trace.meta.get("sentence") == "the dog runs" and not window.runs.runner.busy)
    panel.render(window.trace, window.state)
    assert "effect_logp" not in panel.model.columns and "effect_logp" not in panel.table_csv()


def test_a_header_menu_chooses_the_columns_and_the_next_start_keeps_the_choice(qtbot, window, settings):
    """A narrow dock showed 4 of the table's 11 columns: right-click a header to hide the ones not wanted. The
    choice stays through a reset of the table (the effects measured) and is read again at the next start."""
    from PySide6 import QtCore

    from visualizer.panels.metrics import HEADERS, MetricsPanel
    panel = window.panels["metrics"]
    panel.render(window.trace, window.state)
    columns = panel.model.columns
    cross = panel.model.index([r.kind for r in panel.model.rows].index("cross"), 0)
    assert (panel.model.data(cross), panel.model.data(cross, QtCore.Qt.ItemDataRole.ToolTipRole)) == \
        ("Cross", "Cross (decoder → encoder)")                    # the kind column stays narrow, its tip whole
    menu = panel.columns_menu()
    checks = [a for a in menu.actions() if a.isCheckable()]
    assert [a.text() for a in checks] == [HEADERS[c].replace("\n", " ") for c in columns[3:]]
    assert all(a.isChecked() for a in checks) and not any(map(panel.table.isColumnHidden, range(len(columns))))
    next(a for a in checks if a.text() == "entropy (bits)").setChecked(False)
    hidden = columns.index("entropy_bits")
    assert [i for i in range(len(columns)) if panel.table.isColumnHidden(i)] == [hidden]
    assert settings.get("metrics_hidden") == "entropy_bits"
    panel.model.set_effects({})                                   # a new column: the table is reset
    assert panel.table.isColumnHidden(panel.model.columns.index("entropy_bits"))
    again = MetricsPanel(window.state, window)                    # the next start reads the choice
    again.render(window.trace, window.state)
    assert [i for i in range(len(columns)) if again.table.isColumnHidden(i)] == [hidden]
    every = next(a for a in again.columns_menu().actions() if a.text() == "Show every column")
    assert every.isEnabled()
    every.trigger()
    assert not any(map(again.table.isColumnHidden, range(len(columns)))) and settings.get("metrics_hidden") == ""
    assert not again.columns_menu().actions()[-1].isEnabled()

    # a column hidden that a later run has not (the effects) is still in the menu, unticked (QA: all ticked, and
    # "Show every column" still on)
    again.model.set_effects({})
    next(a for a in again.columns_menu().actions() if a.text() == "effect (log p)").setChecked(False)
    again.model.set_rows(list(again.model.rows), frozenset())                 # a new run: no effects column
    checks = {a.text(): a.isChecked() for a in again.columns_menu().actions() if a.isCheckable()}
    assert checks["effect (log p)"] is False and sum(not v for v in checks.values()) == 1


def test_the_sort_follows_its_column_when_columns_come_and_go(qtbot, window):
    """QA: sorted by the effects, then a head switched off (a new run, no effects column): the sort stayed on the
    fourth column, entropy, which nobody chose. The sort follows the column's name, else pipeline order."""
    from visualizer.panels.metrics import SORT_ROLE
    panel = window.panels["metrics"]
    panel.render(window.trace, window.state)
    header = panel.table.horizontalHeader()
    panel.table.sortByColumn(panel.model.columns.index("max_weight"), QtCore.Qt.SortOrder.DescendingOrder)
    panel.model.set_effects({})                                   # a column before it: max moves one to the right
    assert header.sortIndicatorSection() == panel.model.columns.index("max_weight") == 6
    assert header.sortIndicatorOrder() == QtCore.Qt.SortOrder.DescendingOrder
    first = panel.proxy.index(0, panel.model.columns.index("max_weight")).data(SORT_ROLE)
    assert first == max(r.max_weight for r in panel.model.rows)
    panel.table.sortByColumn(panel.model.columns.index("effect_logp"), QtCore.Qt.SortOrder.AscendingOrder)
    panel.model.set_rows(list(panel.model.rows), frozenset({panel.model.rows[1].key}))   # no effects, a head off
    assert header.sortIndicatorSection() == -1 and panel.row_key(0) == panel.model.rows[0].key    # pipeline order


def test_the_header_leaves_the_sort_arrow_room_in_the_sorted_column_alone(window, qtbot):
    """At a class's font (19.6 points) Qt left every column its header's height for a sort arrow (68 pixels beside
    "entropy (bits)"), and a 720p projector's 360-pixel dock cut the entropy column (kind, layer, head and entropy
    took 406 pixels; 296 now). Now the sorted column alone has the room of an arrow."""
    from PySide6 import QtGui, QtWidgets

    from visualizer.panels.metrics import MetricsPanel
    panel = MetricsPanel(window.state)
    qtbot.addWidget(panel)
    big = QtGui.QFont(panel.font())
    big.setPointSizeF(19.6)
    panel.setFont(big)
    panel.render(window.trace, window.state)
    header = panel.table.horizontalHeader()
    columns = panel.model.columns
    entropy = columns.index("entropy_bits")
    qt_own = QtWidgets.QHeaderView(QtCore.Qt.Orientation.Horizontal)     # Qt's header on the same table, unsorted
    qtbot.addWidget(qt_own)
    qt_own.setFont(big)
    qt_own.setModel(panel.table.model())
    plain = [qt_own.sectionSizeFromContents(i).width() for i in range(len(columns))]
    qt_own.setSortIndicatorShown(True)
    qt_arrows = [qt_own.sectionSizeFromContents(i).width() for i in range(len(columns))]
    widths = lambda: [header.sectionSizeFromContents(i).width() for i in range(len(columns))]  # noqa: E731
    assert header.sectionSizeFromContents(entropy).height() > 1.5 * header.fontMetrics().height()    # two lines
    assert widths() == plain                                       # unsorted (pipeline order): no arrow anywhere
    assert qt_arrows[entropy] - plain[entropy] > 2 * header.fontMetrics().height()      # what Qt left for one
    panel.table.sortByColumn(entropy, QtCore.Qt.SortOrder.DescendingOrder)
    sorted_widths = widths()
    arrow = sorted_widths[entropy] - plain[entropy]
    assert 0 < arrow < header.fontMetrics().height()               # an arrow's room, not the header's height
    assert sorted_widths[:entropy] == plain[:entropy]
    qtbot.waitUntil(lambda: header.sectionSize(entropy) >= sorted_widths[entropy])   # the table's own layout


@pytest.mark.parametrize("order", [QtCore.Qt.SortOrder.AscendingOrder, QtCore.Qt.SortOrder.DescendingOrder])
def test_undefined_values_sort_last_in_either_order(qtbot, window, order):
    """Sorted by the distance to find the most local heads, the cross-attention rows' "—" came first (QA): they
    come after every measured value, up or down, and the measured ones are in order."""
    panel = window.panels["metrics"]
    panel.render(window.trace, window.state)
    col = panel.model.columns.index("mean_distance")
    panel.table.sortByColumn(col, order)
    shown = [panel.proxy.index(r, col).data() for r in range(panel.proxy.rowCount())]
    values = [float(v) for v in shown if v != "—"]
    assert "—" in shown and shown[len(values):] == ["—"] * (len(shown) - len(values))
    assert values == sorted(values, reverse=order == QtCore.Qt.SortOrder.DescendingOrder)


def test_the_keyboard_pages_the_table_and_the_math_page_and_tab_leaves_them(qtbot, window):
    """QA, a keyboard user: Tab went cell by cell through the table's 120 × 11 cells and back to the first, never to
    the next control; PageDown in the table, and on the Math page, moved the whole view a stage (the window's key
    for a presenter's remote) instead of paging what has the keyboard."""
    from PySide6 import QtTest, QtWidgets
    window.resize(1024, 640)
    for name in ("metrics", "inspector"):
        window.docking.go_to(name)
        panel = window.panels[name]
        view = panel.table if name == "metrics" else panel.view
        if name == "inspector":
            view.setHtml("<p>line</p>" * 200)                 # longer than the page, whatever the dock's height
        qtbot.waitUntil(lambda: view.isVisible() and view.verticalScrollBar().maximum() > 0)
        view.setFocus()
        qtbot.waitUntil(view.hasFocus)
        if name == "metrics":
            view.setCurrentIndex(view.model().index(0, 0))
        where = (window.state.stack, window.state.layer, window.state.sublayer, window.state.step)
        before = view.verticalScrollBar().value()
        QtTest.QTest.keyClick(view, QtCore.Qt.Key.Key_PageDown)
        assert (window.state.stack, window.state.layer, window.state.sublayer, window.state.step) == where
        assert view.verticalScrollBar().value() > before
        if name == "metrics":
            assert view.currentIndex().row() > 0
        QtTest.QTest.keyClick(view, QtCore.Qt.Key.Key_Tab)
        assert QtWidgets.QApplication.focusWidget() is not view
    view.setFocus()
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    window.setFocus()                                     # elsewhere, PageDown is still the remote's next stage
    where = (window.state.stack, window.state.layer, window.state.sublayer, window.state.step)
    QtTest.QTest.keyClick(window, QtCore.Qt.Key.Key_PageDown)
    assert (window.state.stack, window.state.layer, window.state.sublayer, window.state.step) != where


def test_a_screen_reader_reads_the_headers_in_words(qtbot, window):
    """The headers were read as drawn, abbreviations and line breaks ("entropy\\n(bits)", "punct.": QA): a screen
    reader gets each column's name in words, and its meaning as the description."""
    from PySide6 import QtGui

    from visualizer.panels.metrics import HEADERS, SAID, TIPS
    window.docking.go_to("metrics")
    panel = window.panels["metrics"]
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0)
    table = QtGui.QAccessible.queryAccessibleInterface(panel.table)
    headers = [table.child(i) for i in range(table.childCount())]
    headers = {h.text(QtGui.QAccessible.Text.Name): h.text(QtGui.QAccessible.Text.Description) for h in headers
               if h is not None and h.role() == QtGui.QAccessible.Role.ColumnHeader}
    shown = panel.model.columns
    assert set(headers) == {SAID.get(c, HEADERS[c]) for c in shown} and "punctuation" in shown
    assert not any("\n" in name or name.endswith(".") for name in headers)
    assert headers["share on punctuation"] == TIPS["punctuation"]
