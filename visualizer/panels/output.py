"""Output panel: at generation step t, the top-k probabilities of token t+1 as labelled bars, the token the
decoder took highlighted (added below the top-k when it ranks lower), and the entropy of the distribution.

It follows the temperature of the decoding settings: the bars are softmax(logits / T) from trace.probs; a sampled
run with a top-k cut shows the distribution it drew from (the k kept, renormalised).
The Trace holds only the chosen tokens, so the window passes the target vocabulary's readable pieces through
set_vocab() when a model is loaded; without them the bars are labelled with token ids (#17).
"""
from __future__ import annotations

import csv
import io

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from model.text import probability
from model.top_k import top_k_ids

from .. import accessible
from ..plotting.colormaps import BLUE, VERMILLION
from ..plotting.plot_box import PlotBox
from ..plotting.text import (LABEL_PT, MAX_LABEL_CHARS, TICK_PT, escape, fit_number_ticks, short, tick_font,
                             told_apart)
from ..plotting.token_axis import TokenAxis
from ..text_safety import model_order
from .widgets import header_label

TOP_K = 10
NICE_LIMITS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
               0.9, 1.0)
TAKEN = {"teacher-forced": "given (teacher-forced)", "sample": "sampled", "beam": "chosen by beam search",
         "greedy": "chosen (greedy)"}


def entropy_bits(p: np.ndarray) -> float:
    """Shannon entropy of a distribution, in bits (0 · log 0 counts as 0); NaN where it holds NaN (a model that
    computed NaN read "H = 0.00 bits" beside "p = nan", QA)."""
    p = np.asarray(p, dtype=np.float64)
    if np.isnan(p).any():
        return float("nan")
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum()) + 0.0


APOSTROPHES = ("'", "’")


def join_pieces(pieces: list[str]) -> str:
    """Tokens as text: word-piece continuations (##…) join the word before them (never a special token like <s>),
    and an apostrophe piece joins both neighbours (s ' ##assit → s'assit, as the translation reads); a lone space
    piece (␣) is the space before the next word."""
    out, prev = "", ""
    for t in pieces:
        if t == "␣":
            continue
        special = prev.startswith("<") and prev.endswith(">")
        glue = (t.startswith("##") or t in APOSTROPHES or prev in APOSTROPHES) and prev and not special
        text = t[2:] if t.startswith("##") else t
        out += text if glue else (" " if out else "") + text
        prev = t
    return out


# the chart's least height: a short dock (a Head metrics table gone to at 720p) keeps its axis in sight, with fewer
# bars (_fitting_count); below COMFORT_HEIGHT the header keeps its first line and the token taken (_short)
MIN_HEIGHT, COMFORT_HEIGHT = 170, 280
MIN_BARS = 3                # a short plot's least bars, whatever their tokens' size
MIN_VALUE_PT = 7.0          # the bars' numbers shrink to their rows' height, not below this
# the tokens' least size, of the axis' own (one of TokenAxis' LABEL_SCALES): fewer bars before smaller words (at
# 0.7, the heatmaps' THINNED_SCALE, a dock shared with Compare runs, or Ctrl++ in class, drew ten tokens in 7-pixel
# type; QA as a teacher)
BAR_LABEL_SCALE = 0.9


def nice_limit(p_max: float) -> float:
    """The x range: a round number a little above the largest bar."""
    target = min(1.0, p_max * 1.12)
    return next((v for v in NICE_LIMITS if v >= target), 1.0)


def word_start(text: str, cut: str) -> str:
    """text's end as cut (“…” and its last characters) begun at a word: "…rsque les enfants" read "rsque" as a word
    (QA), "…les enfants" does not; as cut where no whole word would be left."""
    if cut == text or not cut.startswith("…"):
        return cut
    kept = cut[1:]
    start = len(text) - len(kept)
    if start > 0 and not text[start - 1].isspace() and not kept[:1].isspace() and " " in kept.strip():
        return "…" + kept.split(" ", 1)[1].lstrip()
    return cut


def run_mode(trace) -> str:
    """How the run chose its tokens (greedy, beam, sample, teacher-forced; "" when it did not say)."""
    return str(trace.meta.get("mode", "")) if isinstance(trace.meta, dict) else ""


def sampling_cut(trace, state) -> int:
    """The top-k a sampled run drew from (0: none, or a run that was not sampled)."""
    return OutputPanel._cut(state) if run_mode(trace) == "sample" else 0


class OutputPanel(QtWidgets.QWidget):
    def __init__(self, parent=None, top_k: int = TOP_K):
        super().__init__(parent)
        self.top_k = top_k
        self.header = header_label()
        self.box = PlotBox("next-token probabilities", "next token", "probability",
                           axisItems={"left": TokenAxis("left")}, min_height=MIN_HEIGHT, fixed_min_height=True)
        self.plot = self.box.item
        self.box.table_csv = self.table_csv          # its plot menu's "Save numbers as CSV…"
        self.plot.invertY(True)                      # most probable at the top
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.72, width=[], brushes=[], pen=None)
        self.plot.addItem(self.bars)
        # a square at the start of the chosen token's bar: a bar of p = 0.0002 has no width to be seen by
        self.chosen_mark = pg.ScatterPlotItem(size=9, symbol="s", brush=pg.mkBrush(VERMILLION), pen=None)
        self.plot.addItem(self.chosen_mark)
        self.separator = pg.InfiniteLine(angle=0, pen=pg.mkPen("#777777", width=1, style=QtCore.Qt.PenStyle.DashLine))
        self.separator.setVisible(False)
        self.plot.addItem(self.separator)
        self.value_items: list[pg.TextItem] = []
        for _ in range(top_k + 1):
            t = pg.TextItem("", color=self.box.foreground, anchor=(0, 0.5))
            t.setFont(tick_font(TICK_PT))
            t.setVisible(False)
            self.plot.addItem(t)
            self.value_items.append(t)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.box, 1)

        self.vocab: list[str] | None = None
        self._pieces: np.ndarray | None = None      # the pieces (object array) to find the chosen one among
        self._vocab_version = 0
        self.step = 0
        self.temperature = 1.0
        self.cut = 0                                 # sampling's top-k, when the run sampled with one
        self.probs = np.zeros(0)                     # the whole distribution at the step, under the temperature
        self._never_drawn: tuple[int, ...] = ()      # ids the decoding never draws (<pad>): 0 in probs
        self.top_ids = np.zeros(0, dtype=int)
        self.top_probs = np.zeros(0)
        self.top_labels: list[str] = []
        self.chosen_label = ""                       # the token the decoder took at this step
        self.chosen_id: int | None = None            # its vocabulary id (None without a vocabulary)
        self.chosen_rank: int | None = None          # 1 = most probable
        self.chosen_prob: float | None = None
        self.chosen_index: int | None = None         # its bar: < shown among the top bars, == shown when added below
        self.shown = -1                              # how many of the top-k bars are drawn (the height's fit)
        self.bar_ids = np.zeros(0, dtype=int)        # every bar drawn, top to bottom
        self.bar_probs = np.zeros(0)
        self.bar_colors: list[str] = []
        self.bar_labels: list[str] = []
        self.entropy = 0.0
        self.title = ""
        self._tgt_tokens: list[str] = []             # the rows' tokens (the output stack's input)
        self._by_step = True                         # rows are generation steps (a decoder)
        self._taken = "chosen"
        self._limit = 1.0                            # the x range's end
        self.box.text_size_changed.connect(self._fonts_changed)
        self._fonts_changed()
        self.plot.vb.sigResized.connect(lambda *_: self._resized())

    def _resized(self) -> None:
        if self.top_ids.size and self._fitting_count() != self.shown:
            self._lay_out_bars()                     # (fits the ticks too)
            return
        self._fit_ticks()
        if self.top_ids.size and self._rows_title() != self.box.axis_titles["left"]:
            self.box.set_axis_title("left", self._rows_title())

    def _fit_ticks(self) -> None:
        reach = fit_number_ticks(self.plot.getAxis("bottom"), 0.0, self._limit, self.plot.vb.width())
        left, top, right, bottom = self.plot.layout.getContentsMargins()   # room on the right for the last label
        if round(right) != reach:                                           # ("1.0" was cut)
            self.plot.layout.setContentsMargins(left, top, reach, bottom)
        # the bars' numbers no taller than a bar's row: at a class's font they ran into each other while the
        # rows' tokens had shrunk to fit (QA)
        row = self.plot.vb.height() / (max(len(self.bar_probs), 1) + 0.2)
        pt = self.box.text_pt
        while pt > MIN_VALUE_PT and QtGui.QFontMetricsF(tick_font(pt)).height() > row:
            pt -= 0.5
        for item in self.value_items:
            if item.textItem.font().pointSizeF() != pt:
                item.setFont(tick_font(pt))

    # --- text size -------------------------------------------------------------------------------
    def _fonts_changed(self, *_) -> None:
        """The bars' numbers at the plot's text size (PlotBox: 17.6 points in presentation mode at 1080p, where they
        stayed at 12 beside 19.6-point text), or smaller where a bar's row is lower (_fit_ticks)."""
        font = tick_font(self.box.text_pt)
        for item in self.value_items:
            item.setFont(font)
            item._look = None                       # laid out again at the new size
        self._fit_ticks()

    def _rows_title(self) -> str:
        """The rows' axis title: what a row is (a decoder's next token, an encoder's own), and how many of the
        top-k a short plot shows ("top 5" alone where the longer title would be cut along the axis)."""
        title = "next token" if self._by_step else "token"
        if self.shown in (-1, len(self.top_ids)):
            return title
        font = tick_font(self.box.text_pt + LABEL_PT - TICK_PT)
        whole = f"{title} (top {self.shown})"
        fits = QtGui.QFontMetricsF(font).horizontalAdvance(whole) <= self.plot.vb.height() + 20
        return whole if fits else f"top {self.shown}"

    def _axis_titles(self) -> None:
        self.box.set_axis_title("left", self._rows_title())

    # --- the window's protocol --------------------------------------------------------------------
    def set_vocab(self, pieces) -> None:
        """Readable pieces of the target vocabulary, indexed by token id (lm.tgt_tok.pieces(range(V)))."""
        self.vocab = [str(p) for p in pieces] if pieces is not None else None
        self._pieces = None                  # the pieces as a numpy array, made when first needed
        self._vocab_version += 1

    def view_key(self, state):
        return (state.step, self._temperature(state), self._cut(state), self._vocab_version)

    def label(self, i: int) -> str:
        return self.vocab[i] if self.vocab and 0 <= i < len(self.vocab) else f"#{i}"

    @staticmethod
    def _temperature(state) -> float:
        t = getattr(getattr(state, "decoding", None), "temperature", 1.0)
        try:
            t = float(t)
        except (TypeError, ValueError):
            return 1.0
        return t if np.isfinite(t) and t > 0 else 1.0

    @staticmethod
    def _cut(state) -> int:
        """Sampling's top-k (0: none): the distribution a sampled token was drawn from has only those k."""
        decoding = getattr(state, "decoding", None)
        if getattr(decoding, "method", "") != "sample":
            return 0
        k = getattr(decoding, "top_k", 0)
        return k if isinstance(k, int) and k > 0 else 0

    def render(self, trace, state) -> None:
        self.box.setVisible(trace.schema.has_output)
        if not trace.schema.has_output:                # e.g. an encoder without its masked-LM head
            self.title = ""
            self.header.setText("This model has no output layer (no language-model head): no distribution to show.")
            return
        if self._by_step != trace.schema.output_stack.by_step:   # a decoder predicts the next token, an encoder each
            self._by_step = trace.schema.output_stack.by_step    # position's own
            self._axis_titles()
        n_steps = int(trace["logits"].shape[0])
        self.step = step = min(max(int(getattr(state, "step", 0) or 0), 0), max(n_steps - 1, 0))
        self.temperature = T = self._temperature(state)
        self._tgt_tokens = list(trace.tokens(trace.schema.output_stack.tokens))
        self._taken = TAKEN.get(run_mode(trace), "chosen")
        if not trace.schema.output_stack.by_step:          # an encoder's own position: nothing was chosen
            self._taken = "most probable"
        elif step < trace.prompt_rows():                    # a decoder-only model reading its prompt
            self._taken = "given (prompt)"
        self.cut = sampling_cut(trace, state)
        probs = trace.probs(step, T, self.cut)
        self.probs, self._never_drawn = probs, trace.never_drawn
        # no bars of the cut, nor of the ids never drawn (the seed example's ten tokens showed "<pad> 0.000")
        k = min(self.top_k, int(np.count_nonzero(probs)) if self.cut else probs.size - len(self._never_drawn))
        order = top_k_ids(probs, k)
        self.top_ids, self.top_probs = order, probs[order]
        self.top_labels = [self.label(int(i)) for i in order]
        self.entropy = entropy_bits(probs)

        self.chosen_label = trace.out_tokens[step] if step < len(trace.out_tokens) else ""
        self.chosen_id = trace.out_id(step)               # by id: two pieces can read alike ("Ġre", "re")
        if self.chosen_id is None:                         # a trace without ids: found by its text
            self.chosen_id = self._chosen_id(probs)
        self.chosen_rank = self.chosen_prob = None
        if self.chosen_id is not None:
            self.chosen_prob = float(probs[self.chosen_id])
            self.chosen_rank = int(np.sum(probs > probs[self.chosen_id])) + 1
        self.shown = -1                              # laid out anew (_lay_out_bars)
        self._lay_out_bars()

    def table_csv(self) -> str | None:
        """The bars as a table a reader can follow: step, rank, token, its id, probability, and the temperature
        and top-k it was drawn at. The plot's generic columns (series, x, label, y) read "bars 1,0.0,Elle,0.951",
        with no word of which number was the probability (QA as a researcher)."""
        if getattr(self, "bar_ids", None) is None or not len(self.bar_ids):
            return None
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["step", "rank", "token", "token_id", "probability", "temperature", "top_k"])
        for i, token in enumerate(self.bar_ids):
            rank = int(np.sum(self.probs > self.probs[token])) + 1
            w.writerow([self.step, rank, self.label(int(token)), int(token), repr(float(self.probs[token])),
                        repr(float(self.temperature)), self.cut])
        return buf.getvalue()

    def _fitting_count(self) -> int:
        """How many of the top-k bars the plot's height holds with their tokens at BAR_LABEL_SCALE of the axis'
        size or more, never under MIN_BARS: in presentation mode at 1080p, beside a Head metrics table, ten rows
        were labelled in 8-point type; six readable ones say more."""
        k = len(self.top_ids)
        height = self.plot.vb.height()
        if height <= 0:                              # not laid out yet
            return k
        axis = self.plot.getAxis("left")
        line = 1.05 * QtGui.QFontMetricsF(tick_font(BAR_LABEL_SCALE * axis.base_font.pointSizeF())).height()
        rows = height / line
        n = int(rows - 0.2)
        if self.chosen_rank is not None and self.chosen_rank > min(n, k):   # its own bar, half a row below
            n = int(rows - 0.7) - 1
        return min(k, max(MIN_BARS, n))

    def _lay_out_bars(self) -> None:
        """The bars drawn: the top ones the height holds, and the token taken, under a dashed line when it ranks
        below them."""
        shown = self._fitting_count()
        if shown == self.shown:
            return
        self.shown = shown
        order = self.top_ids[:shown]
        bar_ids = list(order)
        self.chosen_index = None
        if self.chosen_id is not None:
            hits = np.flatnonzero(order == self.chosen_id)
            if hits.size:
                self.chosen_index = int(hits[0])
            else:                                    # ranked below the bars: one more bar, under a dashed line
                self.chosen_index = shown
                bar_ids.append(self.chosen_id)
        self.bar_ids = np.asarray(bar_ids, dtype=int)
        self.bar_probs = self.probs[self.bar_ids] if self.bar_ids.size else np.zeros(0)
        self.bar_colors = [VERMILLION if i == self.chosen_index else BLUE for i in range(len(bar_ids))]
        self.box.set_axis_title("left", self._rows_title())
        self._draw(shown)

    def _chosen_id(self, probs: np.ndarray) -> int | None:
        if not self.vocab or not self.chosen_label:
            return None
        if self._pieces is None:             # compared in numpy: a dict of 50,000 pieces took 0.1 s to build
            self._pieces = np.array(self.vocab, dtype=object)
        ids = np.flatnonzero(self._pieces[:probs.size] == self.chosen_label)
        return int(ids[np.argmax(probs[ids])]) if ids.size else None

    # --- drawing ----------------------------------------------------------------------------------
    def _draw(self, k: int) -> None:
        n = len(self.bar_ids)
        y = np.arange(n, dtype=float)
        if n > k:
            y[k:] += 0.5                             # a gap before the chosen token ranked below the top-k
        labels = told_apart([self.label(int(i)) for i in self.bar_ids])
        # pieces drawn the same to the letter (two ids both "�"): their ids tell them apart (a review)
        twice = {text for text in labels if labels.count(text) > 1}
        labels = [f"{text} #{int(i)}" if text in twice else text for text, i in zip(labels, self.bar_ids)]
        if n > k:           # its rank kept whole, its token cut to make room ("sûrement (#89…" for rank 8967: QA)
            rank = f" (#{self.chosen_rank})"
            labels[k] = short(labels[k], max(4, MAX_LABEL_CHARS - len(rank))) + rank
        # the chosen bar framed in black as well as coloured: printed in grey its orange was the blue's grey (QA)
        self.bars.setOpts(x0=np.zeros(n), y=y, height=0.72, width=self.bar_probs,
                          brushes=[pg.mkBrush(c) for c in self.bar_colors],
                          pens=[pg.mkPen("k", width=2) if i == self.chosen_index else pg.mkPen(None)
                                for i in range(n)])
        self.bar_labels = labels
        self.plot.getAxis("left").set_labels(labels, y)
        chosen = self.chosen_index is not None and self.chosen_index < n
        self.chosen_mark.setData(x=[0.0] if chosen else [], y=[float(y[self.chosen_index])] if chosen else [])
        limit = nice_limit(float(self.bar_probs.max()) if n else 1.0)
        self.plot.setXRange(0, limit, padding=0.02)
        self._limit = limit
        self._fit_ticks()
        self.plot.setYRange(-0.6, (y[-1] if n else 0) + 0.6, padding=0)
        self.separator.setVisible(n > k)
        if n > k:
            self.separator.setValue(k - 0.1)
        for i, item in enumerate(self.value_items):
            if i >= n:
                item.setVisible(False)
                continue
            p = float(self.bar_probs[i])
            inside = p > 0.72 * limit
            look = (probability(p), inside, self.box.foreground)
            if getattr(item, "_look", None) != look:   # each TextItem call re-lays its text out: only on change
                item._look = look
                item.setText(look[0])
                item.setColor("w" if inside else self.box.foreground)
                item.setAnchor((1, 0.5) if inside else (0, 0.5))
            item.setPos(p - 0.01 * limit if inside else p + 0.01 * limit, float(y[i]))
            item.setVisible(True)

        t = self.step
        if self._by_step:
            prefix = join_pieces(self._prefix())
            prefix = prefix if len(prefix) <= 40 else "…" + prefix[-39:]
            self.title = f"Step {t}: predicting token {t + 1} after “{prefix}”"
            # numbers bound to their words: a narrow dock wrapped "predicting token" and "3" alone (QA in class)
            shown = escape(model_order(self._fitted(prefix)))      # the pieces in the model's order (QA: Hebrew)
            self.box.set_title(f"Step&nbsp;{t}: predicting token&nbsp;{t + 1}<br>after “{shown}”")
        else:                                          # an encoder's head predicts each position's own token
            here = self._tgt_tokens[t] if t < len(self._tgt_tokens) else ""
            self.title = f"Position {t}: what the model would put at “{here}”"
            self.box.set_title(f"Position {t}: what the model would put<br>at “{escape(here)}”")
        self._header()
        # what the bars show, for a screen reader: the plot had said its title alone (QA, a blind student)
        said = [f"“{label}” {probability(float(p))}" + (f", {self._taken}" if i == self.chosen_index else "")
                for i, (label, p) in enumerate(zip(labels, self.bar_probs))]
        accessible.name(self.box, escape(f"Output distribution: {self.title}"),    # (its "<s>" is no tag)
                        "Bars, most probable first: " + "; ".join(said))

    def _fitted(self, prefix: str) -> str:
        """The prefix's end, on the title's second line: in a narrow dock it took two or three lines more as the
        sentence went on, and the chart shrank and grew from step to step (QA at 1024 × 768)."""
        metrics = QtGui.QFontMetricsF(tick_font(self.box.title_pt))
        room = self.box.width() - 24 - metrics.horizontalAdvance("after “”")
        if room <= 0 or not self.box.isVisible():
            return prefix
        return word_start(prefix, metrics.elidedText(prefix, QtCore.Qt.TextElideMode.ElideLeft, room))

    def _prefix(self) -> list[str]:
        return self._tgt_tokens[: self.step + 1]

    def _header(self) -> None:
        V = self.probs.size
        kept = int(np.count_nonzero(self.probs)) if self.cut else V - len(self._never_drawn)  # <pad>: never
        max_bits = float(np.log2(kept)) if kept > 1 else 0.0
        if self.chosen_id is not None:
            taken = (f"<span style='color:{VERMILLION}'>■</span> {escape(self._taken)} "
                     f"“<b>{escape(short(self.chosen_label, 24))}</b>”: p&nbsp;=&nbsp;{probability(self.chosen_prob)}, "
                     f"rank&nbsp;{self.chosen_rank}")           # a narrow dock wrapped the rank's number alone
        elif self.chosen_label:
            taken = (f"taken: “{escape(short(self.chosen_label, 24))}” (load the model's vocabulary to find "
                     f"its bar)")
        else:
            taken = ""
        p = (f"p = softmax(logits / T) over the top&nbsp;k&nbsp;=&nbsp;{self.cut} (the others 0: sampling never draws them)"
             if self.cut else "p = softmax(logits / T)")
        full = (f"<b>Entropy H = {self.entropy:.2f} bits</b> (uniform over {kept} tokens: {max_bits:.2f}) &nbsp;·&nbsp; "
                f"temperature T&nbsp;=&nbsp;{self.temperature:.2f}, {p}<br>{taken}")
        # what the number means, for a student who reads 2.2 bits beside a bar of 0.84
        meaning = (f"H = −Σ p·log₂ p over all {kept} tokens {'sampling keeps' if self.cut else 'of its vocabulary'}: 0 bits when it is certain of "
                   f"one, {max_bits:.2f} when every token is as likely; about 2<sup>H</sup> tokens' worth of choice")
        compact = self._short()
        refit = compact != getattr(self, "short_header", compact)     # a header of the other kind: its height too
        self.short_header = compact
        if self.short_header:           # a short dock (a 720p projector): the plot keeps its axis in sight
            cut = f", top&nbsp;k&nbsp;=&nbsp;{self.cut}" if self.cut else ""      # (its number alone wrapped too)
            # "T =" and its number on one line (a 1024 × 768 projector wrapped "1.00" alone)
            # ("·" opens the next line where it wraps, not ends this one: QA)
            self.header.setText(f"<b>Entropy H = {self.entropy:.2f} bits</b> ·&nbsp;T&nbsp;=&nbsp;"
                                f"{self.temperature:.2f}{cut}<br>{taken}")
            self.header.setToolTip(f"{full}<br><br>{meaning}")
        else:
            self.header.setText(full)
            self.header.setToolTip(meaning)
        if refit:                 # (the four lines' room stayed above a two-line header, QA at 1080p in class)
            self.header.refit()

    def _short(self) -> bool:
        """Whether the room this panel is shown in (its scroll area's viewport, in a dock) cannot hold the plot
        at its minimum height under a four-line header: the header then keeps its first sentence and the token."""
        room = self.parentWidget()
        if room is None:
            return False
        lines = 4 * self.header.fontMetrics().height()
        return room.height() < COMFORT_HEIGHT + lines + 30

    def showEvent(self, event) -> None:
        super().showEvent(event)
        room = self.parentWidget()
        if room is not None and not getattr(self, "_watching", False):
            room.installEventFilter(self)          # its height decides the header's length
            self._watching = True

    def eventFilter(self, watched, event) -> bool:
        if watched is self.parentWidget() and event.type() == QtCore.QEvent.Type.Resize and \
                self._short() != getattr(self, "short_header", None) and self.probs.size:
            self._header()
        return super().eventFilter(watched, event)
