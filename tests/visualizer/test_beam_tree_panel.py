"""Beam tree panel: what it draws is the recorded tree (a label per hypothesis, an edge per hypothesis in its fate's
pen, the chosen path thick in the accent colour along one row, pruned ones grey), labels never overlap (k = 8,
30 steps, presentation-sized text, zoomed out), greedy decoding gets one line and a button, and a click on a
hypothesis shows the decoder's attention for it: the attention panel then holds trace_run over that prefix."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from model import trace_run, translate
from model.beam_tree import CHOSEN, FINISHED, KEPT, META_KEY, NODE_KEY, PRUNED, BeamRecorder, Penalty, tree_of
from model.config import DecodingSettings
from model.decoding import encode_source
from model.synthetic import synthetic_trace
from model.trace import Trace
from visualizer.panels.beam_tree import ACCENT, GREEDY_NOTE, STYLE, BeamTreePanel
from visualizer.plot_menu import widget_export
from visualizer.plotting.scenes import settle_scenes

BEAM = DecodingSettings(method="beam", beam=3, max_new=10)


@pytest.fixture(scope="module")
def beam_result(tiny_lm):
    return translate(tiny_lm, "the cat sat on the mat", BEAM)


@pytest.fixture
def panel(shown_panel):
    return shown_panel(BeamTreePanel, 1200, 700)


def with_tree(trace, tree) -> Trace:
    return Trace(trace.src_tokens, trace.tgt_tokens, trace.out_tokens, trace.arrays,
                 dict(trace.meta, **{META_KEY: tree.to_dict()}), trace.schema)


def random_search(k: int, steps: int, seed: int = 0, vocab: int = 40, eos: int = 3):
    """A beam search over random log-probabilities with the seed family's rule (the best 2k continuations in order:
    </s> finishes one, others are kept until k; it stops with k finished): a big tree of every fate. </s> is likely
    in the last four steps only, as at the end of a sentence."""
    rng = np.random.default_rng(seed)
    rec = BeamRecorder(k, Penalty(), 2, "<s>", lambda t: f"w{t}" if t != eos else "</s>",
                       lambda ids: " ".join(map(str, ids)))
    beams, finished = [()], []
    for step in range(steps):
        logp = np.log(rng.dirichlet(np.full(vocab, 0.3), size=len(beams)))
        logp[:, eos] = np.log(0.25 if step >= steps - 4 else 1e-4)
        total = np.array([rec.cum(b) for b in beams])[:, None] + logp
        order = np.argsort(-total, axis=None)[: 2 * k]
        kept = []
        for flat in order:
            row, tok = divmod(int(flat), vocab)
            rec.add(beams[row], tok, float(logp[row, tok]), step, ended=tok == eos)
            if tok == eos:
                finished.append(beams[row] + (tok,))
            else:
                kept.append(beams[row] + (tok,))
            if len(kept) == k:
                break
        beams = kept
        if len(finished) >= k:
            break
    best = max(finished, key=lambda f: rec.nodes[rec.node_of[f]].score) if finished else beams[0]
    return rec.done(list(best))


def labels_overlap(panel) -> list[tuple[int, int]]:
    rects = {i: item.sceneBoundingRect() for i, item in panel.labels.items() if item.isVisible()}
    return [(a, b) for (a, ra), (b, rb) in itertools.combinations(rects.items(), 2) if ra.intersects(rb)]


def test_it_draws_the_recorded_tree(panel, beam_result, show_trace):
    tree = tree_of(beam_result.trace)
    show_trace(panel, beam_result.trace)
    assert panel.tree.to_dict() == tree.to_dict() and panel.view.isVisible()
    assert sorted(panel.labels) == [n.id for n in tree.nodes]
    for fate, curve in panel.edges.items():            # one elbow (three segments) per hypothesis of that fate
        x, _ = curve.getData()
        assert len(x) == 6 * sum(n.fate == fate for n in tree.nodes[1:])
    assert panel.edges[CHOSEN].opts["pen"].color().name() == ACCENT and panel.edges[CHOSEN].opts["pen"].widthF() == 4
    assert panel.edges[PRUNED].opts["pen"].color().name() == STYLE[PRUNED][0][0]
    assert panel.edges[CHOSEN].zValue() > max(panel.edges[f].zValue() for f in (KEPT, FINISHED, PRUNED))
    chosen = [n.id for n in tree.path(tree.chosen)]
    assert chosen and all(panel.pos[i][1] == 0 for i in chosen)      # the translation along the top row
    assert [panel.pos[i][0] for i in chosen] == list(range(1, len(chosen) + 1))
    for n in tree.nodes:
        item = panel.labels[n.id]
        assert item.border.color().name() == STYLE[n.fate][2][0]
        assert item.textItem.toPlainText().split("\n")[0] == n.piece
    assert any(n.fate == PRUNED for n in tree.nodes)
    assert "width 3" in panel.note.text() and f"{len(tree.nodes) - 1} hypotheses" in panel.note.text()


def test_every_fate_has_its_look(panel, beam_result, show_trace):
    tree = random_search(4, 10, seed=3)
    show_trace(panel, with_tree(beam_result.trace, tree))
    fates = {n.fate for n in tree.nodes[1:]}
    assert fates == {CHOSEN, FINISHED, KEPT, PRUNED}
    for n in tree.nodes[1:]:
        text = panel.labels[n.id].textItem.toPlainText().split("\n")
        assert text[1] == (f"score {n.score:.2f}" if n.ended else f"{n.cum:.2f}").replace("-", "−")
    pruned = next(n for n in tree.nodes if n.fate == PRUNED)
    assert STYLE[PRUNED][1] in panel.labels[pruned.id].textItem.toHtml()       # grey text


@pytest.mark.parametrize("k", [4, 8])
def test_labels_never_overlap(panel, beam_result, k, show_trace):
    tree = random_search(k, 30, seed=k)
    assert tree.n_steps >= 20 and len(tree.nodes) > 8 * k
    show_trace(panel, with_tree(beam_result.trace, tree))
    assert panel.labels_shown and not labels_overlap(panel)
    for scale in (1.5, 3.0):                               # zoomed out: labels hide before they would overlap
        panel.vb.scaleBy((scale, scale))
        settle_scenes(panel)
        assert not labels_overlap(panel)
    panel.fit_whole()
    assert not labels_overlap(panel)
    font = QtGui.QFont(panel.font())
    font.setPointSizeF(22)                                 # presentation mode on a 1080p projector
    small = panel.label_size
    panel.setFont(font)
    settle_scenes(panel)
    assert panel.label_size[0] > small[0] and panel.label_size[1] > small[1]
    assert panel.labels_shown and not labels_overlap(panel)
    heights = {round(item.textItem.boundingRect().height()) for item in panel.labels.values()}
    assert len(heights) == 1                               # every label two lines: none wrapped at its old width


def test_a_resize_shows_more_at_the_same_scale(panel, beam_result, show_trace, qtbot):
    show_trace(panel, beam_result.trace)
    scale, corner, width = panel.scale(), panel.vb.viewRange(), panel.vb.width()
    assert scale == pytest.approx(panel.cell, rel=1e-3)
    panel.resize(800, 450)
    qtbot.waitUntil(lambda: panel.vb.width() < width - 300)
    settle_scenes(panel)
    assert panel.scale() == pytest.approx(scale, rel=1e-3)
    assert [r[0] for r in panel.vb.viewRange()] == pytest.approx([r[0] for r in corner])


def test_hover_and_click_name_the_hypothesis(panel, beam_result, show_trace):
    tree = tree_of(beam_result.trace)
    show_trace(panel, beam_result.trace)
    asked = []
    panel.set_prefix_handler(asked.append)
    seen = [i for i in panel.labels if panel.vb.sceneBoundingRect().contains(panel.scene_pos_of(i))]
    assert len(seen) > 3
    for i in seen:
        assert panel.node_at(panel.scene_pos_of(i)) == i
    n = next(tree.nodes[i] for i in seen if i > 0)
    panel._hovered(panel.scene_pos_of(n.id))
    assert f"“{n.text}”" in panel.hover.text() and f"{n.cum:.2f}".replace("-", "−") in panel.hover.text()
    short = panel.describe(n.id, short=True)                 # what a narrow read-out shows: token, score, fate
    assert f"“{n.piece}”" in short and f"{n.score:.2f}".replace("-", "−") in short and len(short) < len(
        panel.hover.text())
    panel.hover.resize(panel.hover.fontMetrics().horizontalAdvance(short) + 12, panel.hover.height())
    assert panel.hover.shown_text() == short
    assert panel.node_at(panel.vb.mapViewToScene(QtCore.QPointF(0.5, 0.5))) is None    # between labels
    panel.choose(n.id)
    assert asked == [n.id]


def test_greedy_decoding_says_how_to_get_a_tree(panel, tiny_lm, show_trace):
    trace = translate(tiny_lm, "the cat sat on the mat").trace
    state = show_trace(panel, trace)
    assert panel.note.text() == GREEDY_NOTE and not panel.view.isVisible() and panel.action.isVisible()
    panel.action.click()
    assert state.decoding.method == "beam" and state.decoding.beam >= 2
    forced = translate(tiny_lm, "the cat", target="le chat").trace
    state = show_trace(panel, forced, )
    state.target = "le chat"
    panel.render(forced, state)
    assert "forced through the given target" in panel.note.text()
    panel.action.click()
    assert state.target == "" and state.decoding.method == "beam"


def test_models_without_a_search_and_damaged_trees_say_so_in_one_line(panel, shapes, beam_result, show_trace):
    show_trace(panel, synthetic_trace(shapes["encoder-only"]))
    assert "does not generate" in panel.note.text() and not panel.action.isVisible()
    data = beam_result.trace.meta[META_KEY]
    broken = dict(beam_result.trace.meta, **{META_KEY: dict(data, chosen="x")})
    t = beam_result.trace
    show_trace(panel, Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays, broken, t.schema))
    assert panel.note.text().startswith("Beam tree: the beam tree cannot be read") and not panel.view.isVisible()


def test_it_exports_as_every_plot_does(panel, beam_result, show_trace):
    tree = tree_of(beam_result.trace)
    show_trace(panel, beam_result.trace)
    export = widget_export(panel.view)
    rows = export.table().splitlines()
    assert len(rows) == len(tree.nodes) + 1 and rows[0].startswith("id,parent,token,piece")
    assert export.name().startswith("Beam_search_width_3")
    assert not export.image(1.0).isNull() and b"<svg" in export.vector("svg")


def test_a_figure_of_the_tree_holds_the_whole_tree_at_full_size_with_its_legend(panel, beam_result, show_trace,
                                                                                 monkeypatch):
    """A saved picture had been the part of the tree in view (steps 0–1 of 8), "Whole tree" zoomed out to dots with
    no legend, and Export all's picture was cut at the dock's edge (QA, a teacher's handout). The figure is a view
    of its own as large as every label at full size needs, titled with the run and the legend; gone after."""
    from PySide6 import QtWidgets

    from visualizer.plotting import render
    tree = random_search(4, 30, seed=4)
    show_trace(panel, with_tree(beam_result.trace, tree))
    (x0, x1), _ = panel.vb.viewRange()
    assert x1 < tree.n_steps                                       # on screen: a part of it
    drawn = []
    real = render.scene_image
    monkeypatch.setattr("visualizer.plot_menu.scene_image", lambda view, s=1.0: drawn.append(view) or real(view, s))
    image = widget_export(panel.view).image(1.0)
    figure = drawn[0]
    assert figure is not panel.view and (image.width(), image.height()) == (figure.width(), figure.height())
    assert image.width() > panel.view.width()
    fig = figure.window()
    (fx0, fx1), (fy0, fy1) = fig.vb.viewRange()
    assert fx0 <= 0 and fx1 >= fig._xy[:, 0].max() == tree.n_steps and fy0 <= 0 and fy1 >= fig._xy[:, 1].max()
    assert fig.label_mode == "full" and all(item.isVisible() for item in fig.labels.values())
    assert not labels_overlap(fig)
    title = fig.plot.titleLabel.text
    assert f"“{beam_result.trace.meta['sentence']}”" in title and all(w in title for w in ("chosen", "kept",
                                                                                             "finished", "pruned"))
    QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    assert fig not in QtWidgets.QApplication.topLevelWidgets()            # not left behind
    picture = panel.figure_image()                                          # Export all's picture: the same
    assert (picture.width(), picture.height()) == (image.width(), image.height())


def test_a_large_trees_figure_holds_its_words_in_a_vector_file_and_a_bounded_picture(panel, beam_result, show_trace):
    """A 71-step tree of width 8 was dots at the figure's 4000 pixels, and "PNG for print" made it 12000 pixels a
    side, 550 MB (a review, QA): a vector file, which holds no pixels, is laid out larger, with its labels; a
    picture has at most MOST_PIXELS a side."""
    from visualizer.panels.beam_tree import FIGURE_MOST
    from visualizer.plot_menu import MOST_PIXELS, PRINT_SCALE
    tree = random_search(8, 60, seed=8)
    show_trace(panel, with_tree(beam_result.trace, tree))
    pixels, vector = panel.figure_view(), panel.figure_view(vector=True)
    assert max(pixels.width(), pixels.height()) <= FIGURE_MOST < max(vector.width(), vector.height())
    assert vector.window().label_mode == "full"
    for view in (pixels, vector):
        view.window().deleteLater()
    image = widget_export(panel.view).image(PRINT_SCALE)
    assert max(image.width(), image.height()) <= MOST_PIXELS + 60                 # (and its caption, if any)


def test_a_click_shows_the_decoders_attention_for_that_prefix(qtbot, window):
    window.state.update(decoding=BEAM)
    qtbot.waitUntil(lambda: window.trace.meta.get("mode") == "beam" and not window.runs.runner.busy, timeout=20000)
    assert window.inputs.method.currentData() == "beam"
    window.docks["beam_tree"].raise_()
    qtbot.waitUntil(lambda: "beam_tree" in window.panels and window.panels["beam_tree"].tree is not None)
    panel, base = window.panels["beam_tree"], window.translation
    tree = panel.tree
    node = next(n for n in reversed(tree.nodes) if n.fate != CHOSEN and n.step >= 1)
    panel.center_on(node.id)
    settle_scenes(panel)
    assert panel.node_at(panel.scene_pos_of(node.id)) == node.id
    where = panel.view.mapFromScene(panel.scene_pos_of(node.id))
    qtbot.mouseClick(panel.view.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=where)
    qtbot.waitUntil(lambda: window.trace.meta.get(NODE_KEY) == node.id, timeout=20000)
    prefix = tree.prefix_ids(node.id)
    expected = trace_run(window.lm, encode_source(window.lm, "the cat sat on the mat").ids, prefix)
    state, attention = window.state, window.panels["attention"]
    assert state.kind == "cross" and state.step == len(prefix) - 1 and window.trace.out_tokens[-1] == node.piece
    for layer in range(2):
        state.update(layer=layer, head=1)
        mask = expected.mask("cross", layer)
        np.testing.assert_allclose(attention.focused_array,
                                   np.where(mask, expected.attention("cross", layer, 1), np.nan), atol=1e-6)
    assert window.prefix.banner.isVisible() and node.text in window.prefix.banner.text()
    assert window.translation is base and panel.selected == node.id
    assert [tuple(p) for p in panel.ring.getData()] == [(panel.pos[node.id][0],), (panel.pos[node.id][1],)]
    assert panel.labels[node.id].border.color().name() != STYLE[node.fate][2][0]     # framed as the one on screen
    window.prefix.banner.linkActivated.emit("back")
    assert window.trace is base.trace and not window.prefix.banner.isVisible() and panel.selected is None
    assert len(panel.ring.getData()[0]) == 0


def test_translate_prints_the_tree(run_command, tiny_model_dir, tiny_lm):
    code, out, _ = run_command(["translate", "the cat sat on the mat", "--model", str(tiny_model_dir), "--beam", "3",
                                "--tree"])
    tree = tree_of(translate(tiny_lm, "the cat sat on the mat", DecodingSettings(method="beam", beam=3)).trace)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + len(tree.nodes) and lines[1].startswith("<s>  (beam width 3")
    assert sum("◀ chosen" in line for line in lines) == 1
    assert sum("(pruned)" in line for line in lines) == tree.count(PRUNED)
    code, _, err = run_command(["translate", "the cat", "--model", str(tiny_model_dir), "--tree"], check=False)
    assert code == 2 and "--beam 2 or more" in err


def test_the_legend_breaks_between_its_entries_never_inside_one(panel, qtbot):
    """In a narrow dock "▢" stood at the end of one line and "finished" began the next."""
    text = panel.legend.text()
    entries = text.split(" &nbsp; ")
    assert len(entries) == 4 and all(" " not in entry.split("</span>", 1)[1] for entry in entries)
    assert [e.rsplit("&nbsp;", 1)[1] for e in entries] == ["chosen", "kept", "finished", "pruned"]


def test_the_legend_is_on_the_plots_white_on_the_dark_theme_too(panel, qapp):
    """On the dark theme's grey the legend's "kept" line (the plot's #555555) had a contrast of 1.8:1 and read darker
    than "pruned", the other way round from the plot; "finished" was a hollow square where the plot's dots are
    filled (QA, low vision)."""
    from visualizer.theme import apply_theme
    try:
        apply_theme(qapp, "dark")
        image = panel.legend.grab().toImage()
        corners = {image.pixelColor(x, y).name() for x in (1, image.width() - 2) for y in (1, image.height() - 2)}
        assert corners == {"#ffffff"}
        assert panel.legend.palette().color(QtGui.QPalette.ColorRole.WindowText).name() == STYLE[KEPT][1]
    finally:
        apply_theme(qapp, "light", point_size=10)
    assert f"color:{STYLE[FINISHED][2][0]}; font-weight:bold'>■</span>&nbsp;finished" in panel.legend.text()


def test_a_new_tree_drops_the_last_ones_read_out_and_a_short_panel_drops_the_line(panel, beam_result, tiny_lm,
                                                                                    show_trace, qtbot):
    """After another sentence the line under the tree still described the old tree's "professeur"; on a 720p
    projector's short dock that line was drawn over the tree's top row (QA)."""
    from visualizer.panels.beam_tree import HINT
    show_trace(panel, beam_result.trace)
    n = next(i for i in panel.labels if i > 0 and panel.vb.sceneBoundingRect().contains(panel.scene_pos_of(i)))
    panel._hovered(panel.scene_pos_of(n))
    assert panel.hover.text() != HINT[0]
    show_trace(panel, translate(tiny_lm, "the dog runs", BEAM).trace)
    assert panel.hover.text() == HINT[0] and panel.hover.isVisible()
    panel.setFixedHeight(200)            # a dock shorter than the panel's parts (a class's text, 720p): Qt overlaps
    qtbot.waitUntil(lambda: not panel.hover.isVisible())
    assert panel.view.isVisible()
    panel.setMinimumHeight(0)
    panel.setMaximumHeight(16777215)
    panel.resize(1200, 700)
    qtbot.waitUntil(panel.hover.isVisible)
    assert panel.hover.geometry().top() >= panel.view.geometry().bottom()


def test_a_language_models_tree_counts_steps_as_the_window_does_and_names_its_start(panel, show_trace, tmp_path):
    """QA as a student: for GPT-2 the band of the step in view stood six columns right of the first written token
    (the window's steps count the prompt's rows, the tree's did not), the tree's steps read from 0 there, its
    start said "the decoder reads “<unk>” first", and a hypothesis was "on the chosen translation"."""
    import hf_tiny
    from model.families import load, translate as translate_any
    lm = load(hf_tiny.build("gpt2", tmp_path / "gpt2"))
    trace = translate_any(lm, "the cat sat on the mat", DecodingSettings(method="beam", beam=3, max_new=4)).trace
    tree = tree_of(trace)
    offset = trace.prompt_rows()
    assert offset == 5
    show_trace(panel, trace, step=offset)                 # the window's step of the first written token
    assert panel.offset == offset and panel.band.rect().center().x() == pytest.approx(1.0)    # the tree's column 1
    ticks = panel.plot.getAxis("top")._tickLevels[0]
    assert [label for _, label in ticks][:2] == [str(offset), str(offset + 1)]
    assert panel.describe(0) == "The start: the prompt (6 tokens), after which the model writes."
    chosen = next(n for n in tree.nodes if n.fate == CHOSEN and n.id > 0)
    text = panel.describe(chosen.id)
    assert f"step {chosen.step + offset}," in text and text.endswith("on the chosen continuation.")
    # zoomed out in a narrow dock, the step numbers thin out rather than run together ("1011121314", QA)
    long = translate_any(lm, "the cat sat on the mat", DecodingSettings(method="beam", beam=3, max_new=30)).trace
    show_trace(panel, long, step=offset)
    panel.resize(260, 400)
    panel.fit_whole()
    shown = panel.plot.getAxis("top")._tickLevels[0]
    from PySide6 import QtGui
    from visualizer.plotting.text import tick_font
    widest = max(QtGui.QFontMetricsF(tick_font(panel._font_pt)).horizontalAdvance(label) for _, label in shown)
    gaps = np.diff([x for x, _ in shown]) * panel.scale()[0]
    assert len(shown) < tree_of(long).n_steps and len(gaps) and gaps.min() >= widest


def test_a_dead_ends_words_say_how_long_its_line_stayed_in_the_beam(panel, beam_result, show_trace):
    """QA: "pruned: none of its continuations stayed in the beam" was said of a hypothesis whose continuation was
    in the next beam; only its line's end left it."""
    tree = tree_of(beam_result.trace)
    show_trace(panel, beam_result.trace)

    def last_step(i):
        return max([tree.nodes[i].step] + [last_step(c.id) for c in tree.children(i)])
    pruned = [n for n in tree.nodes if n.fate == PRUNED]
    assert pruned
    for n in pruned:
        words = panel.describe(n.id)
        if last_step(n.id) == n.step:
            assert words.endswith("pruned: none of its continuations stayed in the beam.")
        else:
            assert words.endswith(f"pruned: its line stayed in the beam to step {last_step(n.id)}, then left it.")
    assert any(last_step(n.id) > n.step for n in pruned)          # such a line is in this search


def test_zoomed_out_the_tree_shows_its_tokens_before_it_shows_dots_only(panel, beam_result, show_trace):
    """QA as a student: in a laptop's dock and with Whole tree, the tree was dots only, with no word: where a
    token and its log p do not fit, the token alone does; past that, the dots."""
    tree = random_search(4, 30, seed=4)
    show_trace(panel, with_tree(beam_result.trace, tree))
    assert panel.label_mode == "full" and panel.token_size[1] < panel.label_size[1]
    px = (panel.token_size[0] + panel.label_size[0]) / 2 + 4             # room for a token, not for two lines
    py = (panel.token_size[1] + panel.label_size[1]) / 2 + 1
    panel.vb.setRange(xRange=(-0.5, -0.5 + panel.vb.width() / px), yRange=(-0.5, -0.5 + panel.vb.height() / py),
                      padding=0)
    settle_scenes(panel)
    assert panel.label_mode == "token" and panel.labels_shown and not labels_overlap(panel)
    shown = [item for item in panel.labels.values() if item.isVisible()]
    assert shown and all("<br" not in item.textItem.toHtml() for item in shown)        # one line: the token
    from visualizer.panels.beam_tree import HINT, TOKENS_HINT
    assert panel.hover.text() == TOKENS_HINT[0]          # the hint no longer says log p is under each token
    panel.vb.scaleBy((4.0, 4.0))                                         # further out: dots only
    settle_scenes(panel)
    assert panel.label_mode == "" and not any(item.isVisible() for item in panel.labels.values())
    panel.fit_readable()                                                 # back in: token and log p again
    settle_scenes(panel)
    assert panel.label_mode == "full" and all("<br" in item.textItem.toHtml() for item in panel.labels.values())
    assert panel.hover.text() == HINT[0]
