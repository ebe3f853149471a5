"""ViewState: what the user is looking at. Qt-free; widgets subscribe to it and change it only by its methods.

Two kinds of fields:
  run fields  (model_name, sentence, target, decoding, positional): changing one re-runs the model;
  view fields (stack, layer, sublayer, kind, head, step):           changing one only re-renders.
Listeners get the set of field names that changed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from model.config import DecodingSettings

MAX_CHARS = 2000        # longer text is cut before tokenizing (the model's limit cuts further, with a notice)
RUN_FIELDS = frozenset({"model_name", "sentence", "target", "decoding", "positional"})
VIEW_FIELDS = frozenset({"stack", "layer", "sublayer", "kind", "head", "step"})
STACK_SUBLAYERS = {"src_embed": ("",), "enc": ("self", "ffn"), "tgt_embed": ("",),
                   "dec": ("self", "cross", "ffn"), "output": ("",)}
STAGE_TITLES = {("src_embed", ""): "Source embedding + positional encoding",
                ("enc", "self"): "Encoder self-attention + Add & Norm", ("enc", "ffn"): "Encoder feed-forward + Add & Norm",
                ("tgt_embed", ""): "Target embedding + positional encoding",
                ("dec", "self"): "Decoder masked self-attention + Add & Norm",
                ("dec", "cross"): "Decoder cross-attention + Add & Norm",
                ("dec", "ffn"): "Decoder feed-forward + Add & Norm", ("output", ""): "Linear + softmax"}
KIND_OF = {("enc", "self"): "enc_self", ("dec", "self"): "dec_self", ("dec", "cross"): "cross"}
STAGE_OF_KIND = {v: k for k, v in KIND_OF.items()}


@dataclass(frozen=True)
class Stage:
    """One box of the architecture map: a stack, a layer within it, a sublayer of that layer."""
    stack: str
    layer: int = 0
    sublayer: str = ""

    @property
    def title(self) -> str:
        base = STAGE_TITLES[(self.stack, self.sublayer)]
        return f"{base} — layer {self.layer + 1}" if self.stack in ("enc", "dec") else base


def default_model() -> str:
    """The model the app and the commands open without --model: en-fr when it is bundled, else the first one."""
    from model.assets import bundled_models
    names = bundled_models()
    return "en-fr" if "en-fr" in names else names[0]


def pipeline(n_enc: int, n_dec: int) -> list[Stage]:
    """Every stage in the order data flows through the model."""
    stages = [Stage("src_embed")]
    stages += [Stage("enc", l, s) for l in range(n_enc) for s in STACK_SUBLAYERS["enc"]]
    stages += [Stage("tgt_embed")]
    stages += [Stage("dec", l, s) for l in range(n_dec) for s in STACK_SUBLAYERS["dec"]]
    return stages + [Stage("output")]


@dataclass
class ViewState:
    model_name: str = "en-fr"
    sentence: str = "I have a red car."
    target: str = ""                                  # non-empty: decoder runs teacher-forced on it
    decoding: DecodingSettings = field(default_factory=DecodingSettings)
    positional: bool = True
    stack: str = "enc"
    layer: int = 0
    sublayer: str = "self"
    kind: str = "enc_self"                            # the attention kind the attention panel shows
    head: int = 0
    step: int = 0                                     # generation step: decoder row predicting token step+1
    # the shape of the current trace, to keep the view fields in range
    n_enc: int = 1
    n_dec: int = 1
    n_heads: int = 1
    n_steps: int = 1
    _listeners: list = field(default_factory=list, repr=False, compare=False)

    # --- events -------------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[set[str]], None]) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn)

    def update(self, **changes) -> set[str]:
        """Set fields (clamped to the trace's shape); notify listeners of what really changed."""
        unknown = set(changes) - RUN_FIELDS - VIEW_FIELDS - {"n_enc", "n_dec", "n_heads", "n_steps"}
        if unknown:
            raise AttributeError(f"unknown view state fields: {', '.join(sorted(unknown))}")
        before = {k: getattr(self, k) for k in RUN_FIELDS | VIEW_FIELDS}
        for k, v in changes.items():
            setattr(self, k, v)
        if "kind" in changes and "stack" not in changes:
            self.stack, self.sublayer = STAGE_OF_KIND[self.kind]
        self._clamp()
        changed = {k for k in before if getattr(self, k) != before[k]}
        if changed:
            for fn in list(self._listeners):
                fn(changed)
        return changed

    def _clamp(self) -> None:
        if self.stack not in STACK_SUBLAYERS:
            self.stack = "enc"
        if self.sublayer not in STACK_SUBLAYERS[self.stack]:
            self.sublayer = STACK_SUBLAYERS[self.stack][0]
        n = {"enc": self.n_enc, "dec": self.n_dec}.get(self.stack, 1)
        self.layer = min(max(self.layer, 0), n - 1) if self.stack in ("enc", "dec") else 0
        self.head = min(max(self.head, 0), max(self.n_heads - 1, 0))
        self.step = min(max(self.step, 0), max(self.n_steps - 1, 0))
        if (self.stack, self.sublayer) in KIND_OF:
            self.kind = KIND_OF[(self.stack, self.sublayer)]
        elif self.stack in ("src_embed", "enc"):
            self.kind = "enc_self"               # the attention panel shows the attention of the stack in view
        elif self.kind == "enc_self":
            self.kind = "dec_self" if self.stack == "tgt_embed" else "cross"

    # --- the position in the pipeline -------------------------------------------------------
    @property
    def stage(self) -> Stage:
        return Stage(self.stack, self.layer, self.sublayer)

    def stages(self) -> list[Stage]:
        return pipeline(self.n_enc, self.n_dec)

    def go_to(self, stage: Stage) -> set[str]:
        return self.update(stack=stage.stack, layer=stage.layer, sublayer=stage.sublayer)

    def _walk(self, delta: int) -> set[str]:
        stages = self.stages()
        i = stages.index(self.stage) if self.stage in stages else 0
        return self.go_to(stages[min(max(i + delta, 0), len(stages) - 1)])

    def next_sublayer(self) -> set[str]:
        return self._walk(+1)

    def prev_sublayer(self) -> set[str]:
        return self._walk(-1)

    def first(self) -> set[str]:
        return self.go_to(self.stages()[0])

    def last(self) -> set[str]:
        return self.go_to(self.stages()[-1])

    def next_layer(self) -> set[str]:
        return self.update(layer=self.layer + 1)

    def prev_layer(self) -> set[str]:
        return self.update(layer=self.layer - 1)

    def next_head(self) -> set[str]:
        return self.update(head=self.head + 1)

    def prev_head(self) -> set[str]:
        return self.update(head=self.head - 1)

    def next_step(self) -> set[str]:
        return self.update(step=self.step + 1)

    def prev_step(self) -> set[str]:
        return self.update(step=self.step - 1)

    @classmethod
    def for_trace(cls, trace, **view) -> "ViewState":
        """A state fitted to a Trace's layers, heads and steps, at the given view (for scripts and tests)."""
        s = cls()
        s.set_shape(trace.n_layers("enc"), trace.n_layers("dec"), trace.n_heads, trace.n_steps)
        s.update(**view)
        return s

    def set_shape(self, n_enc: int, n_dec: int, n_heads: int, n_steps: int) -> set[str]:
        """Called when a new trace arrives: keep the view where it was, as far as it still exists."""
        return self.update(n_enc=n_enc, n_dec=n_dec, n_heads=n_heads, n_steps=n_steps)

    @classmethod
    def at_start(cls, model: str | None = None, sentence: str | None = None, target: str | None = None) -> "ViewState":
        """A window's first state: the default model and sentence unless given."""
        s = cls(model_name=model or default_model(), target=target or "")
        if sentence:
            s.sentence = sentence
        return s

    def run_fields(self) -> tuple:
        """(text, target, decoding, positional): what a model run reads (text cut to MAX_CHARS)."""
        return self.sentence[:MAX_CHARS], self.target, self.decoding, self.positional

    @property
    def cut_chars(self) -> bool:
        """The sentence is longer than a run reads."""
        return len(self.sentence) > MAX_CHARS

    def run_key(self) -> tuple:
        """Everything that decides the model run; two states with equal keys share a trace."""
        return (self.model_name, self.sentence, self.target, self.decoding, self.positional)
