"""The live window: typing, stepping, masking, newest-request-wins, bad input, broken models."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore

from model import translate
from visualizer.actions import STEPS
from visualizer.state import MAX_CHARS


def wait_for_sentence(qtbot, window, text, timeout=20000):
    qtbot.waitUntil(lambda: window.trace is not None and window.trace.meta.get("sentence") == text
                    and not window.runs.runner.busy, timeout=timeout)


def assert_focus_equals_trace(window):
    a, t = window.attention, window.trace
    expected = t.attention(a.shown_kind, a.shown_layer, a.shown_head)
    mask = t.mask(a.shown_kind, a.shown_layer)
    shown = a.focused_array
    assert np.isnan(shown[~mask]).all()
    np.testing.assert_array_equal(shown[mask], expected[mask])
    rows, cols = t.axis_tokens(a.shown_kind)
    assert a.focused_labels == (rows, cols)


def test_typing_updates_the_focused_heatmap(qtbot, window):
    window.inputs.sentence.clear()
    qtbot.keyClicks(window.inputs.sentence, "a red car is fast")
    wait_for_sentence(qtbot, window, "a red car is fast")
    assert window.trace.src_tokens[-1] == "</s>"
    expected = translate(window.lm, "a red car is fast").trace
    assert window.trace.src_tokens == expected.src_tokens
    for kind, layer, head in (("enc_self", 0, 0), ("cross", 1, 1), ("dec_self", 1, 0)):
        window.state.update(kind=kind, layer=layer, head=head)
        assert (window.attention.shown_kind, window.attention.shown_layer, window.attention.shown_head) == (kind, layer, head)
        assert_focus_equals_trace(window)
        np.testing.assert_array_equal(window.trace.attention(kind, layer, head), expected.attention(kind, layer, head))


def test_each_run_checks_the_last_translation_first_and_still_shows_greedy_output(qtbot, window, monkeypatch):
    """Typing on: every run gets the translation on screen as its previous run, and shows what plain greedy
    decoding of the new sentence gives; a space that leaves the source pieces as they were runs nothing."""
    import visualizer.runs as runs_module

    previous = []
    real = runs_module.translate

    def spy(lm, text, settings, **kwargs):
        previous.append(kwargs["previous"])
        return real(lm, text, settings, **kwargs)

    monkeypatch.setattr(runs_module, "translate", spy)
    before = window.translation
    for text in ("the dog runs", "the dog runs fast", "we eat bread"):
        window.inputs.sentence.setText(text)
        wait_for_sentence(qtbot, window, text)
        assert previous[-1] is before
        assert window.translation.out_ids == translate(window.lm, text).out_ids     # no draft: plain greedy
        before = window.translation
    drawn = []
    for name, panel in window.panels.items():
        monkeypatch.setattr(panel, "render", lambda *a, name=name: drawn.append(name))
    window.inputs.sentence.setText("we eat bread ")
    wait_for_sentence(qtbot, window, "we eat bread ")
    assert window.trace.arrays is before.trace.arrays and window.trace.meta["sentence"] == "we eat bread "
    assert drawn == []                              # the panels show that run already: nothing is drawn again
    window.inputs.sentence.setText("we eat brea")
    wait_for_sentence(qtbot, window, "we eat brea")
    assert drawn                                    # (the spy sees renders)


def test_stepping_keys_move_the_view_and_the_map_follows(qtbot, window):
    s, acts, arch = window.state, window.menus.step_actions, window.architecture
    acts["First stage"].trigger()
    assert (s.stack, s.layer, s.sublayer) == ("src_embed", 0, "")
    assert arch.highlighted == s.stage
    acts["Next sublayer"].trigger()
    assert (s.stack, s.layer, s.sublayer, s.kind) == ("enc", 0, "self", "enc_self")
    acts["Next sublayer"].trigger()
    assert (s.stack, s.layer, s.sublayer) == ("enc", 0, "ffn")
    acts["Next layer"].trigger()
    assert (s.stack, s.layer, s.sublayer) == ("enc", 1, "ffn")
    acts["Previous layer"].trigger()
    assert s.layer == 0
    acts["Next head"].trigger()
    assert s.head == 1
    acts["Next head"].trigger()
    assert s.head == 1                     # the tiny model has 2 heads: clamped
    acts["Previous head"].trigger()
    assert s.head == 0
    acts["Last stage"].trigger()
    assert s.stack == "output" and arch.highlighted == s.stage
    acts["Next step"].trigger()
    assert s.step == 1
    acts["Previous step"].trigger()
    assert s.step == 0
    # the keyboard shortcut reaches the same action
    acts["First stage"].trigger()
    qtbot.keyClick(window, QtCore.Qt.Key.Key_Right, QtCore.Qt.KeyboardModifier.AltModifier)
    assert (s.stack, s.sublayer) == ("enc", "self")
    # clicking a box of the map moves the view there
    from visualizer.state import Stage
    target = Stage("dec", 1, "cross")
    qtbot.mouseClick(arch, QtCore.Qt.MouseButton.LeftButton, pos=arch.boxes[target].center().toPoint())
    assert s.stage == target and s.kind == "cross" and arch.highlighted == target


def test_the_toolbar_greys_the_steps_that_would_not_move_the_view(qtbot, window):
    """At the pipeline's ends, the last head or the last step a bright button did nothing when pressed: greyed
    there, and each bright one moves the view."""
    s, acts, bar = window.state, window.menus.step_actions, window.menus.nav_toolbar
    bright = lambda label: bar.widgetForAction(acts[label]).isEnabled()      # noqa: E731
    acts["First stage"].trigger()
    assert not bright("First stage") and not bright("Previous sublayer") and not bright("Previous layer")
    assert bright("Next sublayer") and bright("Last stage") and bright("Next layer")
    s.update(head=s.n_heads - 1, step=s.n_steps - 1)
    assert not bright("Next head") and not bright("Next step") and bright("Previous head") and bright("Previous step")
    acts["Last stage"].trigger()
    assert not bright("Last stage") and not bright("Next sublayer") and not bright("Next layer")
    assert bright("First stage") and bright("Previous layer")
    for stage in s.stages():                      # every bright button moves the view, every grey one would not
        s.go_to(stage)
        for label, _, _, method, _ in STEPS:
            before, shown = (s.stage, s.head, s.step), bright(label)
            moved = bool(getattr(s, method)())
            assert moved == shown == ((s.stage, s.head, s.step) != before), (stage, label)
            s.update(stack=before[0].stack, layer=before[0].layer, sublayer=before[0].sublayer,
                     head=before[1], step=before[2])


def test_a_crowded_toolbar_names_each_pair_of_steps_once_and_hides_none(qtbot, window):
    """At a class's text size ◀ Step and Step ▶ went behind the toolbar's "»" menu (QA as a teacher): where the
    words do not fit, "◀" and "Sublayer ▶", "«" and "»"; the menus keep the full names; wide again, the words."""
    from PySide6 import QtGui
    from visualizer.nav_toolbar import tight
    bar, acts = window.menus.nav_toolbar, window.menus.step_actions
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: not window.menus.fitted.is_tight)
    acts["First stage"].trigger()
    window.state.update(head=0, step=0)
    greyed = {label for label, a in acts.items() if not bar.widgetForAction(a).isEnabled()}
    assert {"First stage", "Previous sublayer", "Previous head", "Previous step"} <= greyed
    whole = {label: a.iconText() for label, a in acts.items()}
    assert whole["Previous step"] == "◀ Step" and whole["First stage"] == "« First"
    font = QtGui.QFont(bar.font())
    font.setPointSizeF(3 * font.pointSizeF())
    bar.setFont(font)
    qtbot.waitUntil(lambda: window.menus.fitted.is_tight)
    assert [a.iconText() for a in acts.values()] == ["«", "◀", "Sublayer ▶", "»", "▲", "Layer ▼", "◀", "Head ▶",
                                                     "◀", "Step ▶"]
    assert all(tight(whole[label]) == a.iconText() for label, a in acts.items())
    assert all(bar.widgetForAction(a).isVisible() for a in acts.values())          # none behind "»"
    assert acts["Previous step"].text() == "Previous step"                         # the menu's name
    # a button takes its action's state at each change of its texts: the steps that would not move stay grey
    assert {label for label, a in acts.items() if not bar.widgetForAction(a).isEnabled()} == greyed
    bar.setFont(QtGui.QFont(window.font()))
    qtbot.waitUntil(lambda: not window.menus.fitted.is_tight)
    assert {label: a.iconText() for label, a in acts.items()} == whole
    assert {label for label, a in acts.items() if not bar.widgetForAction(a).isEnabled()} == greyed


def test_the_greyed_steps_follow_a_new_sentences_length(qtbot, window):
    """QA: at the last step (Step ▶ grey) a longer sentence's run left Step ▶ grey at step 5 of 8, and a shorter
    one's left it bright at its last step: the new run's number of steps changes what a step can reach."""
    s, bar = window.state, window.menus.nav_toolbar
    step_on = lambda: bar.widgetForAction(window.menus.step_actions["Next step"]).isEnabled()    # noqa: E731
    window.inputs.sentence.setText("we eat")
    wait_for_sentence(qtbot, window, "we eat")
    short = window.trace.n_steps
    s.update(stack="dec", layer=0, sublayer="cross", step=short - 1)
    assert not step_on()
    longer = "we eat bread and the cat sat on the mat with a dog"
    window.inputs.sentence.setText(longer)
    wait_for_sentence(qtbot, window, longer)
    assert window.trace.n_steps > s.step + 1 and step_on()
    s.update(step=window.trace.n_steps - 2)
    assert step_on()
    window.inputs.sentence.setText("we eat")
    wait_for_sentence(qtbot, window, "we eat")
    assert s.step == window.trace.n_steps - 1 and not step_on()         # clamped to the shorter run's last


def test_step_highlights_the_decoder_row(qtbot, window):
    window.state.update(kind="cross", step=2)
    box = window.attention.focus.row_box
    assert box.isVisible() and box.rect().center().y() == 2      # row 2 is centred on 2


def test_decoder_self_attention_masked_cells_are_drawn_masked(qtbot, window):
    window.state.update(kind="dec_self", layer=0, head=0)
    shown = window.attention.focused_array
    T = shown.shape[0]
    upper = np.triu(np.ones((T, T), dtype=bool), 1)
    assert T > 1 and np.isnan(shown[upper]).all()
    assert not np.isnan(shown[~upper]).any()


def test_the_model_runs_at_the_keystroke_and_the_panels_are_drawn_when_typing_pauses(qtbot, window):
    window.runs.debounce.setInterval(2000)               # long enough to see the run end before it
    runs, old = window.runs.runner.runs, window.trace.meta["sentence"]
    window.inputs.sentence.setText("the cat sleeps")
    qtbot.waitUntil(lambda: window.runs.held is not None, timeout=5000)
    assert window.runs.debounce.isActive() and window.trace.meta["sentence"] == old     # ready, not drawn yet
    wait_for_sentence(qtbot, window, "the cat sleeps", timeout=5000)
    assert window.runs.runner.runs == runs + 1           # the run that started at the keystroke is the one drawn
    assert window.translation.out_ids == translate(window.lm, "the cat sleeps").out_ids


def test_rapid_typing_renders_only_the_newest_sentence(qtbot, window):
    """Each keystroke starts a run (a newer one supersedes any still waiting); only the sentence typed last is
    drawn, once, when the typing pauses."""
    field = window.inputs.sentence
    field.clear()
    wait_for_sentence(qtbot, window, "")
    runs_before = window.runs.runner.runs
    shown = []
    window.trace_shown.connect(lambda: shown.append(window.trace.meta["sentence"]))
    text = "where is the station and the big house"
    for ch in text:
        field.insert(ch)
        qtbot.wait(5)
    wait_for_sentence(qtbot, window, text)
    qtbot.wait(window.runs.debounce.interval() + 100)
    assert shown == [text]
    assert window.runs.rendered_seq == window.runs.seq
    assert window.runs.runner.runs - runs_before < len(text)         # requests that waited behind a newer one: skipped
    assert window.attention.focused_labels[1] == window.trace.axis_tokens(window.attention.shown_kind)[1]


@pytest.mark.parametrize("text", ["", "    ", "x" * 10_000, "I ❤️ 🐈 emoji 👍🏽", "bell\x07 tab\t nul\x00 esc\x1b",
                                  "مرحبا بالعالم", "שלום עולם", "e\u0301 \u202eRTL override\u202c"])
def test_bad_input_never_raises(qtbot, window, text):
    window.inputs.sentence.setText(text)
    wait_for_sentence(qtbot, window, text[:MAX_CHARS])
    assert window.trace.src_tokens[-1] == "</s>"
    assert len(window.trace.src_tokens) <= window.lm.cfg.max_len
    if len(text) > 1000:
        assert window.inputs.notice.isVisible() and "cut" in window.inputs.notice.text()


def test_broken_model_folder_keeps_the_current_model(qtbot, window, tmp_path):
    before = window.lm
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{ not json", encoding="utf-8")
    assert window.open_model(str(broken)) is False
    assert window.lm is before
    assert "config.json" in window.last_error.splitlines()[0]
    window.inputs.sentence.setText("the dog runs")
    wait_for_sentence(qtbot, window, "the dog runs")


def test_temperature_changes_the_output_panel(qtbot, window):
    out = window.panels["output"]
    window.state.update(stack="output", sublayer="")
    window.docks["output"].raise_()
    qtbot.wait(50)
    out.render(window.trace, window.state)
    p1 = out.top_probs.copy()
    window.inputs.temperature.setValue(3.0)
    qtbot.waitUntil(lambda: abs(window.state.decoding.temperature - 3.0) < 1e-9)
    out.render(window.trace, window.state)
    np.testing.assert_allclose(out.top_probs, np.sort(window.trace.probs(window.state.step, 3.0))[::-1][:len(p1)])
    assert out.top_probs[0] < p1[0]


class EventCounter(QtCore.QObject):
    """Counts events of one type per watched object."""

    def __init__(self, event_type, watched):
        super().__init__()
        self.event_type, self.counts = event_type, {}
        for obj in watched:
            obj.installEventFilter(self)

    def eventFilter(self, obj, event):
        if event.type() == self.event_type:
            self.counts[obj] = self.counts.get(obj, 0) + 1
        return False


def change_view(window, **change):
    """A view change, then every layout and paint Qt does after it."""
    from PySide6 import QtWidgets
    window.state.update(**change)
    for _ in range(5):
        QtWidgets.QApplication.instance().processEvents()


def on_cross_attention(window):
    window.resize(1500, 950)
    change_view(window, kind="cross", layer=0, head=0, step=0)


def test_a_view_change_paints_each_changed_plot_once(qtbot, window):
    """pyqtgraph applies a new range at paint time, which used to paint every changed plot twice."""
    from PySide6 import QtWidgets

    on_cross_attention(window)
    views = {name: panel.findChildren(QtWidgets.QGraphicsView) for name, panel in window.panels.items()}
    counter = EventCounter(QtCore.QEvent.Type.Paint, [v.viewport() for vs in views.values() for v in vs])
    paints = counter.counts
    for change in (dict(step=1), dict(step=2), dict(layer=1), dict(head=1)):
        paints.clear()
        change_view(window, **change)
        assert paints and max(paints.values()) == 1, (change, paints)
    output = views["output"][0].viewport()
    paints.clear()
    change_view(window, step=3)
    assert paints.get(output) == 1 or not views["output"][0].isVisible()


def test_a_view_change_does_not_lay_the_main_window_out_again(qtbot, window):
    """A rewritten caption, header or spin box range used to relayout every dock (~10 ms a step change)."""
    on_cross_attention(window)
    counter = EventCounter(QtCore.QEvent.Type.LayoutRequest, [window, window.centralWidget(), *window.panels.values()])
    requests = counter.counts
    captions = set()
    for change in (dict(step=1), dict(step=2), dict(layer=1), dict(head=1), dict(layer=0), dict(step=0)):
        change_view(window, **change)
        captions.add(window.caption.text())
        assert requests == {}, (change, requests)
    assert len(captions) >= 3                     # the captions did change: only the layout stayed put


def test_a_missing_start_model_opens_the_default_and_says_so(qtbot, tmp_path, settings):
    """The first model opens in the background; when it cannot, the default model opens instead, with a note."""
    from visualizer.state import default_model
    from visualizer.window import MainWindow

    w = MainWindow(model=str(tmp_path / "no-such-model"), sentence="I love you.", settings=settings)
    qtbot.addWidget(w)
    assert w.lm is None                                   # the window is up before any model is loaded
    qtbot.waitUntil(lambda: w.lm is not None and w.trace is not None and not w.runs.runner.busy, timeout=60000)
    assert w.lm.name == default_model() and w.state.model_name == default_model()
    assert "Cannot open" in w.statusBar().whole_message() and "no-such-model" in w.statusBar().whole_message()
    assert w.trace.meta["sentence"] == "I love you."


def test_the_app_translates_on_one_torch_thread(qtbot, window):
    """One sentence at a time is faster on one thread (see worker.one_torch_thread), unless the user says."""
    import os

    import torch
    if "OMP_NUM_THREADS" in os.environ:
        assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])
    else:
        assert torch.get_num_threads() == 1


def test_a_model_folder_is_named_as_the_picker_names_it(qtbot, window, tiny_model_dir):
    """The status bar and the exported figures' titles said "tiny", the folder's last part: for a training run's
    …/run/model every model was "model". They say what the picker says."""
    from visualizer.controls import model_label
    from visualizer.export import heatmap_specs
    name = model_label(str(tiny_model_dir))
    assert "/" in name and window.inputs.model.currentText() == name
    assert window.model_name == name and f"Model: {name} (" in window.status_model.text()
    assert name in heatmap_specs(window.trace, window.model_name)[0].title


def test_a_status_message_and_the_status_fields_do_not_run_together(qtbot, window):
    """'Wrote 12 frames to …/anim.gifModel: en-fr (…)': the message ended where the model's field began."""
    window.statusBar().showMessage("Wrote 12 frames to /tmp/anim.gif")
    qtbot.wait(50)
    fields = (window.status_model, window.status_tokens, window.status_time)
    assert all(f.contentsMargins().left() >= 10 for f in fields)
    assert all(b.x() - (a.x() + a.width()) >= 0 for a, b in zip(fields, fields[1:]))


def test_a_long_unbroken_translation_wraps_instead_of_widening_the_window(qtbot, window):
    """An undertrained model's "apidapidapid…" asked for its whole width: the window grew past the screen (QA)."""
    import dataclasses
    from visualizer.text_safety import ZERO_WIDTH_SPACE, breakable_html
    window.resize(1000, 700)
    qtbot.wait(50)
    width = window.width()
    garbled = dataclasses.replace(window.translation, text="apid" * 400)
    window.translation = garbled                  # (what a refit at a new compact level writes again)
    window._set_translation(garbled)
    qtbot.wait(50)
    assert window.width() == width and window.inputs.translation.minimumSizeHint().width() < width
    assert ("apid" * 6 + ZERO_WIDTH_SPACE) in window.inputs.translation.text()
    assert breakable_html("a <b> " + "x" * 30) == "a &lt;b&gt; " + "x" * 24 + ZERO_WIDTH_SPACE + "x" * 6
    assert breakable_html("short words stay whole") == "short words stay whole"


def test_a_squeezed_status_bar_shortens_the_models_field_instead_of_overlapping(qtbot, window):
    """With large text the model's field was cut mid-word under the next one ("8 hea7 source / 7 output")."""
    from PySide6 import QtGui
    font = QtGui.QFont(window.font())
    font.setPointSizeF(20)
    window.statusBar().setFont(font)
    for w in (window.status_model, window.status_tokens, window.status_time):
        w.setFont(font)
    window.resize(900, 700)
    qtbot.wait(100)
    fields = (window.status_model, window.status_tokens, window.status_time)
    assert all(b.x() - (a.x() + a.width()) >= 0 for a, b in zip(fields, fields[1:]))
    shown = window.status_model.shown_text()
    name = window.model_name
    assert shown in (window.status_model.text(), f"Model: {name}", name) or shown.endswith("…")
    assert window.status_model.fontMetrics().horizontalAdvance(shown) <= window.status_model.contentsRect().width()
    assert window.status_model.text().startswith(f"Model: {name} (")


def test_the_captions_step_token_never_breaks_across_lines(qtbot, window):
    """QA: in a narrow caption the step's token "</s>" read "(“</" on one line and "s>”)" on the next."""
    from visualizer.text_safety import unbreakable_html
    last = window.trace.n_steps - 1
    window.state.update(kind="cross", step=last)
    token = window.trace.out_tokens[last]
    assert unbreakable_html(f"(“{token}”)") in window.caption.text()
