"""Heads switched off in the window: the run's trace, the crossed-out small multiples, the right-click menu, the
metrics table, the reset, and session files."""
from __future__ import annotations

import numpy as np

from model.analysis.metrics import trace_metrics


def wait_for_run(qtbot, window, specs):
    qtbot.waitUntil(lambda: window.trace.meta.get("ablations") == specs and not window.runs.runner.busy,
                    timeout=20000)


def test_switching_a_head_off_runs_again_and_crosses_it_out(qtbot, window):
    window.state.update(kind="cross", layer=0, head=0)
    window.state.toggle_ablation("cross", 0, 1)
    wait_for_run(qtbot, window, ["cross:1:2"])
    assert np.all(window.trace["dec.0.cross.head_out"][1] == 0)
    assert [hp.crossed for hp in window.attention.small] == [False, True]
    assert not window.attention.focus.crossed                    # the focused head 1 is on
    window.state.update(head=1)                                  # the focused view of the head that is off
    assert window.attention.focus.crossed
    window.state.update(head=0)
    assert not window.attention.focus.crossed
    cross = window.state.schema.kind("cross").label                    # the panels' words, not --ablate's
    assert window.ablation.note.text() == f"1 head off: {cross} L1 H2" and "cross:" not in cross
    assert window.ablation.reset.isEnabled()
    window.state.update(layer=1)                          # another layer: nothing crossed there
    assert [hp.crossed for hp in window.attention.small] == [False, False]
    window.ablation.reset.trigger()
    wait_for_run(qtbot, window, [])
    window.state.update(layer=0)
    assert [hp.crossed for hp in window.attention.small] == [False, False]
    assert not window.ablation.note.isVisible()


def test_many_heads_off_are_counted_in_the_status_bar_and_listed_in_its_tooltip(qtbot, window):
    """QA: the note named six heads and "…", widening the window past a 1600-pixel screen."""
    window.resize(1000, 700)
    qtbot.wait(100)
    width = window.width()
    heads = [("cross", layer, head) for layer in range(window.state.schema.stack("dec").n_layers)
             for head in range(window.state.schema.n_heads)]
    for h in heads:
        window.state.toggle_ablation(*h)
    from model.ablation import spec
    wait_for_run(qtbot, window, [spec(h) for h in sorted(heads)])
    assert window.ablation.note.text() == f"{len(heads)} heads off"
    cross = window.state.schema.kind("cross").label
    tip = window.ablation.note.toolTip()
    # every head of the kind, in a few words
    assert f"{cross}, every layer (all {len(heads)} heads)" in tip and "…" not in tip
    qtbot.wait(100)
    assert window.width() == width


def test_the_heads_menu_names_the_focused_head_from_the_first_run(qtbot, window):
    """The item was greyed out until the state changed once after start-up, though head 1 was focused."""
    heads = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Heads")
    heads.aboutToShow.emit()
    act = window.ablation.toggle_focused
    assert act.isEnabled()
    k, l, h = window.ablation.focused()
    label = window.state.schema.kind(k).label
    assert act.text() == f"Switch off {label}, layer {l + 1}, head {h + 1} (the focused head)"
    act.trigger()
    assert window.state.ablations == {(k, l, h)}


def test_the_attention_menu_switches_the_focused_head(qtbot, window):
    window.state.update(kind="enc_self", layer=1, head=1)
    menu = window.exports.attention_menu.build()
    act = next(a for a in menu.actions() if a.text().startswith("Switch off"))
    assert act.text() == "Switch off Encoder self, layer 2, head 2"
    act.trigger()
    assert window.state.ablations == {("enc_self", 1, 1)}
    wait_for_run(qtbot, window, ["enc_self:2:2"])
    menu = window.exports.attention_menu.build()
    assert any(a.text() == "Switch Encoder self, layer 2, head 2 on again" for a in menu.actions())


def test_metrics_table_sorts_focuses_and_marks_heads_off(qtbot, window):
    panel = window.panels["metrics"]
    window.state.toggle_ablation("dec_self", 1, 0)
    wait_for_run(qtbot, window, ["dec_self:2:1"])
    panel.render(window.trace, window.state)
    rows = trace_metrics(window.trace)
    assert panel.model.rowCount() == len(rows) == 3 * 2 * 2
    col = panel.model.columns.index("entropy_bits")
    panel.table.sortByColumn(col, __import__("PySide6").QtCore.Qt.SortOrder.DescendingOrder)
    shown = [panel.row_key(r) for r in range(panel.proxy.rowCount())]
    assert shown == [r.key for r in sorted(rows, key=lambda r: -r.entropy_bits)]
    panel.focus_row(0)
    assert (window.state.kind, window.state.layer, window.state.head) == shown[0]
    off = panel.model.columns.index("off")
    marks = {panel.model.rows[i].key: panel.model.value(i, off) for i in range(len(rows))}
    kinds = {panel.model.data(panel.model.index(i, 0)) for i in range(len(rows))}
    assert kinds == {"Enc. self", "Dec. self", "Cross"}                       # the panels' words, short; not enc_self
    tips = {panel.model.data(panel.model.index(i, 0), __import__("PySide6").QtCore.Qt.ItemDataRole.ToolTipRole)
            for i in range(len(rows))}
    assert tips == {k.label for k in window.trace.schema.kinds}               # whole: "Decoder masked self"
    assert marks[("dec_self", 1, 0)] == "yes" and sorted(marks.values()).count("yes") == 1     # as the CSV
    # cross-attention compares positions of two sentences: its distance, diagonal and previous read "—"
    Qt = __import__("PySide6").QtCore.Qt
    for i, r in enumerate(panel.model.rows):
        for name in ("mean_distance", "diagonal", "previous_token"):
            index = panel.model.index(i, panel.model.columns.index(name))
            shown = panel.model.data(index)
            assert (shown == "—") == (r.kind == "cross"), (r.key, name, shown)
            assert ("two different sentences" in (panel.model.data(index, Qt.ItemDataRole.ToolTipRole) or "")) == \
                (r.kind == "cross")
    col = panel.model.columns.index("diagonal")
    panel.table.sortByColumn(col, Qt.SortOrder.AscendingOrder)
    n = panel.proxy.rowCount()                     # the undefined ones last (they came first: QA)
    assert [panel.row_key(r)[0] for r in range(n - 4, n)] == ["cross"] * 4


def test_sessions_keep_ablations(tmp_path, window):
    from visualizer.session import read_session, save_session
    window.state.update(ablations=frozenset({("cross", 1, 0), ("enc_self", 0, 1)}))
    save_session(tmp_path / "s.json", window.state)
    assert '"cross:2:1"' in (tmp_path / "s.json").read_text(encoding="utf-8")
    assert read_session(tmp_path / "s.json")["ablations"] == {("cross", 1, 0), ("enc_self", 0, 1)}


def test_a_session_with_a_head_the_model_lacks_is_refused(tmp_path, tiny_model_dir):
    import json

    import pytest

    from visualizer.session import FORMAT, SessionError, read_session
    path = tmp_path / "s.json"
    for bad, words in ((["cross:9:1"], "no layer 9"), (["cross"], "KIND:LAYER:HEAD"), ([3], "is not text")):
        path.write_text(json.dumps({"format": FORMAT, "model": str(tiny_model_dir), "sentence": "x",
                                    "ablations": bad}), encoding="utf-8")
        with pytest.raises(SessionError, match=words):
            read_session(path)


def test_another_model_starts_with_every_head_on(qtbot, window, tmp_path, tiny_model_factory):
    """Heads belong to the model they were switched off in: opening another one (here with the same kinds and
    shape, where the old heads would fit) clears them, says so, and its run has none off."""
    window.state.toggle_ablation("cross", 0, 1)
    wait_for_run(qtbot, window, ["cross:1:2"])
    other = tiny_model_factory(tmp_path / "other", seed=3)
    assert window.open_model(str(other))
    assert window.state.ablations == frozenset() and not window.ablation.reset.isEnabled()
    assert "1 head was switched off in the model before" in window.statusBar().whole_message()
    qtbot.waitUntil(lambda: window.trace.meta.get("model") == window.lm.name and not window.runs.runner.busy,
                    timeout=20000)
    assert window.trace.meta.get("ablations", []) == [] and np.any(window.trace["dec.0.cross.head_out"][1] != 0)


def test_the_status_bar_says_whether_switching_heads_off_changed_the_translation(qtbot, window):
    """QA: a student switched a head off, saw the same translation and thought nothing had happened."""
    before = window.trace.meta["translation"]
    window.state.toggle_ablation("cross", 0, 1)
    wait_for_run(qtbot, window, ["cross:1:2"])
    after = window.trace.meta["translation"]
    bar = window.statusBar()
    message = bar.whole_message()
    if after == before:
        assert message.startswith("Same translation as before: one head rarely changes the output alone")
    else:
        assert message == f"The translation changed: “{before}” → “{after}”."
    window.statusBar().clearMessage()
    window.state.update(kind="enc_self", layer=0, head=0)     # a view change is no new run: nothing said
    assert window.statusBar().currentMessage() == ""
    window.ablation.reset.trigger()                           # every head on again: back to the first translation
    wait_for_run(qtbot, window, [])
    message = bar.whole_message()
    assert window.trace.meta["translation"] == before
    assert (message == f"The translation changed: “{after}” → “{before}”.") if after != before else \
        message == "Every head is on again: the same translation as with them off."


def test_a_model_picked_from_the_list_says_the_heads_are_on_again_beside_what_it_is(qtbot, window):
    """Choosing a bundled model says what it was trained on; that message had replaced the one saying the heads
    switched off were on again, and a teacher saw her switched-off head gone without a word."""
    from model.assets import model_summary
    window.state.toggle_ablation("cross", 0, 1)
    window.state.toggle_ablation("cross", 1, 0)
    wait_for_run(qtbot, window, ["cross:1:2", "cross:2:1"])
    picker = window.inputs.model
    picker.setCurrentIndex(picker.findData("seed-example"))
    picker.activated.emit(picker.currentIndex())                  # as a click in the list sends it
    qtbot.waitUntil(lambda: window.state.model_name == "seed-example")
    said = window.statusBar().whole_message()
    assert said.startswith(f"seed-example: {model_summary('seed-example')}")
    assert said.endswith("; every head is on again (2 heads were switched off in the model before)")
    assert window.state.ablations == frozenset()


def test_with_a_given_target_the_status_bar_does_not_report_an_unchanged_translation(qtbot, window):
    """Under teacher forcing the output is the target whatever the heads do: "Same translation as before: one head
    rarely changes the output alone" read as a finding about the head (QA as a researcher)."""
    window.inputs.target.setText("le chat dort")
    qtbot.waitUntil(lambda: window.trace.meta.get("mode") == "teacher-forced" and not window.runs.runner.busy,
                    timeout=20000)
    window.state.toggle_ablation("cross", 0, 1)
    wait_for_run(qtbot, window, ["cross:1:2"])
    assert window.statusBar().whole_message().startswith("The target is given, so the output stays the same")
    window.state.toggle_ablation("cross", 0, 1)       # on again: not "the same translation as with them off" (QA)
    wait_for_run(qtbot, window, [])
    assert window.statusBar().whole_message().startswith("Every head is on again. The target is given, so the output")


def test_the_metrics_tables_menu_key_acts_on_the_current_row_and_return_focuses_it(qtbot, window, monkeypatch):
    """A keyboard student selected Encoder self L1 H3, pressed the Menu key and switched off head 4: the key's
    position was read as the viewport's (one header lower). The Menu key's menu is the current row's, a click's
    the row under the pointer; Return on a row focuses its head as a click does."""
    from PySide6 import QtCore, QtGui
    panel = window.panels["metrics"]
    window.docking.go_to("metrics")
    panel.render(window.trace, window.state)
    opened = []
    monkeypatch.setattr(panel, "open_menu", lambda menu, where: opened.append(menu.actions()[0].text()))
    table = panel.table
    table.setFocus()
    for row in (2, 5):
        table.setCurrentIndex(panel.proxy.index(row, 0))
        key = panel.row_key(row)
        kind, layer, head = key
        corner = QtCore.QPoint(5, 5)                             # the table's own corner, as the key gives it
        table.contextMenuEvent(QtGui.QContextMenuEvent(QtGui.QContextMenuEvent.Reason.Keyboard, corner,
                                                       table.mapToGlobal(corner)))
        assert opened[-1].endswith(f"layer {layer + 1}, head {head + 1}"), (opened[-1], key)
        qtbot.keyClick(table, QtCore.Qt.Key.Key_F10, QtCore.Qt.KeyboardModifier.ShiftModifier)    # (it did nothing)
        assert len(opened) == 2 * (row == 5) + 2 and opened[-1] == opened[-2]
        qtbot.keyClick(table, QtCore.Qt.Key.Key_Return)
        assert (window.state.kind, window.state.layer, window.state.head) == key
    rect = table.visualRect(panel.proxy.index(3, 0))            # a right-click: the row under the pointer
    table.contextMenuEvent(QtGui.QContextMenuEvent(QtGui.QContextMenuEvent.Reason.Mouse, rect.center(),
                                                   table.viewport().mapToGlobal(rect.center())))
    kind, layer, head = panel.row_key(3)
    assert opened[-1].endswith(f"layer {layer + 1}, head {head + 1}")


def test_the_mean_over_heads_leaves_the_heads_switched_off_out(qtbot, window):
    """QA: "Mean over heads" with a head off showed every head's mean."""
    import numpy as np
    window.state.update(kind="cross", layer=0, head=0)
    window.state.toggle_ablation("cross", 0, 1)
    wait_for_run(qtbot, window, ["cross:1:2"])
    window.attention.mean.setChecked(True)
    weights = window.trace.attention("cross", 0)
    mask = window.trace.mask("cross", 0)
    expected = np.where(mask, np.delete(weights, 1, axis=0).mean(0), np.nan)
    np.testing.assert_allclose(window.attention.focused_array, expected, rtol=1e-5)
    n = window.trace.schema.n_heads
    assert (f"mean of the {n - 1} heads on" if n > 2 else "the one head on, head\u00a01") in \
        window.attention.focus.plot.titleLabel.text
    window.state.toggle_ablation("cross", 0, 1)              # on again: every head's mean, redrawn
    wait_for_run(qtbot, window, [])
    np.testing.assert_allclose(window.attention.focused_array,
                               np.where(mask, window.trace.attention("cross", 0).mean(0), np.nan), rtol=1e-5)
    assert "mean of heads" in window.attention.focus.plot.titleLabel.text


def test_a_head_off_in_class_at_1024_keeps_the_window_on_the_screen(qtbot, window):
    """QA: presentation mode at 1024 × 768 with a head off made the window 1198 pixels wide: the status bar's labels
    (model, tokens, time, the head's name) each asked for their whole text. Squeezed, they take shorter forms."""
    window.resize(1024, 768)
    window.toggle_presentation()
    try:
        window.state.toggle_ablation("cross", 0, 1)
        qtbot.waitUntil(lambda: window.ablation.note.text().startswith("1 head off: "))
        qtbot.wait(300)
        assert window.statusBar().minimumSizeHint().width() <= 1024 // 2     # it was 1016 here
        assert window.minimumSizeHint().width() <= 1024
        assert window.ablation.note.shown_text() in (window.ablation.note.text(), "1 head off")
        assert window.status_tokens.shown_text() in (window.status_tokens.text(), *window.status_tokens._shorter)
    finally:
        window.toggle_presentation()


def test_every_head_of_a_layer_or_a_kind_is_switched_off_and_on_at_once(qtbot, window):
    """Only all of a kind's heads off changed en-fr's "fatiguées", and the window took 40 right-clicks for it (QA as a
    student): the Heads menu and the attention panel's menu switch a layer's or a kind's heads off, and on again."""
    from model.ablation import spec
    schema = window.state.schema
    window.state.update(kind="cross", layer=1, head=0)
    heads = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Heads")
    heads.aboutToShow.emit()
    label = schema.kind("cross").label
    assert window.ablation.toggle_layer.text() == f"Switch off every head of {label}, layer 2"
    window.ablation.toggle_layer.trigger()
    layer = {("cross", 1, h) for h in range(schema.n_heads)}
    assert window.state.ablations == layer
    wait_for_run(qtbot, window, [spec(h) for h in sorted(layer)])
    assert np.all(window.trace["dec.1.cross.head_out"] == 0)
    heads.aboutToShow.emit()
    assert window.ablation.toggle_layer.text() == f"Switch every head of {label}, layer 2 on again"
    assert window.ablation.toggle_kind.text() == f"Switch off every head of {label}, every layer"
    window.ablation.toggle_kind.trigger()                       # the rest of the kind too
    every = {("cross", l, h) for l in range(schema.stack("dec").n_layers) for h in range(schema.n_heads)}
    assert window.state.ablations == every
    wait_for_run(qtbot, window, [spec(h) for h in sorted(every)])
    message = window.statusBar().whole_message()
    assert "one head" not in message                            # it said "one head rarely…" with many off
    menu = window.exports.attention_menu.build()                # the right-click menu: the kind on again
    act = next(a for a in menu.actions() if a.text() == f"Switch every head of {label}, every layer on again")
    act.trigger()
    assert window.state.ablations == frozenset()
