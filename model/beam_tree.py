"""The beam search as a tree: every hypothesis the search kept in its beam or finished, with its parent, token,
log-probabilities, length-penalised score and fate. No torch here: the searches report to a BeamRecorder
(model/decoding.py's beam_search, the Hugging Face families' observer in model/families/hf/beam.py), and the
tree travels in a Trace's meta as plain JSON (BeamTree.to_dict), so saved frames and files keep it.

A node's fate:
  chosen     on the path of the output
  finished   a complete hypothesis (it ended with </s>, or at the length limit) that was not chosen
  kept       in the beam and not a dead end: a finished hypothesis or one still in the beam when the search
             stopped descends from it
  pruned     a dead end: none of its continuations stayed in the beam
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

CHOSEN, FINISHED, KEPT, PRUNED = "chosen", "finished", "kept", "pruned"
FATES = (CHOSEN, FINISHED, KEPT, PRUNED)
GNMT, POWER = "gnmt", "power"
META_KEY = "beam_tree"          # where a Trace's meta holds the tree
NODE_KEY = "beam_node"          # … and, in the trace of one hypothesis (a teacher-forced pass over it), its node


class BeamTreeError(ValueError):
    """A stored tree that cannot be read (a damaged or foreign file)."""


@dataclass(frozen=True)
class Penalty:
    """The length penalty that turns a hypothesis' log-probability into the score the search ranks finished ones by.

    gnmt:  score = log p / ((5 + |y|) / 6) ** value      (Wu et al. 2016, α = value; the seed family)
    power: score = log p / |y| ** value                  (Hugging Face generate's length_penalty, fairseq's lenpen)
    |y| counts the generated tokens, </s> included."""
    kind: str = GNMT
    value: float = 0.6

    def __call__(self, log_prob: float, length: int) -> float:
        if self.kind == GNMT:
            return log_prob / (((5 + length) / 6) ** self.value)
        return log_prob / (length ** self.value)

    def describe(self) -> str:
        if self.kind == GNMT:
            return f"GNMT length penalty: score = log p / ((5 + |y|) / 6)^{self.value:g}"
        return f"length penalty: score = log p / |y|^{self.value:g}"


@dataclass
class Node:
    id: int
    parent: int              # -1 for the root (the decoder's start token, or the end of the prompt)
    token: int               # the token this hypothesis added (the root: its start token, or -1)
    piece: str               # that token, readable
    text: str                # the whole hypothesis as text (detokenised by the model's tokenizer)
    step: int                # the generation step that chose the token (0 = the first); the root: -1
    logp: float              # log p(token | prefix): the decoder's log-softmax
    cum: float               # Σ logp over the path: the hypothesis' log-probability
    score: float             # the search's length-penalised score of the hypothesis
    ended: bool = False      # complete: it ended with </s> (or at the length limit)
    rule_logp: float | None = None   # the log-probability the search used where the model's generation rules
                                     # changed it (a </s> forced at the length limit), else None
    fate: str = KEPT


COLUMNS = tuple(Node.__dataclass_fields__)


@dataclass
class BeamTree:
    width: int
    penalty: Penalty
    nodes: list[Node]        # nodes[0] is the root; a parent comes before its children
    chosen: int              # the chosen (output) hypothesis' node; -1 when the output was not found in the tree
    note: str = ""           # what the tree could not record, in one line ("" when complete)
    _children: dict | None = field(default=None, repr=False, compare=False)

    # --- structure ----------------------------------------------------------------------------
    def children(self, node_id: int) -> list[Node]:
        if self._children is None:
            kids: dict[int, list[Node]] = {}
            for n in self.nodes[1:]:
                kids.setdefault(n.parent, []).append(n)
            self._children = kids
        return self._children.get(node_id, [])

    def path(self, node_id: int) -> list[Node]:
        """The nodes from the first generated token to node_id (the root left out)."""
        out = []
        while node_id > 0:
            n = self.nodes[node_id]
            out.append(n)
            node_id = n.parent
        return out[::-1]

    def prefix_ids(self, node_id: int) -> list[int]:
        """The generated token ids of a hypothesis (what a teacher-forced pass over it reads and predicts)."""
        return [n.token for n in self.path(node_id)]

    def search_cum(self, node_id: int) -> float:
        """The log-probability the search ranked by: Σ logp, with the generation rules' changes."""
        return sum(n.logp if n.rule_logp is None else n.rule_logp for n in self.path(node_id))

    @property
    def n_steps(self) -> int:
        return 1 + max((n.step for n in self.nodes), default=-1)

    def count(self, fate: str) -> int:
        return sum(n.fate == fate for n in self.nodes[1:])

    # --- files (a Trace's meta) -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain JSON: the nodes column by column."""
        return {"width": self.width, "penalty": asdict(self.penalty), "chosen": self.chosen, "note": self.note,
                "nodes": {c: [getattr(n, c) for n in self.nodes] for c in COLUMNS}}

    @classmethod
    def from_dict(cls, data) -> "BeamTree":
        """The tree of to_dict; BeamTreeError (one line) when data is not one."""
        try:
            cols = data["nodes"]
            n = len(cols["id"])
            if n < 1 or any(len(cols[c]) != n for c in COLUMNS):
                raise BeamTreeError("its node columns differ in length")
            nodes = []
            for i in range(n):
                node = Node(*(cols[c][i] for c in COLUMNS))
                if node.id != i or not (-1 <= node.parent < i) or (i > 0) == (node.parent < 0) \
                        or node.fate not in FATES:
                    raise BeamTreeError(f"node {i} is malformed")
                node.token, node.step, node.parent = int(node.token), int(node.step), int(node.parent)
                node.logp, node.cum, node.score = float(node.logp), float(node.cum), float(node.score)
                node.piece, node.text, node.ended = str(node.piece), str(node.text), bool(node.ended)
                nodes.append(node)
            penalty = Penalty(str(data["penalty"]["kind"]), float(data["penalty"]["value"]))
            if penalty.kind not in (GNMT, POWER):
                raise BeamTreeError(f"unknown length penalty {penalty.kind!r}")
            chosen = int(data["chosen"])
            if not -1 <= chosen < n:
                raise BeamTreeError("its chosen node is not in it")
            return cls(int(data["width"]), penalty, nodes, chosen, str(data.get("note", "")))
        except BeamTreeError as e:
            raise BeamTreeError(f"the beam tree cannot be read: {e}") from None
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise BeamTreeError(f"the beam tree cannot be read ({type(e).__name__}: {e})") from None


def tree_of(trace) -> BeamTree | None:
    """The beam tree a Trace carries, or None (greedy, sampling, teacher forcing); BeamTreeError when damaged."""
    data = trace.meta.get(META_KEY) if trace is not None else None
    return None if data is None else BeamTree.from_dict(data)


class BeamRecorder:
    """Builds a BeamTree while a search runs. The search reports each hypothesis as it enters the beam or finishes
    (add), and the output at the end (done). Hypotheses are named by their generated token ids (a tuple), so a
    search that keeps its beams as rows of ids reports them as they are."""

    def __init__(self, width: int, penalty: Penalty, root_token: int, root_piece: str,
                 piece: Callable[[int], str], text: Callable[[list[int]], str]):
        self.width, self.penalty = width, penalty
        self._piece, self._text = piece, text
        self.nodes = [Node(0, -1, root_token, root_piece, "", -1, 0.0, 0.0, 0.0)]
        self.node_of: dict[tuple, int] = {(): 0}
        self.search: list[float] = [0.0]        # per node: the log-probability the search ranks it by

    def cum(self, prefix: tuple) -> float | None:
        """The log-probability of a recorded hypothesis, None when it is not in the tree."""
        i = self.node_of.get(tuple(prefix))
        return None if i is None else self.nodes[i].cum

    def add(self, prefix, token: int, logp: float, step: int, ended: bool = False,
            rule_logp: float | None = None) -> int:
        """Record prefix + [token] (prefix: a recorded hypothesis' ids); its node id. Recording a hypothesis twice
        gives the first node."""
        prefix = tuple(int(t) for t in prefix)
        ids = prefix + (int(token),)
        if ids in self.node_of:
            return self.node_of[ids]
        parent = self.nodes[self.node_of[prefix]]
        search = self.search[parent.id] + float(logp if rule_logp is None else rule_logp)
        node = Node(len(self.nodes), parent.id, int(token), self._piece(int(token)), self._text(list(ids)), step,
                    float(logp), parent.cum + float(logp), self.penalty(search, len(ids)), bool(ended),
                    None if rule_logp is None else float(rule_logp))
        self.nodes.append(node)
        self.search.append(search)
        self.node_of[ids] = node.id
        return node.id

    def done(self, output_ids, note: str = "") -> BeamTree:
        """The finished tree, with every node's fate; output_ids: the search's output (the chosen hypothesis)."""
        chosen = self.node_of.get(tuple(int(t) for t in output_ids), -1)
        if chosen < 0 and not note:
            note = "the output is not among the recorded hypotheses"
        tree = BeamTree(self.width, self.penalty, self.nodes, chosen, note)
        last = tree.n_steps - 1
        alive = [False] * len(self.nodes)          # a finished hypothesis or a live beam descends from it
        for n in reversed(self.nodes[1:]):
            if n.ended or alive[n.id] or (n.step == last and not tree.children(n.id)):
                alive[n.id] = True
                alive[n.parent] = True
        on_path = {n.id for n in tree.path(chosen)} if chosen > 0 else set()
        for n in self.nodes:
            n.fate = CHOSEN if n.id in on_path or n.id == 0 else FINISHED if n.ended else KEPT if alive[n.id] \
                else PRUNED
        return tree


def format_tree(tree: BeamTree, limit: int = 0) -> str:
    """The tree as indented text, one hypothesis a line: token, Σ log p, score of finished ones, fate."""
    lines = [f"{tree.nodes[0].piece}  (beam width {tree.width}; {tree.penalty.describe()})"]

    def walk(node: Node, indent: str) -> None:
        kids = sorted(tree.children(node.id), key=lambda c: (c.fate != CHOSEN, -c.cum))
        for i, c in enumerate(kids):
            last = i == len(kids) - 1
            score = f"  score {c.score:.3f}" if c.ended else ""
            mark = {CHOSEN: "  ◀ chosen" if c.id == tree.chosen else "  *", PRUNED: "  (pruned)",
                    FINISHED: "  (finished)", KEPT: ""}[c.fate]
            lines.append(f"{indent}{'└─ ' if last else '├─ '}{c.piece}  {c.cum:.3f}{score}{mark}")
            walk(c, indent + ("   " if last else "│  "))
    walk(tree.nodes[0], "")
    if tree.note:
        lines.append(f"note: {tree.note}")
    return "\n".join(lines[: limit or None])
