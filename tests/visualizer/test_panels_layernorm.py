"""The LayerNorm panel shows μ, σ, γ, β and the before/after values of the Add & Norm in view."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from model import translate
from visualizer.panels.layernorm import LayerNormPanel, ln_stage
from visualizer.plotting.colormaps import BLUE, VERMILLION
from visualizer.state import ViewState


@pytest.fixture
def panel(qtbot):
    p = LayerNormPanel()
    qtbot.addWidget(p)
    p.resize(900, 800)
    p.show()
    return p


@pytest.mark.parametrize("stack,layer,sub", [("enc", 0, "self"), ("enc", 1, "ffn"), ("dec", 0, "cross"),
                                             ("dec", 1, "self"), ("dec", 1, "ffn")])
def test_statistics_equal_the_trace(panel, trace, stack, layer, sub):
    panel.render(trace, ViewState.for_trace(trace, stack=stack, layer=layer, sublayer=sub))
    assert panel.stage == (stack, layer, sub) and panel.note == "" and not panel.notice.isVisibleTo(panel)
    get = lambda name: trace.get(stack, layer, sub, name)
    for key, name in (("mu", "ln_mean"), ("sigma", "ln_sigma"), ("gamma", "gamma"), ("beta", "beta"),
                      ("before", "residual"), ("after", "ln_out")):
        np.testing.assert_array_equal(panel.shown[key], get(name))
    v = get("residual").astype(np.float64)
    np.testing.assert_allclose(panel.shown["mu"], v.mean(-1), atol=1e-5)           # μ, σ of the input v
    np.testing.assert_allclose(panel.shown["sigma"], np.sqrt(v.var(-1) + 1e-5), rtol=1e-4)
    np.testing.assert_allclose(panel.mu_bars.opts["height"], get("ln_mean"))
    np.testing.assert_allclose(panel.sigma_bars.opts["height"], get("ln_sigma"))
    np.testing.assert_allclose(panel.gamma_curve.getData()[1], get("gamma"))
    np.testing.assert_allclose(panel.beta_curve.getData()[1], get("beta"))
    tokens = trace.src_tokens if stack == "enc" else trace.tgt_tokens
    assert panel.tokens == tokens and panel.mu_plot.item.getAxis("bottom").labels == tokens
    for key in ("before", "after"):                    # every value counted once, from its own array
        edges, counts = panel.hist[key]
        assert counts.sum() == v.size
        np.testing.assert_array_equal(counts, np.histogram(panel.shown[key], bins=edges)[0])
    header = panel.header.text()
    assert f"layer {layer + 1}" in header and trace.schema.norm_equation in header.replace("&nbsp;", " ")
    assert ("Encoder" if stack == "enc" else "Decoder") in header
    assert {"self": "self-attention", "cross": "cross-attention", "ffn": "feed-forward"}[sub] in header
    d = v.shape[-1]                                    # σ as the header defines it: the variance divided by d
    assert f"σ = √(var + ε) over the {d} dimensions" in header
    assert f"(the variance ÷ {d}, not {d - 1}; ε = " in header


@pytest.mark.parametrize("stack,expected", [("src_embed", ("enc", 0, "self")), ("tgt_embed", ("dec", 0, "self")),
                                            ("output", ("dec", 1, "ffn"))])
def test_embedding_and_output_show_the_nearest_layernorm_and_say_so(panel, trace, stack, expected):
    panel.render(trace, ViewState.for_trace(trace, stack=stack))
    assert panel.stage == expected
    assert "nearest" in panel.note and panel.notice.isVisibleTo(panel) and "nearest" in panel.notice.text()
    np.testing.assert_array_equal(panel.shown["mu"], trace.get(*expected, "ln_mean"))


def test_decoder_bar_of_the_generation_step_is_highlighted(panel, trace):
    panel.render(trace, ViewState.for_trace(trace, stack="dec", layer=0, sublayer="self", step=2))
    assert panel.highlight == 2
    mu = trace.get("dec", 0, "self", "ln_mean")
    for mark in (panel.mu_mark, panel.sigma_mark):              # one vermillion bar over the blue ones
        assert list(mark.opts["x"]) == [2] and pg.mkBrush(mark.opts["brush"]).color().name() == VERMILLION
    assert panel.mu_mark.opts["height"] == [pytest.approx(float(mu[2]))]
    assert pg.mkBrush(panel.mu_bars.opts["brush"]).color().name() == BLUE and panel.mu_bars.opts["brushes"] is None
    panel.render(trace, ViewState.for_trace(trace, stack="enc", step=2))
    assert panel.highlight is None and list(panel.mu_mark.opts["x"]) == []


def test_ln_stage_clamps_odd_states(trace):
    class S:
        stack, layer, sublayer = "dec", 9, "bogus"
    assert ln_stage(S, trace.schema) == ("dec", 1, "self", "")
    S.stack = "nowhere"
    assert ln_stage(S, trace.schema)[:3] == ("enc", 0, "self")


def test_every_stage_and_step_renders(panel, tiny_lm):
    for text in ("", "the cat sat on the mat", "the " * 70):
        tr = translate(tiny_lm, text).trace
        s = ViewState.for_trace(tr)
        for stage in tr.schema.stages():
            for step in range(tr.n_steps):
                s.update(stack=stage.stack, layer=stage.layer, sublayer=stage.sublayer, step=step)
                panel.render(tr, s)
        panel.grab()


def test_a_step_change_moves_the_highlight_and_a_new_run_redraws_everything(panel, trace, tiny_lm):
    """Within one Add & Norm a step only recolours bars; another run at the same stage shows its own numbers."""
    view = dict(stack="dec", layer=1, sublayer="cross")
    panel.render(trace, ViewState.for_trace(trace, step=0, **view))
    panel.render(trace, ViewState.for_trace(trace, step=3, **view))
    assert panel.highlight == 3 and "generation step 3" in panel.header.text()
    assert list(panel.mu_mark.opts["x"]) == [3]
    assert panel.sigma_mark.opts["height"] == [pytest.approx(float(trace.get("dec", 1, "cross", "ln_sigma")[3]))]
    np.testing.assert_array_equal(panel.mu_bars.opts["height"], trace.get("dec", 1, "cross", "ln_mean"))
    other = translate(tiny_lm, "a dog ran to the house and the cat sat").trace
    panel.render(other, ViewState.for_trace(other, step=3, **view))
    np.testing.assert_array_equal(panel.shown["mu"], other.get("dec", 1, "cross", "ln_mean"))
    np.testing.assert_array_equal(panel.mu_bars.opts["height"], other.get("dec", 1, "cross", "ln_mean"))
    edges, counts = panel.hist["after"]
    assert counts.sum() == other.get("dec", 1, "cross", "ln_out").size


def test_plots_scrolled_out_of_sight_are_updated_when_they_come_into_sight(qtbot, trace):
    """A layer change leaves the plots below the fold alone; scrolling to them brings them up to date."""
    from PySide6 import QtWidgets
    panel = LayerNormPanel()
    qtbot.addWidget(panel)
    panel.resize(460, 520)                            # one column: γ and β are far below the fold
    panel.show()
    qtbot.waitExposed(panel)
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=0, sublayer="self"))
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    assert panel.gamma_plot._scrolled_out() and not panel.mu_plot._scrolled_out()
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=1, sublayer="ffn"))
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    new = trace.get("enc", 1, "ffn", "gamma")
    assert panel.gamma_curve.getData()[1] is None           # neither run's γ drawn while out of sight
    np.testing.assert_allclose(panel.mu_bars.opts["height"], trace.get("enc", 1, "ffn", "ln_mean"))  # in sight
    panel.grid.ensureWidgetVisible(panel.gamma_plot)
    qtbot.waitUntil(lambda: panel.gamma_curve.getData()[1] is not None, timeout=3000)
    np.testing.assert_allclose(panel.gamma_curve.getData()[1], new)       # the newest run's, not the first's
    panel.grid.ensureWidgetVisible(panel.beta_plot)
    qtbot.waitUntil(lambda: panel.beta_curve.getData()[1] is not None, timeout=3000)
    np.testing.assert_allclose(panel.beta_curve.getData()[1], trace.get("enc", 1, "ffn", "beta"))


def test_every_layers_histograms_are_counted_once_in_the_background(panel, trace):
    from visualizer.panels.layernorm import norm_array_keys
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=0, sublayer="self"))
    panel.stats.background.wait()                                   # the warm-up before it is done
    keys = norm_array_keys(trace)
    assert len(keys) == 2 * sum(st.n_layers * len(st.sublayers) for st in trace.schema.stacks)
    for key in keys:
        values = trace.arrays[key]
        edges, counts, mean, std = panel.stats.of(values)
        assert panel.stats.of(values)[1] is counts                   # counted once, then looked up
        np.testing.assert_array_equal(counts, np.histogram(values, bins=edges)[0])
        assert mean == pytest.approx(float(values.mean())) and std == pytest.approx(float(values.std()))
    # what a later render shows is the stored count
    panel.render(trace, ViewState.for_trace(trace, stack="dec", layer=1, sublayer="cross"))
    assert panel.hist["after"][1] is panel.stats.of(trace.get("dec", 1, "cross", "ln_out"))[1]


def test_a_short_panel_keeps_the_headers_title_and_equation_and_tooltips_the_rest(panel, trace, qtbot):
    """At 1280 × 720 the whole header took 135 of the panel's 225 pixels and the first plot showed its top: below
    SHORT_PANEL_LINES lines the header is its title (with the step) and equation, what v, μ and σ are is its
    tooltip, and the plots get the room; tall again, the header is whole, and its tooltip empty."""
    from PySide6 import QtGui
    from visualizer.panels.widgets import SHORT_PANEL_LINES
    panel.render(trace, ViewState.for_trace(trace, stack="dec", layer=1, sublayer="cross", step=2))
    d = trace.get("dec", 1, "cross", "residual").shape[-1]
    detail = f"over the {d} dimensions"
    qtbot.wait(100)                         # (laid out)
    whole = panel.header.height()
    assert detail in panel.header.text() and panel.header.toolTip() == ""
    line = QtGui.QFontMetrics(panel.header.label.font()).height()
    panel.resize(900, (SHORT_PANEL_LINES - 2) * line)
    qtbot.waitUntil(lambda: detail not in panel.header.text() and panel.header.height() < whole)
    assert detail in panel.header.toolTip() and "generation step 2" in panel.header.text()
    assert trace.schema.norm_equation in panel.header.text().replace("&nbsp;", " ")
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=0, sublayer="self"))    # stays short
    assert "Encoder layer 1" in panel.header.text() and detail not in panel.header.text()
    panel.resize(900, (SHORT_PANEL_LINES + 2) * line)
    qtbot.waitUntil(lambda: detail in panel.header.text() and panel.header.toolTip() == "")


def test_in_a_docks_scroll_area_the_panel_takes_the_docks_height_and_its_header_follows_it(qtbot, trace):
    """In the window the panel sits in a scroll area (widgetResizable, as the docks make them): it is given the
    area's height, not its layout's height for its width (508 pixels in a 217-pixel dock, two scroll bars: QA),
    and its header's short form follows the room the dock gives."""
    from PySide6 import QtGui, QtWidgets
    from visualizer.panels.widgets import SHORT_PANEL_LINES
    area = QtWidgets.QScrollArea()
    area.setWidgetResizable(True)
    panel = LayerNormPanel()
    area.setWidget(panel)
    qtbot.addWidget(area)
    line = QtGui.QFontMetrics(panel.header.label.font()).height()
    area.resize(600, (SHORT_PANEL_LINES + 4) * line)
    area.show()
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=0, sublayer="ffn"))
    detail = "over the"
    qtbot.waitUntil(lambda: detail in panel.header.text())
    area.resize(600, 12 * line)
    qtbot.waitUntil(lambda: detail not in panel.header.text() and detail in panel.header.toolTip())
    qtbot.waitUntil(lambda: panel.height() == area.viewport().height())
    assert area.verticalScrollBar().maximum() == 0              # the plots scroll in the panel's grid alone


def test_a_note_in_a_narrow_panel_is_shown_whole(qtbot, panel, trace):
    """QA at 1366 × 768 in class: the output stage's three-line note in the LayerNorm dock was cut through its third
    line (the layout asked a wrapped label's height at a width of its own guessing)."""
    from PySide6 import QtGui, QtWidgets
    dock = QtWidgets.QScrollArea()                  # as a dock holds a panel
    dock.setWidgetResizable(True)
    dock.setWidget(panel)
    dock.resize(330, 250)
    dock.show()
    panel.render(trace, ViewState.for_trace(trace, stack="output"))
    notice = panel.notice
    qtbot.waitUntil(lambda: notice.isVisible())
    font = QtGui.QFont(panel.font())
    font.setPointSizeF(font.pointSizeF() * 1.6)     # presentation mode's larger text, at the dock's width
    panel.setFont(font)
    qtbot.wait(100)
    assert notice.heightForWidth(notice.width()) > 2 * notice.fontMetrics().height()     # three lines or more
    assert notice.height() >= notice.heightForWidth(notice.width())
    dock.takeWidget()                               # (the panel is the fixture's to close)
    dock.deleteLater()


def test_the_charts_text_grows_with_a_larger_application_font_never_below_its_own(panel, trace):
    """Presentation mode at 1080p (19.6 points): the LayerNorm charts' tokens, numbers and titles stayed at 12
    to 14 points beside it. Every chart follows it 2 points below (titles 2 above that), never below 12."""
    from PySide6 import QtGui

    from visualizer.plotting.text import TICK_PT
    panel.render(trace, ViewState.for_trace(trace, stack="enc", layer=0, sublayer="self"))
    plots = (panel.mu_plot, panel.sigma_plot, panel.before_plot, panel.after_plot, panel.gamma_plot,
             panel.beta_plot)
    ticks = lambda plot: [plot.item.getAxis(s).style["tickFont"].pointSizeF() for s in ("left", "bottom")]
    assert all(ticks(p) == [TICK_PT, TICK_PT] for p in plots)
    width = panel.gamma_plot.item.getAxis("left").fixedWidth
    big = QtGui.QFont(panel.font())
    big.setPointSizeF(19.6)
    panel.setFont(big)                                   # as the application font reaches the panel
    for plot in plots:
        assert plot.text_pt == 17.6 and plot.title_pt == 19.6 and ticks(plot) == [17.6, 17.6]
        assert "font-size: 18.6pt" in plot.item.getAxis("bottom").labelString()
        assert plot.item.titleLabel.opts["size"] == "19.6pt"
    assert panel.mu_plot.item.getAxis("bottom").base_font.pointSizeF() == 17.6          # the token labels
    assert all(p.minimumHeight() == round(p.base_min_height * 17.6 / 12) for p in plots)   # room for them
    assert panel.gamma_plot.item.getAxis("left").fixedWidth > width          # room for the larger numbers
    assert "all " in panel.before_plot.title and "mean" in panel.before_plot.title     # the title kept its text
    assert "font-size:17.6pt'>all " in panel.before_plot.title          # its figures at the ticks' size
    small = QtGui.QFont(big)
    small.setPointSizeF(10)
    panel.setFont(small)                                 # the normal size: the plots' own
    assert all(ticks(p) == [TICK_PT, TICK_PT] and p.text_pt == TICK_PT for p in plots)
    assert panel.gamma_plot.item.getAxis("left").fixedWidth == width
    assert all(p.minimumHeight() == p.base_min_height for p in plots)


def test_a_heatmap_chart_s_colour_bar_follows_the_font_too(qtbot):
    from PySide6 import QtGui

    from visualizer.plotting.plot_box import HeatmapBox
    box = HeatmapBox("a map", "token", "dimension", col_tokens=False)
    qtbot.addWidget(box)
    big = QtGui.QFont(box.font())
    big.setPointSizeF(19.6)
    box.setFont(big)
    assert box.colorbar.axis.style["tickFont"].pointSizeF() == 17.6
    assert box.row_axis.base_font.pointSizeF() == 17.6


def test_a_short_colour_bar_holds_as_many_numbers_as_it_has_room_for(qtbot):
    """A Compare runs matrix 45 pixels tall at a class's text size drew its six numbers on top of each other (QA):
    the bar keeps as many as fit a line and a gap each, its two ends at least."""
    from PySide6 import QtGui

    from visualizer.plotting.plot_box import HeatmapBox
    box = HeatmapBox("a map", "token", "token")
    qtbot.addWidget(box)
    box.resize(500, 500)
    box.show()
    box.show_matrix(np.random.default_rng(0).random((6, 6)), list("abcdef"), list("abcdef"), levels=(0.0, 0.93))
    numbers = lambda: [text for value, text in box.colorbar.axis._tickLevels[0]]      # noqa: E731
    qtbot.waitUntil(lambda: len(numbers()) >= 5)
    big = QtGui.QFont(box.font())
    big.setPointSizeF(19.6)
    box.setFont(big)
    box.setMinimumHeight(0)
    box.resize(500, 230)
    qtbot.waitUntil(lambda: len(numbers()) <= 3)
    line = QtGui.QFontMetricsF(box.colorbar.axis.style["tickFont"]).height()
    assert numbers()[0] == "0" and numbers()[-1] == "0.93"
    assert len(numbers()) * 1.6 * line <= box.colorbar.getAxis("left").height() or len(numbers()) == 2


def test_a_histograms_mean_never_reads_minus_zero(panel, qtbot):
    """The seed example's normed values averaged −0.0002: the title read "mean -0.00" (QA as a student)."""
    from model import load
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    after = tr.get("enc", 0, "self", "ln_out").astype(np.float64).mean()
    assert -0.005 < after < 0                            # the case at hand: a mean that rounds to "-0.00"
    panel.render(tr, ViewState.for_trace(tr, stack="enc", layer=0, sublayer="self"))
    qtbot.waitUntil(lambda: "after" in panel._hist_titles, timeout=3000)
    figures = panel._hist_titles["after"][1]
    assert "mean -0.00" not in figures and f"mean {round(after, 2) + 0.0:.2f}" in figures


def test_the_header_gives_epsilons_value(panel, tiny_lm):
    """σ = √(var + ε) without ε's value anywhere (QA as a student): the run records it, the header gives it."""
    tr = translate(tiny_lm, "the cat sat").trace
    assert tr.norm_eps == tiny_lm.cfg.ln_eps
    panel.render(tr, ViewState.for_trace(tr, stack="enc", layer=0, sublayer="self"))
    assert panel.short_header.parts[1].endswith(f"(the variance ÷ 16, not 15; ε = {tiny_lm.cfg.ln_eps:g})")


def test_axes_of_things_counted_tick_whole_numbers_only(panel, qtbot):
    """The seed example's 2 dimensions were ticked 0, 0.5 and 1, and its histograms' counts 0.5 and 1.5 (a student
    asked what dimension 0.5 was): dimensions, counts, positions tick at whole numbers, the values as before."""
    from model import load
    from visualizer.panels.embeddings import EmbeddingsPanel
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    panel.render(tr, ViewState.for_trace(tr, stack="enc", layer=0, sublayer="self"))
    embeddings = EmbeddingsPanel()
    qtbot.addWidget(embeddings)
    embeddings.resize(900, 800)
    embeddings.show()
    embeddings.render(tr, ViewState.for_trace(tr, stack="src_embed"))
    qtbot.wait(50)

    def ticks(axis) -> list[float]:
        lo, hi = axis.range
        return [v for _, values in axis.tickValues(lo, hi, axis.width() or axis.height() or 400) for v in values]
    counted = [panel.gamma_plot.item.getAxis("bottom"), panel.beta_plot.item.getAxis("bottom"),
               panel.before_plot.item.getAxis("left"), panel.after_plot.item.getAxis("left"),
               *(m.item.getAxis("bottom") for m in embeddings.maps.values())]
    for axis in counted:
        shown = ticks(axis)
        assert shown and all(float(v).is_integer() for v in shown), (axis.labelText, shown)
    values = ticks(panel.after_plot.item.getAxis("bottom"))          # LN(v)'s values keep their fractions
    assert any(not float(v).is_integer() for v in values)
