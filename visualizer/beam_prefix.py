"""A hypothesis of the beam tree on screen: a click on it in the Beam tree panel runs one teacher-forced pass over its
tokens (in a worker), and every panel shows that pass, with a banner naming the hypothesis and a link back to the
chosen translation. The run on screen stays the window's translation (saved frames, drafts and sessions are
unchanged); a new run, or the link, ends the detour."""
from __future__ import annotations

import html

from PySide6 import QtCore

from model.beam_tree import META_KEY, NODE_KEY, BeamTreeError, tree_of
from model.families import require
from model.schema import DECODER_ONLY
from model.threads import one_torch_thread
from model.trace import Trace

from .panels.widgets import notice_label
from .plotting.text import signed
from .row_words import output_word
from .runs import translate
from .worker import ModelRunner


def decoder_kind(schema, kind: str) -> str:
    """The attention kind to show a hypothesis with: the one in view if the decoder has it, else the decoder's
    last (cross-attention: where it looked in the sentence when it chose the token)."""
    own = schema.kinds_of(schema.output_stack.key)
    return kind if any(k.name == kind for k in own) or not own else own[-1].name


class BeamPrefix(QtCore.QObject):
    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.runner = ModelRunner(self)
        self.runner.finished.connect(self._arrived)
        self.runner.failed.connect(self._failed)
        self.seq = 0
        self.node: int | None = None             # the hypothesis on screen (None: the chosen translation)
        self.banner = notice_label("#dcecf9", "#0b2a45", bold=False)     # pale blue: a view, not a warning
        self.banner.linkActivated.connect(lambda _: self.back())

    def show_node(self, node_id: int) -> None:
        """Show the decoder's attention for a hypothesis of the tree on screen (the chosen one or the root: back)."""
        w = self.window
        base = w.translation
        try:
            tree = tree_of(base.trace) if base is not None else None
        except BeamTreeError:
            tree = None
        if tree is None or not 0 <= node_id < len(tree.nodes):
            return
        if node_id in (0, tree.chosen):
            self.back()
            return
        if w.lm is None:
            w.statusBar().showMessage("The model is still loading: a hypothesis can be shown once it runs.", 8000)
            return
        lm, state = w.lm, w.state
        text, ids = base.trace.meta.get("sentence", state.sentence), tree.prefix_ids(node_id)
        positional, ablations = state.positional, state.ablations
        self.seq += 1

        def job():
            one_torch_thread()
            with lm.lock:
                require(lm, ablations)
                extra = {"ablations": ablations} if ablations else {}
                return base, node_id, translate(lm, text, positional=positional, forced_ids=ids, **extra)

        self.runner.submit(self.seq, job)

    def _arrived(self, seq: int, result) -> None:
        base, node_id, forced = result
        w = self.window
        if seq != self.seq or w.translation is not base:      # a newer click, or a new run meanwhile
            return
        t = forced.trace
        meta = dict(t.meta, **{META_KEY: base.trace.meta[META_KEY], NODE_KEY: node_id})
        trace = Trace(t.src_tokens, t.tgt_tokens, t.out_tokens, t.arrays, meta, t.schema)
        node = tree_of(trace).nodes[node_id]
        self.node = node_id
        # the steps counted as the window counts them, the output named as its row names it (as the tree does)
        offset = trace.prompt_rows()
        written = output_word(trace.schema.layout, trace.schema.family, w.state.model_name)
        # (GPT-2's continuation read "the decoder", QA)
        reader = "the model" if trace.schema.layout == DECODER_ONLY else "the decoder"
        self.banner.setText(
            f"Showing the beam hypothesis “{html.escape(node.text)}” (step {node.step + offset}, log p "
            f"{signed(node.cum)}, {node.fate}): {reader} when it chose “{html.escape(node.piece)}”. "
            f"&nbsp;<a href='back'>Back to the chosen {written}</a>")
        self.banner.setVisible(True)
        w.show_trace(trace, step=trace.n_steps - 1, kind=decoder_kind(trace.schema, w.state.kind))

    def _failed(self, seq: int, message: str) -> None:
        if seq == self.seq:
            self.window.statusBar().showMessage(f"Could not run the hypothesis: {message}", 15000)

    def back(self) -> None:
        """The chosen translation's trace again (no model run)."""
        self.seq += 1                                  # a pass still running is not shown
        shown = self.node is not None
        self.clear()
        if shown and self.window.translation is not None:
            self.window.show_trace(self.window.translation.trace)

    def clear(self) -> None:
        """No hypothesis on screen (a new run is shown)."""
        self.node = None
        self.banner.setVisible(False)
