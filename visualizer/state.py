"""ViewState: what the user is looking at. Qt-free; widgets subscribe to it and change it only by its methods.

Two kinds of fields:
  run fields  (model_name, sentence, target, decoding, positional, ablations): changing one re-runs the model;
  view fields (stack, layer, sublayer, kind, head, step):           changing one only re-renders.
Listeners get the set of field names that changed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from model.config import DecodingSettings
from model.schema import OUTPUT, Schema, Stage  # noqa: F401 (Stage re-exported)

MAX_CHARS = 8000        # longer text is cut before tokenizing (the model's limit cuts further, with a notice): a
# 1024-position model reads about 5,000 of them (2,000 had left its last 500 positions out of reach in the window, QA)
RUN_FIELDS = frozenset({"model_name", "sentence", "target", "decoding", "positional", "ablations"})
VIEW_FIELDS = frozenset({"stack", "layer", "sublayer", "kind", "head", "step"})
SHAPE_FIELDS = frozenset({"schema", "n_steps"})


def default_model() -> str:
    """The model the app and the commands open without --model: en-fr when it is bundled, else the first one."""
    from model.assets import bundled_models
    names = bundled_models()
    return "en-fr" if "en-fr" in names else names[0]


@dataclass
class ViewState:
    model_name: str = "en-fr"
    sentence: str = "I have a red car."
    target: str = ""                                  # non-empty: decoder runs teacher-forced on it
    decoding: DecodingSettings = field(default_factory=DecodingSettings)
    positional: bool = True
    ablations: frozenset = frozenset()                # heads switched off: {(kind, layer, head)}, 0-based
    stack: str = ""                                   # a stage of the schema's pipeline: stack, layer, sublayer
    layer: int = 0
    sublayer: str = ""
    kind: str = ""                                    # the attention kind the attention panel shows
    head: int = 0
    step: int = 0                                     # generation step: decoder row predicting token step+1
    # the shape of the current trace, to keep the view fields in range (None until the first trace)
    schema: Schema | None = None
    n_steps: int = 1
    _listeners: list = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._clamp()                                 # a state made with a schema starts on one of its stages

    # --- events -------------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[set[str]], None]) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn)

    def update(self, **changes) -> set[str]:
        """Set fields (clamped to the trace's shape); notify listeners of what really changed."""
        unknown = set(changes) - RUN_FIELDS - VIEW_FIELDS - SHAPE_FIELDS
        if unknown:
            raise AttributeError(f"unknown view state fields: {', '.join(sorted(unknown))}")
        # the shape too: what a step can reach (Actions.grey_moves) changes with it (a longer sentence's Step ▶
        # stayed grey at step 5 of 8: QA); the schema by identity (a new model's, or a new run's)
        before = {k: getattr(self, k) for k in RUN_FIELDS | VIEW_FIELDS | SHAPE_FIELDS}
        for k, v in changes.items():
            setattr(self, k, v)
        if "kind" in changes and "stack" not in changes and self.schema is not None \
                and self.kind in self.schema.kind_names:
            k = self.schema.kind(self.kind)
            self.stack, self.sublayer = k.stack, k.sublayer
        self._clamp(new_shape="schema" in changes)
        changed = {k for k in before if (getattr(self, k) is not before[k] if k == "schema"
                                         else getattr(self, k) != before[k])}
        if changed:
            for fn in list(self._listeners):
                fn(changed)
        return changed

    @property
    def n_heads(self) -> int:
        return self.schema.n_heads if self.schema is not None else 1

    def _clamp(self, new_shape: bool = False) -> None:
        self.head = min(max(self.head, 0), max(self.n_heads - 1, 0))
        self.step = min(max(self.step, 0), max(self.n_steps - 1, 0))
        sc = self.schema
        if sc is None:
            return
        if new_shape:        # another model's run: its own heads only (a session's heads, set before its model's
            # first run came, were checked against the model on screen then and dropped without a word: QA)
            self.ablations = frozenset(a for a in self.ablations if _in_schema(a, sc))
        if self.stack not in sc.stage_names():          # a stage this model lacks: its first attention sublayer
            first = sc.stacks[0]
            self.stack, self.layer, self.sublayer = first.key, 0, first.sublayers[0].key
        stack = sc.stack_of_stage(Stage(self.stack))
        if sc.is_layer_stage(Stage(self.stack)):
            if self.sublayer not in [sub.key for sub in stack.sublayers]:
                self.sublayer = stack.sublayers[0].key
            self.layer = min(max(self.layer, 0), stack.n_layers - 1)
        else:
            self.layer, self.sublayer = 0, ""
        here = sc.kind_at(self.stack, self.sublayer)
        own = sc.kinds_of(stack.key)
        if here is not None:
            self.kind = here.name
        elif self.kind not in [k.name for k in own] and own:
            # the attention panel shows the attention of the stack in view: the first kind of a stack's embedding
            # or layers, the last one (cross-attention) at the output
            self.kind = (own[-1] if self.stack == OUTPUT else own[0]).name
        elif self.kind not in sc.kind_names:
            self.kind = sc.kinds[0].name

    # --- the position in the pipeline -------------------------------------------------------
    @property
    def stage(self) -> Stage:
        return Stage(self.stack, self.layer, self.sublayer)

    def stages(self) -> list[Stage]:
        return self.schema.stages() if self.schema is not None else []

    def go_to(self, stage: Stage) -> set[str]:
        return self.update(stack=stage.stack, layer=stage.layer, sublayer=stage.sublayer)

    def _walk(self, delta: int) -> set[str]:
        stages = self.stages()
        if not stages:
            return set()
        i = stages.index(self.stage) if self.stage in stages else 0
        return self.go_to(stages[min(max(i + delta, 0), len(stages) - 1)])

    def next_sublayer(self) -> set[str]:
        return self._walk(+1)

    def prev_sublayer(self) -> set[str]:
        return self._walk(-1)

    def _loop_start(self) -> Stage | None:
        """The first stage whose rows are generation steps (a decoder's embedding): where a presenter's walk goes
        on at the next step, after linear + softmax; None for a model that generates nothing."""
        stages = self.stages()
        return next((s for s in stages if self.schema.stack_of_stage(s).by_step), None) if stages else None

    def next_in_talk(self) -> set[str]:
        """PageDown (a presenter's remote): the next stage; past linear + softmax, the next generation step from
        the decoder's embedding (the remote stopped at step 0's output, and a class never saw the rest made: QA)."""
        start = self._loop_start()
        if not self.can("next_sublayer") and start is not None and self.can("next_step"):
            return self.update(step=self.step + 1, stack=start.stack, layer=start.layer, sublayer=start.sublayer)
        return self.next_sublayer()

    def prev_in_talk(self) -> set[str]:
        """PageUp: next_in_talk undone: from the decoder's embedding at step t > 0, linear + softmax of step t − 1."""
        if self.stage == self._loop_start() and self.can("prev_step"):
            last = self.stages()[-1]
            return self.update(step=self.step - 1, stack=last.stack, layer=last.layer, sublayer=last.sublayer)
        return self.prev_sublayer()

    def first(self) -> set[str]:
        return self.go_to(self.stages()[0])

    def last(self) -> set[str]:
        return self.go_to(self.stages()[-1])

    def next_layer(self) -> set[str]:
        return self._layer_move(+1)

    def prev_layer(self) -> set[str]:
        return self._layer_move(-1)

    def _layer_move(self, delta: int) -> set[str]:
        target = self._layer_target(delta)
        return self.go_to(target) if target is not None else set()

    def _layer_target(self, delta: int) -> Stage | None:
        """The same sublayer one layer down (+1) or up (-1); past a stack's first or last layer, and from an
        embedding or the output, the nearest stage that way outside this layer (Layer ▼ at the embedding did
        nothing, with no word: QA); None past the pipeline's end."""
        if self.schema is not None and self.schema.is_layer_stage(self.stage):
            if 0 <= self.layer + delta < self.schema.stack(self.stack).n_layers:
                return Stage(self.stack, self.layer + delta, self.sublayer)
        stages = self.stages()
        if self.stage not in stages:
            return None
        i = stages.index(self.stage)
        way = range(i + delta, len(stages) if delta > 0 else -1, delta)
        return next((stages[j] for j in way if (stages[j].stack, stages[j].layer) != (self.stack, self.layer)), None)

    def next_head(self) -> set[str]:
        return self.update(head=self.head + 1)

    def prev_head(self) -> set[str]:
        return self.update(head=self.head - 1)

    def next_step(self) -> set[str]:
        return self.update(step=self.step + 1)

    def prev_step(self) -> set[str]:
        return self.update(step=self.step - 1)

    def can(self, move: str) -> bool:
        """Whether a move (one of the methods above, by name: "next_sublayer", "prev_head"…) would change the
        view: the toolbar greys the others (at the pipeline's ends, a press of a bright button did nothing)."""
        if move in ("prev_layer", "next_layer"):
            return self._layer_target(-1 if move == "prev_layer" else +1) is not None
        if move in ("prev_head", "next_head", "prev_step", "next_step"):
            at, count = (self.head, self.n_heads) if move.endswith("head") else (self.step, self.n_steps)
            return at > 0 if move.startswith("prev") else at < count - 1
        if move not in ("first", "prev_sublayer", "last", "next_sublayer"):
            raise ValueError(f"no such move: {move}")
        stages = self.stages()
        i = stages.index(self.stage) if self.stage in stages else 0
        return i > 0 if move in ("first", "prev_sublayer") else i < len(stages) - 1

    @classmethod
    def for_trace(cls, trace, **view) -> "ViewState":
        """A state fitted to a Trace's layers, heads and steps, at the given view (for scripts and tests)."""
        s = cls()
        s.set_shape(trace.schema, trace.n_steps)
        s.update(**view)
        return s

    def set_shape(self, schema: Schema, n_steps: int) -> set[str]:
        """Called when a new trace arrives: keep the view where it was, as far as it still exists."""
        return self.update(schema=schema, n_steps=n_steps)

    @property
    def title(self) -> str:
        """The title of the stage in view ("" before the first trace)."""
        return self.schema.title(self.stage) if self.schema is not None else ""

    @classmethod
    def at_start(cls, model: str | None = None, sentence: str | None = None, target: str | None = None) -> "ViewState":
        """A window's first state: the default model and sentence unless given ("" too: an empty box, as asked)."""
        s = cls(model_name=model or default_model(), target=target or "")
        if sentence is not None:
            s.sentence = sentence
        return s

    def attention_layer(self, n_layers: int) -> int:
        """The layer whose attention the view shows, of a stack of n_layers: at the output the last (the output
        stage has no layer of its own; the linear map reads the last layer's result), else the state's (the
        attention panel and the Model view alike: the Model view had framed layer 1 at the output, QA)."""
        return n_layers - 1 if self.stack == OUTPUT else min(self.layer, n_layers - 1)

    def run_fields(self) -> tuple:
        """(text, target, decoding, positional): what a model run reads (text cut to MAX_CHARS)."""
        return self.sentence[:MAX_CHARS], self.target, self.decoding, self.positional

    @property
    def cut_chars(self) -> bool:
        """The sentence is longer than a run reads."""
        return len(self.sentence) > MAX_CHARS

    def run_key(self) -> tuple:
        """Everything that decides the model run; two states with equal keys share a trace."""
        return (self.model_name, self.sentence, self.target, self.decoding, self.positional, self.ablations)

    # --- ablations ------------------------------------------------------------------------------
    def toggle_ablation(self, kind: str, layer: int, head: int) -> set[str]:
        """Switch one head (0-based) off, or on again if it is off; the model runs again."""
        return self.update(ablations=self.ablations ^ {(kind, layer, head)})

    def reset_ablations(self) -> set[str]:
        """Every head on again."""
        return self.update(ablations=frozenset())


def _in_schema(ablation: tuple, schema: Schema) -> bool:
    kind, layer, head = ablation
    return (kind in schema.kind_names and 0 <= layer < schema.stack(schema.kind(kind).stack).n_layers
            and 0 <= head < schema.n_heads)
