"""The Help menu: how to read the window (F1), the keyboard shortcuts (read from the window's own actions, so the
sheet never disagrees with the menus) and About (version, licences, and each bundled model's data and licence
from its model card)."""
from __future__ import annotations

import html
import platform

import PySide6
from PySide6 import QtCore, QtGui, QtWidgets

from model.assets import bundled_models, model_data_licence, model_summary
from model.schema import ENCODER_DECODER, ENCODER_ONLY, NORM_AFTER

from . import accessible, version
from .panels.registry import PANELS

TITLES = {p.name: p.title for p in PANELS}


POSITIONS_TEXT = {
    "sinusoidal": "Positions count from 0, as in PE(pos, 2k) = sin(pos / 10000<sup>2k/d<sub>model</sub></sup>), "
                  "added to each token's embedding.",
    "learned": "Positions count from 0: each has a learned vector, added to the token's embedding.",
    "rotary": "Positions count from 0: q and k are rotated by angles that grow with the position (RoPE), so the "
              "scores depend on how far apart two tokens are.",
    "relative": "Positions count from 0: each head adds a learned bias to its scores, by how far apart the two "
                "tokens are.",
    "none": "Positions count from 0; this model is given no position at all.",
}


ROLE_TEXT = {"bos": "starts the decoder's input", "cls": "opens the text", "sep": "closes it", "eos": "ends a sentence",
             "mask": "hides a word for the model to guess", "unk": "stands for a piece outside the vocabulary"}


def _specials_text(schema) -> str:
    """What the model's special tokens do, those of ROLE_TEXT it has (the bundled translators': <s> and </s>)."""
    roles = schema.special if schema is not None else {"bos": "<s>", "eos": "</s>"}
    texts = ROLE_TEXT if schema is None or schema.layout == ENCODER_DECODER else ROLE_TEXT | {"bos": "starts the text"}
    parts = [f"<b>{html.escape(token)}</b> {texts[role]}" for role, token in roles.items() if role in texts]
    return "; ".join(parts) if parts else "this model has no special tokens"


def _steps_text(layout: str, t: dict, mask: str = "[MASK]") -> str:
    """The "Generation steps" paragraph for a model's layout (model.schema.LAYOUTS); mask: the model's own."""
    if layout == ENCODER_ONLY:
        return (f"<p>This model writes no text: it reads the whole input at once, every token looking at every "
                f"other. The {t['output']} shows, for one position at a time (the Step keys), the model's guess at "
                f"the token there: at a <b>{html.escape(mask)}</b> it fills in a word.</p>")
    given = ("Type a translation of your own in the <b>Target</b> field to force it through the decoder"
             if layout == ENCODER_DECODER else
             "Type a continuation of your own in the <b>Target</b> field to force it through the model")
    writer = "The decoder writes" if layout == ENCODER_DECODER else "The model continues the text,"
    rows = ("Row <i>t</i> of the decoder's heatmaps is the token it reads at step <i>t</i> (row 0 is the start "
            "token &lt;s&gt;): at that step it predicts token <i>t</i> + 1. So some heads line a row up with the "
            "source word of the token it reads, others with the word it is about to write, one row early"
            if layout == ENCODER_DECODER else
            "Row <i>t</i> is the token read at step <i>t</i>: the model predicts token <i>t</i> + 1 there")
    return (f"<p>{writer} one token a step. At each step the {t['output']} shows the probability of every "
            f"possible next token; the chosen one is marked. {rows}. "
            f"{given} (teacher forcing): the {t['training']} tab "
            "then shows its loss, token by token, and can take one gradient step on it (this app's own models).</p>"
            "<p>Counting: layers and heads from 1 (Layer 1, Head 1), as the paper does; positions, tokens and "
            "generation steps from 0.</p>")


def guide_html(schema=None) -> str:
    """How to read this window, in the words a first-time student needs; the panels by their tab titles. schema:
    the open model's (model.schema.Schema): the norms, positions, special tokens and generation it has (the guide
    described the bundled translators' with a T5 or a BERT open); None: the bundled translators'."""
    t = {k: f"<b>{html.escape(v)}</b>" for k, v in TITLES.items()}
    layout = schema.layout if schema is not None else ENCODER_DECODER
    positions = schema.positions if schema is not None else "sinusoidal"
    post = schema is None or schema.norm_place == NORM_AFTER
    embed = "embedding" + (" + positional encoding" if positions in ("sinusoidal", "learned") else "")
    norms = ("every one followed by Add &amp; Norm" if post else
             "pre-norm: each one's norm comes <i>before</i> it, and its input is added back after it")
    if schema is not None and schema.parallel_residual:
        norms += ("; the attention and the feed-forward network read the <i>same</i> input, side by side, and "
                  "both results are added to it (a parallel residual)")
    model = "" if schema is None else \
        f"<p><i>This guide follows the open model: {layout}, {html.escape(schema.describe())}.</i></p>"
    return f"""
<h2>How to read this window</h2>{model}
<h3>The pipeline</h3>
<p>The {t['architecture']} on the left shows the model's stages in the order the numbers flow: {embed},
then each layer's sublayers ({norms}), then linear + softmax.
Click a box to go there. The toolbar steps through stages, layers, heads and generation steps; a presenter's
remote (Page Down / Page Up) walks through every stage.</p>
<h3>The attention heatmap</h3>
<p>Each <b>row</b> is a <i>query</i>: the token that is looking. Each <b>column</b> is a <i>key</i>: a token
it looks at. A row's weights add up to 1 (a softmax): the bright cells are where that token takes its
information from. <b>Hatched</b> cells are masked: in a decoder a token may not look at the tokens after it.
Tokens <u>underlined</u> in orange on its axes are pieces of a word the model read in fewer than 3 of its
training sentences (the note under the translation names it): what it does with them is a guess.
Hover over a cell to read its exact weight (or, with the heatmap focused by Tab, walk its cells with the arrow
keys). A long sentence's cells are small: the mouse wheel, or + and −, zoom in on them, a drag moves them, and a
double-click or 0 shows the whole heatmap again. The small heatmaps beside the large one (under it in a narrow
window) are the heads of the same layer: click one to look at it closely, or tick <b>Mean over heads</b>. By
default one colour scale spans all heads of a layer, so that heads compare (<b>Colours</b> changes that).</p>
<h3>Tokens</h3>
<p>Text is cut into pieces of a fixed vocabulary. <b>##</b> marks a piece that continues the word before it
(“tap ##is” is “tapis”); punctuation shows bare, joined to its neighbours or not (“J ' ##ai” is “J'ai”,
“mat .” is “mat.”); <b>␣</b> is a piece that is a space alone; {_specials_text(schema)}.
{POSITIONS_TEXT.get(positions, POSITIONS_TEXT["none"])}</p>
<h3>Generation steps</h3>
{_steps_text(layout, t, (schema.special.get("mask") if schema is not None else None) or "[MASK]")}
<h3>Experiments</h3>
<p>Right-click a head (or press the Menu key on it) to switch it off (the <b>Heads</b> menu, Alt+D, switches
the focused head off and every head on again) and watch the
output change; {t['compare']} sets two runs side by side; {t['metrics']} measures every head;
{t['beam_tree']} shows what beam search kept and dropped; {t['inspector']} writes out the numbers of one
token's computation.</p>
<h3>The other tabs</h3>
<p>{t['model_view']}: every layer and head of one attention kind at once, each coloured from 0 to its own largest
weight; a click focuses a head. {t['flow']}: attention rollout (how much each position draws from each input
token up to this layer) or the focused head as lines from query to key tokens. {t['embeddings']}: the token
embeddings, the positional encodings and their sum (untick <b>Positional encoding</b> to see attention without
positions: an encoder then reads the sentence as a bag of tokens, while a decoder's mask still orders its own).
{t['layernorm']}: the mean μ and spread σ of each token's vector where the norm receives it, all its values
before and after the norm, and the norm's γ and β per dimension.
{t['training']}: give a Target translation and see its loss per token and one head's gradients; <b>One gradient
step</b> changes every weight of the model in memory (a step of too large an η that would break it is not taken);
<b>Reset weights</b> puts them back. The files of the model are never written.</p>
<h3>On a projector</h3>
<p><b>F11</b> or <b>F5</b>: presentation mode (large, high-contrast text); <b>Esc</b> leaves it; <b>B</b> or
<b>W</b> there: a black or white screen, and any key brings the view back. <b>F9</b>: the
heatmap alone, with room for every label. <b>Ctrl++ / Ctrl+−</b>: larger or smaller text (as large as the
screen holds); <b>Ctrl+0</b>: the normal size. <b>Ctrl+E</b>: export the heatmap as a picture.</p>
"""


KEYS_ONLY = "Keys only (no menu)"


def shortcut_rows(window) -> list[tuple[str, str, str]]:
    """(menu, action, keys) of every action of the window that has a shortcut, in menu order; then the window's
    own (a presenter remote's keys), under "Keys only (no menu)": they were listed under "Window", a menu the menu
    bar does not have (QA)."""
    rows: list[tuple[str, str, str]] = []

    def walk(menu: QtWidgets.QMenu, path: str) -> None:
        for act in menu.actions():
            if act.menu() is not None:
                walk(act.menu(), f"{path} ▸ {act.menu().title().replace('&', '')}")
            elif not act.isSeparator() and act.shortcuts():
                rows.append((path, act.text().split("\t")[0].replace("&", ""), _keys(act)))

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), top.menu().title().replace("&", ""))
    for act in window.actions():
        if act.text() and act.shortcuts():
            rows.append((KEYS_ONLY, act.text(), _keys(act)))
    return rows + [(KEYS_ONLY, what, keys) for what, keys in QT_KEYS]


# keys Qt itself gives, which no action lists (a keyboard student found no way to a head's menu)
QT_KEYS = (("The focused plot's or table's menu (switch a head off, save, copy)", "Menu, Shift+F10"),
           ("A field by its label's underlined letter (English, Target, Model)", "Alt+E, Alt+G, Alt+M"),
           ("Close a dialog or a menu; in the window, leave presentation mode", "Esc"))


def _keys(act: QtGui.QAction) -> str:
    return ", ".join(k.toString(QtGui.QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts())


def shortcuts_html(window) -> str:
    cells = "".join(f"<tr><td>{html.escape(m)}</td><td>{html.escape(a)}</td><td><b>{html.escape(k)}</b></td></tr>"
                    for m, a, k in shortcut_rows(window))
    return ("<h2>Keyboard shortcuts</h2><p>They work while the cursor is in a text field too, but for the "
            "blank screens' keys without Ctrl or Alt (B, W, “.” and “,”), which type there.</p>"
            "<table cellspacing='0' cellpadding='4'><tr><th align='left'>Menu</th><th align='left'>Action</th>"
            f"<th align='left'>Keys</th></tr>{cells}</table>")


def about_markdown() -> str:
    """Version, licences and every bundled model's data and its licence (the attribution its licence asks for)."""
    parts = [f"## Attention Visualizer {version()}",
             "See inside a transformer translating your sentence, live. MIT licence.",
             f"Python {platform.python_version()}, Qt {QtCore.qVersion()}, PySide6 {PySide6.__version__}.",
             "### The bundled models"]
    for name in bundled_models():
        summary = model_summary(name)
        parts.append(f"**{name}**" + (f": {summary}" if summary else ""))
        licence = model_data_licence(name)
        if licence:
            parts.append(licence)
    return "\n\n".join(parts)


class HelpDialog(QtWidgets.QDialog):
    """A text to read beside the window (not modal: the window stays usable), closed with Esc or Close."""

    def __init__(self, title: str, parent=None, *, html_text: str = "", markdown: str = ""):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.text = QtWidgets.QTextBrowser()
        accessible.name(self.text, title)             # a screen reader said nothing for the text it lands on (QA)
        self.text.setOpenLinks(False)                 # a link (the licence's attribution) is read, not followed:
        self.text.setOpenExternalLinks(False)         # nothing may reach the network, nor blank the text
        self.set_text(html_text=html_text, markdown=markdown)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        screen = (parent.screen() if parent is not None else QtGui.QGuiApplication.primaryScreen())
        room = screen.availableGeometry().size() if screen is not None else QtCore.QSize(1024, 768)
        self.resize(min(760, int(room.width() * 0.9)), min(700, int(room.height() * 0.85)))

    def set_text(self, *, html_text: str = "", markdown: str = "") -> None:
        if markdown:
            self.text.setMarkdown(markdown)
        else:
            self.text.setHtml(html_text)


class HelpMenu:
    def __init__(self, window):
        self.window = w = window
        self.dialogs: dict[str, HelpDialog] = {}
        menu = w.menuBar().addMenu("&Help")
        self.guide = menu.addAction("How to read this window", self.show_guide,
                                    QtGui.QKeySequence.StandardKey.HelpContents)
        self.shortcuts = menu.addAction("Keyboard shortcuts", self.show_shortcuts, QtGui.QKeySequence("Ctrl+/"))
        menu.addSeparator()
        self.about = menu.addAction("About Attention Visualizer", self.show_about)
        menu.addAction("About Qt", QtWidgets.QApplication.aboutQt)

    def _show(self, key: str, title: str, **text) -> HelpDialog:
        dialog = self.dialogs.get(key)
        if dialog is None:
            dialog = self.dialogs[key] = HelpDialog(title, self.window, **text)
        else:
            dialog.set_text(**text)                   # anew: the shortcuts follow the menus as they are now
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def show_guide(self) -> HelpDialog:
        return self._show("guide", "How to read this window", html_text=guide_html(self.window.state.schema))

    def show_shortcuts(self) -> HelpDialog:
        return self._show("shortcuts", "Keyboard shortcuts", html_text=shortcuts_html(self.window))

    def show_about(self) -> HelpDialog:
        return self._show("about", "About Attention Visualizer", markdown=about_markdown())
