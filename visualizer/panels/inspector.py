"""Math inspector: the notes' equations laid out with the live numbers of the current sentence.

Numbers are rounded for reading; hovering one shows it at full precision.
"""
from __future__ import annotations

import html

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from model.ablation import ablated_heads
from model.equations import attention_equation, layernorm_equation, output_equation
from model.schema import ATTENTION_CROSS, LAYER_NORM, NORM_AFTER, OUTPUT
from model.text import probability

from .. import accessible
from ..equation_text import equation_html
from .output import sampling_cut
from .widgets import PagingKeys


class NumberBrowser(QtWidgets.QTextBrowser):
    """A text view whose numbers are links 'n:<full value>'; hovering shows the full value."""

    def __init__(self):
        super().__init__()
        self.setMouseTracking(True)
        self.setOpenLinks(False)
        # one Tab stop, not one a number: every number a link held a keyboard student in the panel past 230 Tabs
        flags = QtCore.Qt.TextInteractionFlag
        self.setTextInteractionFlags(flags.TextSelectableByMouse | flags.TextSelectableByKeyboard
                                     | flags.LinksAccessibleByMouse)
        self.setTabChangesFocus(True)
        PagingKeys(self)

    def mouseMoveEvent(self, event):
        href = self.anchorAt(event.position().toPoint())
        if href.startswith("n:"):
            QtWidgets.QToolTip.showText(event.globalPosition().toPoint(), href[2:], self)
        else:
            QtWidgets.QToolTip.hideText()
        super().mouseMoveEvent(event)


def num(x: float, digits: int = 3, shown: str | None = None) -> str:
    """A number as a link to its full value (shown on hover); written with digits decimals, or as shown."""
    x = float(x)
    return f'<a href="n:{x!r}">{shown if shown is not None else f"{x:.{digits}f}"}</a>'


def vec(v, digits: int = 3, limit: int = 8) -> str:
    v = np.asarray(v).ravel()
    items = [num(x, digits) for x in v[:limit]]
    more = f", … ({len(v)} values)" if len(v) > limit else ""
    return "[" + ", ".join(items) + more + "]"


def tok(t: str) -> str:
    return f"<b>{html.escape(t)}</b>"


class InspectorPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.query = QtWidgets.QComboBox()
        self.query.setToolTip("The token whose computation is shown")
        self.query.currentIndexChanged.connect(self._rerender)
        top = QtWidgets.QHBoxLayout()
        label = QtWidgets.QLabel("Token:")
        label.setBuddy(self.query)
        top.addWidget(label)
        top.addWidget(self.query, 1)
        self.view = NumberBrowser()
        accessible.name(self.view, "Worked numbers of the token")
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self._trace = self._state = None
        self.html = ""

    def _rerender(self) -> None:
        if self._trace is not None:
            self.render(self._trace, self._state, keep_query=True)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.PaletteChange:      # a theme: the page's colours follow it,
            # once the view has the new palette too: read at once, the high-contrast theme's white stayed in the
            # light theme after presentation mode, and every number was white on white (QA)
            QtCore.QTimer.singleShot(0, self, self._rerender)

    def _tokens_for(self, state) -> list[str]:
        tr = self._trace
        if state.stack == OUTPUT:
            return tr.out_tokens
        return tr.tokens(tr.schema.stack_of_stage(state.stage).tokens)

    def view_key(self, state):
        return (state.stack, state.layer, state.sublayer, state.kind, state.head, state.step,
                state.decoding.temperature)

    def render(self, trace, state, keep_query: bool = False) -> None:
        self._trace, self._state = trace, state
        tokens = self._tokens_for(state)
        wanted = self.query.currentIndex() if keep_query else (
            state.step if trace.schema.stack_of_stage(state.stage).by_step else max(self.query.currentIndex(), 0))
        # from 0, as PE(pos) and the i, j below; at the output layer a row is a step, as the Output panel names it
        # ("position 3: est" there named the token that position 3 predicts, "rouge" at the attention stages)
        labels = [f"step {i}: predicting token {i + 1} ({t})" if state.stack == OUTPUT else f"position {i}: {t}"
                  for i, t in enumerate(tokens)]
        if [self.query.itemText(i) for i in range(self.query.count())] != labels:
            self.query.blockSignals(True)
            self.query.clear()
            self.query.addItems(labels)
            self.query.blockSignals(False)
        i = min(max(wanted, 0), len(tokens) - 1)
        if self.query.currentIndex() != i:
            self.query.blockSignals(True)
            self.query.setCurrentIndex(i)
            self.query.blockSignals(False)
        self.html = self._html(trace, state, i)
        self.view.setHtml(self.html)

    # --- the equations --------------------------------------------------------------------
    def _html(self, trace, state, i: int) -> str:
        style = self._style()
        if state.stack == OUTPUT:
            return style + self._output_html(trace, state, i)
        st = trace.schema.stack_of_stage(state.stage)
        if state.stack == st.embed_stage:
            return style + self._embed_html(trace, st.tokens, i)
        parts = []
        kind = trace.schema.kind_at(state.stack, state.sublayer)
        if kind is not None:
            parts.append(self._attention_html(trace, kind.name, state.layer, state.head, i))
        parts.append(self._layernorm_html(trace, state.stack, state.layer, state.sublayer, i))
        return style + "".join(parts)

    def _style(self) -> str:
        """The page's CSS in the window's colours: numbers (links, for their full value on hover) in the text
        colour, not the link colour (black: unreadable on the dark and high-contrast themes), and table headers
        a shade off the background, so that their text keeps its contrast in every theme."""
        pal = self.view.palette()
        text, base = pal.color(QtGui.QPalette.ColorRole.Text), pal.color(QtGui.QPalette.ColorRole.Base)
        shade = QtGui.QColor(*(round(0.85 * b + 0.15 * t) for b, t in zip(base.getRgb()[:3], text.getRgb()[:3])))
        return (f"<style>td,th{{padding:2px 8px;text-align:right;white-space:nowrap}} "
                f"th{{background:{shade.name()};color:{text.name()}}} a{{color:{text.name()};text-decoration:none}} "
                ".eq{font-size:115%}</style>")

    def _embed_html(self, trace, p: str, i: int) -> str:
        toks = trace.tokens(p)
        e, pe, x = trace[f"{p}.embedding"][i], trace[f"{p}.pe"][i], trace[f"{p}.x"][i]
        head = f"<h3>Input of token {tok(toks[i])} at position {i}</h3>"
        letter = trace.schema.stream(p)                   # y on the paper's decoder side, as the captions write it
        later = {"rotary": "q and k of every head are rotated by position × θ in each attention sublayer",
                 "relative": "each head adds a bias by relative position to q·kᵀ"}.get(trace.schema.positions)
        if later:
            e_term = equation_html(trace.schema.embedding_terms()[0])          # Gemma's is scaled
            return (head + f"<p class=eq>{letter} = {e_term} = {vec(x)}</p><p>No position is added here: {later} "
                    "(see the Embeddings panel).</p>")
        positional = bool(trace.meta.get("positional", True))
        e_term, p_term = trace.schema.embedding_terms(str(i), positional)
        off = "" if positional else " (the positional encoding is switched off)"
        return (head + f"<p class=eq>e = {e_term} = {vec(e)}</p>"
                f"<p class=eq>p = {p_term}{off} = {vec(pe)}</p>"
                f"<p class=eq>{letter} = {trace.schema.sum_term()} = {vec(x)}</p>"
                + ("<p>s = S[0]: the vector of segment (token type) 0, which every token here is in.</p>"
                   if trace.schema.segment else ""))

    def _attention_html(self, trace, kind: str, layer: int, head: int, i: int) -> str:
        eq = attention_equation(trace, kind, layer, head, i)
        d_k = trace.schema.d_k
        out = [f"<h3>{trace.schema.kind(kind).title}, layer {layer + 1}, head {head + 1}: query {tok(eq.query_token)}</h3>"]
        sc = trace.schema                        # pre-norm: the projections read the normalised stream
        letter = sc.stack(sc.kind(kind).stack).stream     # y in the paper's decoder, as the captions write it
        added = sc.positions not in ("rotary", "relative")          # else positions enter q·kᵀ
        if eq.embedding is not None and not added:
            out.append(f"<p class=eq>{letter}<sub>i</sub> = e<sub>i</sub> (no position is added) = {vec(eq.x)}</p>")
        elif eq.embedding is not None:
            out.append(f"<p class=eq>{letter}<sub>i</sub> = e<sub>i</sub> + p<sub>i</sub> = {vec(eq.embedding)} + "
                       f"{vec(eq.pe)} = {vec(eq.x)}</p>")
        else:
            out.append(f"<p class=eq>{letter}<sub>i</sub> (output of the previous sublayer) = {vec(eq.x)}</p>")
        xi = f"{letter}<sub>i</sub>" if sc.norm_place == NORM_AFTER else f"{sc.norm}({letter}<sub>i</sub>)"
        cross = sc.stack(sc.kind(kind).stack).sublayer(sc.kind(kind).sublayer).kind == ATTENTION_CROSS
        xj = "m<sub>j</sub>" if cross else xi.replace("<sub>i</sub>", "<sub>j</sub>")    # cross: the memory's
        b = {w: f" + b<sub>{w}</sub>" if sc.projection_bias else "" for w in "QKV"}
        q_def, k_def, v_def = (f"{xi} · W<sub>Q</sub>{b['Q']}", f"{xj} · W<sub>K</sub>{b['K']}",
                               f"{xj} · W<sub>V</sub>{b['V']}")
        if sc.qk_norm:
            q_def, k_def = f"N<sub>q</sub>({q_def})", f"N<sub>k</sub>({k_def})"
        if eq.rotated:
            q_def, k_def = f"R<sub>i</sub>({q_def})", f"R<sub>j</sub>({k_def})"
        out.append(f"<p class=eq>q<sub>i</sub> = {q_def} = {vec(eq.q)}</p>")
        if sc.qk_norm:
            out.append(f"<p>N<sub>q</sub>, N<sub>k</sub>: an {sc.norm} of each head's query and key over its "
                       f"{sc.d_k} dimensions, each with a γ of its own (the model's q_norm and k_norm).</p>")
        if cross:
            out.append("<p>m<sub>j</sub>: the encoder's output for source token j (the memory): keys and values "
                       "come from the source, the query from the decoder.</p>")
        if eq.rotated:
            out.append("<p>R<sub>i</sub>: the rotary rotation of position i (each pair of dimensions turned by "
                       "i·θ); q and k below are rotated, as the model multiplies them.</p>")
        root = "√s" if sc.score_scalar else "√d<sub>k</sub>"      # Gemma 2 27B: its query_pre_attn_scalar s
        divided = f" / {root}" if eq.scale != 1.0 else ""
        own = f"; s: the model's scale for q·k (its query_pre_attn_scalar), not d<sub>k</sub> = {d_k}" \
            if sc.score_scalar else ""
        value = f"   ({root} = √{sc.score_scalar or d_k:g} = {num(eq.scale)}{own})" if eq.scale != 1.0 else ""
        plus = " + b<sub>ij</sub>" if eq.bias is not None else ""
        unscaled = " (not divided by √d<sub>k</sub>)" if eq.scale == 1.0 else ""
        score = f"q<sub>i</sub> · k<sub>j</sub>{divided}{plus}{unscaled}"
        if sc.score_cap:                       # Gemma 2: capped softly; the score column is the capped one
            score = f"c · tanh(({score}) / c), c = {sc.score_cap:g}"
        out.append(f"<p class=eq>score<sub>ij</sub> = {score}; "
                   f"α<sub>ij</sub> = softmax<sub>j</sub>(score<sub>ij</sub>){value}</p>")
        if eq.bias is not None:
            out.append("<p>b<sub>ij</sub>: this head's relative position bias for key j's offset from query i "
                       "(see the Embeddings panel).</p>")
        bias_head = "<th>b<sub>ij</sub></th>" if eq.bias is not None else ""
        # the weights first, the long vectors after them: a narrow panel scrolls the vectors, not the α column;
        # the key's position and token in one column (two left α past a 1366 × 768 laptop's dock, QA)
        rows = [f"<table><tr><th>j: key</th><th>q·k<sub>j</sub></th>"
                f"{bias_head}<th>score</th><th>α<sub>ij</sub></th><th>k<sub>j</sub> = {k_def}</th>"
                f"<th>v<sub>j</sub> = {v_def}</th></tr>"]
        for j, t in enumerate(eq.key_tokens):
            if eq.allowed[j]:
                b = f"<td>{num(eq.bias[j])}</td>" if eq.bias is not None else ""
                rows.append(f"<tr><td>{j}: {tok(t)}</td><td>{num(eq.dots[j])}</td>{b}<td>{num(eq.scores[j])}</td>"
                            f"<td><b>{num(eq.alpha[j])}</b></td><td>{vec(eq.K[j], limit=4)}</td>"
                            f"<td>{vec(eq.V[j], limit=4)}</td></tr>")
            else:               # α = 0 in the α column (spread over the row, right-aligned, it sat under v_j: QA)
                rows.append(f"<tr style='color:#888'><td>{j}: {tok(t)}</td>"
                            f"<td colspan={3 if eq.bias is not None else 2}>masked</td><td><b>0</b></td>"
                            "<td colspan=2 style='text-align:left'>a future token or padding</td></tr>")
        out.append("".join(rows) + "</table>")
        # the sum of the rows above: with the head switched off the trace records its output after the switch (0),
        # which read as if Σ α v were 0 (QA)
        total = np.asarray(eq.alpha, float) @ np.asarray(eq.V, float)
        out.append(f"<p class=eq>head output = Σ<sub>j</sub> α<sub>ij</sub> v<sub>j</sub> = {vec(total)}</p>")
        if (kind, layer, head) in ablated_heads(trace):
            out.append("<p><b>This head is switched off:</b> its output is replaced by 0 before the heads are "
                       "concatenated and W<sub>O</sub> applies, so the layer goes on without it.</p>")
        if trace.meta.get("model") == "seed-example" and kind == trace.schema.kinds[0].name \
                and eq.query_token == "cat":
            from model.seed_example import NOTE_SAT      # the seed example is loaded, so is torch
            sat = eq.key_tokens.index("sat")
            out.append(
                "<p style='background:#fff3cd;padding:4px'><b>The note's slip:</b> it writes K<sub>sat</sub> = "
                f"{NOTE_SAT['K']}, V<sub>sat</sub> = {NOTE_SAT['V']} and score(cat→sat) = {NOTE_SAT['score_cat_sat']}. "
                f"From its own inputs: K<sub>sat</sub> = {vec(eq.K[sat])}, V<sub>sat</sub> = {vec(eq.V[sat])}, "
                f"score(cat→sat) = {num(eq.dots[sat], 2)}.</p>")
        return "".join(out)

    def _layernorm_html(self, trace, stack: str, layer: int, sublayer: str, i: int) -> str:
        ln = layernorm_equation(trace, stack, layer, sublayer, i)
        sc = trace.schema                                 # pre-norm and RMSNorm (no centring, no β) say so
        post, centred = sc.norm_place == NORM_AFTER, sc.norm == LAYER_NORM
        ln_token = trace.tokens(sc.stack(stack).tokens)[i]
        d = "d<sub>model</sub>"
        eps = f"; ε = {trace.norm_eps:g}" if trace.norm_eps is not None else ""
        spread = (f"μ = mean(v) = {num(ln.mu)}, σ = √(mean((v − μ)²) + ε) = {num(ln.sigma)}   (means over the {d} "
                  f"dimensions; the biased variance, divided by d<sub>model</sub>, not d<sub>model</sub> − 1{eps})"
                  if centred else f"σ = √(mean(v²) + ε) = {num(ln.sigma)}   (the root mean square over the {d} "
                  f"dimensions{eps})")
        n = "(v − μ)/σ" if centred else "v/σ"
        where = "Add &amp; Norm after" if post else sc.norm + " before"
        return (f"<h3>{where} this sublayer, token {tok(ln_token)} at position {i}</h3>"
                f"<p class=eq>{sc.norm_input(stack, sublayer)} = {vec(ln.v)}</p>"
                f"<p class=eq>{spread}</p>"
                f"<p class=eq>{n} = {vec(ln.normalised)}</p>"
                f"<p class=eq>γ = {vec(ln.gamma)}" + (f", β = {vec(ln.beta)}" if centred else "") + "</p>"
                f"<p class=eq>{sc.norm}(v) = γ ⊙ {n}{' + β' if centred else ''} = {vec(ln.out)}</p>")

    def _output_html(self, trace, state, i: int) -> str:
        cut = sampling_cut(trace, state)          # as the output panel: a sampled run drew from the top k only
        eq = output_equation(trace, i, k=5, temperature=state.decoding.temperature, top_k=cut)
        vocab = getattr(self, "vocab", None)
        rows = "".join(
            f"<tr><td>{tok(vocab[t] if vocab and t < len(vocab) else str(t))}</td><td>{num(l)}</td>"
            f"<td>{num(p, shown=probability(float(p)))}</td></tr>"
            for t, l, p in zip(eq.top_ids, eq.top_logits, eq.top_probs))
        sc = trace.schema                 # the page starts at what the linear map reads, not at the logits (a student)
        st = sc.output_stack
        h = trace.arrays.get(f"{st.key}.out")
        reads = ""
        if h is not None and i < len(h):
            sym = "h<sub>t</sub>" if st.by_step else "h<sub>i</sub>"
            reads = (f"<p class=eq>{sym} = the {st.title.lower()}'s output at {'step' if st.by_step else 'position'} "
                     f"{i}, what the output layer reads = {vec(h[i])}</p>"
                     f"<p class=eq>{equation_html(sc.output_equation)}</p>")
        return (f"<h3>Step {i}: logits → softmax → {tok(eq.chosen)}</h3>{reads}"
                f"<p class=eq>P(y) = softmax(logits / T), T = {num(eq.temperature, 2)}"
                + (f", over the top k = {cut} logits (the others 0: sampling never draws them)" if cut else "")
                + "</p>"
                f"<table><tr><th>token</th><th>logit</th><th>probability</th></tr>{rows}</table>")

    def set_vocab(self, pieces: list[str]) -> None:
        self.vocab = pieces
