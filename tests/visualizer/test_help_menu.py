"""Help: the guide names the panels by their tab titles, the shortcut sheet lists every action that has keys
(read from the menus, so it cannot disagree with them), and About gives each bundled model's data licence."""
from __future__ import annotations

import re

from PySide6 import QtGui

from model.assets import bundled_models, model_data_licence
from visualizer import version
from visualizer.help import about_markdown, guide_html, shortcut_rows
from visualizer.panels.registry import PANELS


def all_actions(menu):
    for act in menu.actions():
        if act.menu() is not None:
            yield from all_actions(act.menu())
        elif not act.isSeparator():
            yield act


def test_the_shortcut_sheet_lists_every_action_with_keys_once(qtbot, window):
    rows = shortcut_rows(window)
    listed = {(a, k) for _, a, k in rows}
    for top in window.menuBar().actions():
        for act in all_actions(top.menu()):
            for key in act.shortcuts():
                text = act.text().split("\t")[0].replace("&", "")
                assert any(a == text and key.toString(QtGui.QKeySequence.SequenceFormat.NativeText) in k
                           for a, k in listed), text
    assert ("Heatmap alone", "F9") in listed and ("Presentation mode", "F11, F5") in listed
    assert any(m == "View ▸ Go to panel" for m, _, _ in rows)               # submenus by their path
    assert [(m, a) for m, a, k in rows if k == "PgDown"] == [
        ("Keys only (no menu)", "Next stage, after linear + softmax the next step (a presenter's remote)")]
    keys = [k for _, _, k in rows]
    assert len(keys) == len(set(keys)), "two actions share keys"
    assert ("Keys only (no menu)", "Menu, Shift+F10") in [(m, k) for m, _, k in rows]    # the keyboard's right-click


def test_the_help_menu_opens_its_three_texts(qtbot, window):
    helps = window.help
    guide = helps.guide.shortcut().toString()
    assert guide == QtGui.QKeySequence(QtGui.QKeySequence.StandardKey.HelpContents).toString()
    shown = helps.show_guide()
    assert shown.isVisible() and "query" in shown.text.toPlainText()
    assert helps.show_guide() is shown                                    # one window, raised again
    sheet = helps.show_shortcuts().text.toPlainText()
    assert "Export focused heatmap" in sheet and "Ctrl+E" in sheet
    about = helps.show_about().text.toPlainText()
    assert version() in about
    for d in helps.dialogs.values():            # the text a screen reader lands on is named as its window
        assert d.text.accessibleName() == d.windowTitle() and d.windowTitle().strip()
        d.close()


def test_the_heatmaps_hint_points_to_the_guide(qtbot, window):
    """A first-time student saw no Help at all: the line under the heatmap names F1 where there is room."""
    from visualizer.panels.attention import HOVER_HINT
    hint = window.attention.hover
    hint.setText(*HOVER_HINT)
    hint.resize(2000, 30)
    assert hint.shown_text().endswith("F1 explains the window.")
    assert window.help.guide.shortcut().toString() == "F1"


def test_the_guide_uses_the_tab_titles_and_the_conventions_of_the_panels():
    text = re.sub("<[^>]+>", "", guide_html())
    # every tab a teacher may open (the guide never named Model view, Rollout, Embeddings or LayerNorm: QA)
    for name in [p.name for p in PANELS if p.name != "attention"]:
        title = next(p.title for p in PANELS if p.name == name)
        assert title in text, title
    assert "Positions count from 0" in text and "##" in text and "␣" in text
    # the LayerNorm tab shows μ and σ where the norm receives the vector, and histograms before and after it; with
    # the positions off a decoder's mask still orders its tokens (the guide had said otherwise: QA as a lecturer)
    assert "mean μ and spread σ of each token's vector where the norm receives it" in text
    assert "a decoder's mask still orders its own" in text


def test_about_carries_each_bundled_models_licence_and_attribution():
    about = about_markdown()
    for name in bundled_models():
        assert f"**{name}**" in about
        assert model_data_licence(name) in about
    if "en-fr" in bundled_models():                                       # the attribution CC-BY asks for
        assert "www.manythings.org/anki and tatoeba.org" in model_data_licence("en-fr")
    if "en-de" in bundled_models():
        assert "Elliott" in model_data_licence("en-de")


def test_the_guide_follows_the_open_models_layout_norms_positions_and_tokens(shapes, qtbot, window):
    """QA: with a T5 open the guide said "followed by Add & Norm", "<s> starts the decoder's input" and gave the
    sinusoid; with a BERT "the decoder writes one token a step". It follows the open model's schema."""
    import dataclasses
    plain = {name: re.sub("<[^>]+>", "", guide_html(schema)) for name, schema in shapes.items()}
    decoder, encoder, translator = plain["decoder-only"], plain["encoder-only"], plain["encoder-decoder"]
    assert "The model continues the text, one token a step" in decoder and "The decoder writes" not in decoder
    assert "pre-norm" in decoder and "followed by Add &amp; Norm" not in decoder
    assert "rotated by angles that grow with the position (RoPE)" in decoder and "PE(pos" not in decoder
    assert "This model writes no text" in encoder and "each has a learned vector" in encoder
    assert "The decoder writes one token a step" in translator and "followed by Add &amp; Norm" in translator
    bert = dataclasses.replace(shapes["encoder-only"], special={"cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"})
    assert "[MASK] hides a word for the model to guess" in re.sub("<[^>]+>", "", guide_html(bert))
    assert "encoder-decoder, 6+6 layers, 8 heads, d_model 64" in translator
    assert "parallel residual" not in decoder
    parallel = dataclasses.replace(shapes["decoder-only"], parallel_residual=True)      # GPT-NeoX, Phi
    assert "read the same input, side by side, and both results are added to it (a parallel residual)" in \
        re.sub("<[^>]+>", "", guide_html(parallel))
    dialog = window.help.show_guide()                  # F1 in the window: the open model's guide
    try:
        assert f"follows the open model: encoder-decoder, {window.state.schema.describe()}" in dialog.text.toPlainText()
    finally:
        dialog.close()


def test_the_guide_says_how_things_are_counted_and_which_token_a_decoder_row_predicts():
    """A student read the 'word reordering' crossing as one row off: nothing said that row t predicts token t + 1,
    nor that layers and heads count from 1 where positions and steps count from 0."""
    from visualizer.help import guide_html
    text = guide_html()
    assert "it predicts token <i>t</i> + 1" in text and "row 0 is the start token &lt;s&gt;" in text
    assert "layers and heads from 1" in text and "generation steps from 0" in text
