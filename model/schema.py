"""The shape of a model as data: stacks, layers, sublayers, heads, norms, positions, special tokens and labels.

Every consumer (panels, architecture map, stepping, captions and equations, export file names, session files,
the math inspector, benchmarks) reads names, counts, labels and the order of sublayers from a Schema. Families
(model/families/) build one for each model they open; the seed transformer of the notes is one instance.

Trace keys follow the schema (see model/trace.py):
    {stack.tokens}.embedding | .pe | .x                    a stack's input
    {stack.key}.{layer}.{sublayer.key}.{name}              a sublayer's internals
    what a model uses for positions besides p: Schema.rotary_keys(stack) and Schema.bias_keys(kind) name them
A stage is a place in the pipeline the user steps through: a stack's embedding, one sublayer of one layer, or the
output layer.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import cached_property

# what a sublayer computes
ATTENTION_BIDIRECTIONAL = "attention-bidirectional"   # every position sees every position
ATTENTION_CAUSAL = "attention-causal"                 # position i sees positions j <= i
ATTENTION_CROSS = "attention-cross"                   # queries from this stack, keys and values from another's output
FEED_FORWARD = "feed-forward"                         # max(0, x W1 + b1) W2 + b2 (or GELU)
GATED_MLP = "gated-mlp"                               # (act(x W_gate) ⊙ x W_up) W_down, as in Llama
ATTENTION_KINDS = (ATTENTION_BIDIRECTIONAL, ATTENTION_CAUSAL, ATTENTION_CROSS)
SUBLAYER_KINDS = ATTENTION_KINDS + (FEED_FORWARD, GATED_MLP)

# where the norm sits and which one it is
NORM_AFTER = "post"     # LayerNorm(x + Sublayer(x)), as in the paper and the seeds
NORM_BEFORE = "pre"     # x + Sublayer(Norm(x)), as in GPT-2, T5 and Llama
NORM_PLACES = (NORM_AFTER, NORM_BEFORE)
LAYER_NORM, RMS_NORM = "LayerNorm", "RMSNorm"
NORM_KINDS = (LAYER_NORM, RMS_NORM)

POSITIONS = ("sinusoidal", "learned", "relative", "rotary", "none")
ENCODER_DECODER, DECODER_ONLY, ENCODER_ONLY = "encoder-decoder", "decoder-only", "encoder-only"
# the paper's decoder's vectors (an encoder-decoder's "dec" stack): y, where the encoder's are x
DECODER_STREAM = "y"
LAYOUTS = (ENCODER_DECODER, DECODER_ONLY, ENCODER_ONLY)
# what a model of each layout writes, as the window's label and the commands name it
OUTPUT_WORDS = {ENCODER_DECODER: "translation", DECODER_ONLY: "continuation", ENCODER_ONLY: "filled in"}

OUTPUT = "output"        # the stage after the last stack: linear map + softmax


@dataclass(frozen=True)
class RotaryKeys:
    """Trace keys of a stack's rotary positions: the model's own frequencies and the tables it multiplied q, k by."""
    theta: str               # (d_k/2,) θ_i of each dimension pair (the rotary module's inv_freq, scaling included)
    cos: str                 # (T, d_k/2) cos(position × θ_i) as the module gave it (times its attention scaling)
    sin: str                 # (T, d_k/2) sin(position × θ_i), likewise
    positions: str           # (T,) the position of each token the module was given
    theta_local: str = ""    # (d_k/2,) the local layers' θ_i where they turn by a base of their own (Gemma 3)


@dataclass(frozen=True)
class BiasKeys:
    """Trace keys of an attention kind's relative position bias (T5), computed once and added in every layer."""
    bias: str                # (H, Tq, Tk) added to q·kᵀ before the softmax
    buckets: str             # (Tq, Tk) the bucket of each key's offset from its query, which picks the bias


@dataclass(frozen=True)
class Stage:
    """One place of the pipeline: a stack's embedding (sublayer ""), a sublayer of a layer, or the output."""
    stack: str
    layer: int = 0
    sublayer: str = ""


@dataclass(frozen=True)
class Sublayer:
    key: str                 # its part of the Trace's keys, e.g. "self" in "enc.0.self.weights"
    kind: str                # one of SUBLAYER_KINDS
    title: str               # "Decoder masked self-attention"
    short: str               # the architecture map's box: "Masked self-attention → Add & Norm"
    name: str                # lower case, inside sentences: "masked self-attention"
    caption: str             # one sentence for the caption bar
    equation: str
    attention: str = ""      # for attention sublayers: the attention kind's short name (AttentionKind.name)
    label: str = ""          # for attention sublayers: the attention panel's picker, "Decoder masked self"
    file: str = ""           # for attention sublayers: the file-name part of exports, "decoder_self"
    stage_title: str = ""    # the stage's title where it differs from the kind's ("Decoder cross-attention")
    position_bias: bool = False   # attention sublayers: a relative position bias is added to its scores (T5)

    @property
    def is_attention(self) -> bool:
        return self.kind in ATTENTION_KINDS


@dataclass(frozen=True)
class Stack:
    key: str                 # its part of the Trace's keys: "enc" in "enc.0.self.q"
    title: str               # "Encoder"
    n_layers: int
    sublayers: tuple[Sublayer, ...]
    tokens: str              # which token list it reads, and its embedding's key prefix: "src" or "tgt"
    token_noun: str          # "source token", "decoder input token"
    embed_stage: str         # the stage name of its embedding, e.g. "src_embed"
    embed_title: str         # "Source embedding + positional encoding"
    embed_caption: str
    embed_equation: str
    by_step: bool = False    # its rows are generation steps (a decoder): row t predicts token t+1
    embed_caption_off: str = ""     # the caption and equation of a run with its positions switched off ("": the
    embed_equation_off: str = ""    # model adds none to its embedding, or a schema saved before they were written)
    stream: str = "x"        # its vectors' letter in captions and the Math tab: "y" for the paper's decoder

    def sublayer(self, key: str) -> Sublayer:
        for s in self.sublayers:
            if s.key == key:
                return s
        raise KeyError(f"{self.title} has no sublayer {key!r}")


@dataclass(frozen=True)
class AttentionKind:
    """An attention sublayer position shared by every layer of a stack, as the attention panel shows it."""
    name: str                # short name used on the command line, in file names and sessions: "enc_self"
    stack: str
    sublayer: str
    title: str               # "Encoder self-attention"
    label: str               # the attention panel's picker: "Encoder self"
    file: str                # file-name part of exports: "encoder_self"
    queries: str             # token list of the rows: "src" | "tgt"
    keys: str                # token list of the columns
    causal: bool
    by_step: bool            # rows are generation steps


# a schema's words for the panels (titles, captions, equations), as opposed to the model's shape
WORDING = frozenset({"title", "short", "name", "caption", "equation", "label", "stage_title", "token_noun", "stream",
                     "embed_title", "embed_caption", "embed_equation", "embed_caption_off", "embed_equation_off",
                     "output_title", "output_short",
                     "output_caption", "output_equation", "norm_equation"})


@dataclass(frozen=True)
class Schema:
    """A model's shape as data (every Trace carries its model's): its layout, stacks of layers and sublayers,
    attention kinds and special tokens, and the stages and captions the window steps through."""
    family: str                          # "seed", "gpt2", "marian", ...
    layout: str                          # one of LAYOUTS
    stacks: tuple[Stack, ...]            # in the order data flows
    d_model: int
    n_heads: int                         # query heads per attention sublayer
    n_kv_heads: int                      # key/value heads (fewer than n_heads: grouped-query attention)
    d_k: int
    d_ff: int
    norm: str                            # LAYER_NORM | RMS_NORM
    norm_place: str                      # NORM_AFTER | NORM_BEFORE
    positions: str                       # one of POSITIONS
    special: dict = field(default_factory=dict)   # role -> token text: {"pad": "<pad>", "bos": "<s>", ...}
    output_title: str = "Linear + softmax"
    output_short: str = "Linear → softmax"
    output_caption: str = "A linear map to the vocabulary and a softmax give the next token's probabilities."
    output_equation: str = "P(y_{t+1} | y_≤t) = softmax(h_t W_out + b_out)"
    norm_equation: str = "LayerNorm(v) = γ ⊙ (v − μ) / σ + β"
    has_output: bool = True              # the output layer exists (an LM or MLM head)
    projection_bias: bool = True         # q = x W_Q + b_Q (and k, v, the output projection): False in T5, Llama
    scale_embedding: bool = True         # e = √d_model · E[token] (the paper, Marian); False: E[token] (GPT-2, BERT)
    embedding_norm: bool = False         # x = LayerNorm(e + p …): BERT and its kin and BART normalise the sum
    segment: bool = False                # x = LayerNorm(e + p + s): BERT and RoBERTa add a segment vector (type 0)
    position_offset: int = 0             # p = P[i + offset]: RoBERTa and BART's table rows start after the pad id's
    # the feed-forward sublayer reads the layer's input x, as the attention does, not x + Attention(…): out =
    # x + Attention(Norm₁(x)) + FFN(Norm₂(x)) (GPT-NeoX, Pythia). The trace keeps residual = input + out for
    # each sublayer (the FFN's input being x + Attention(…)); its norm's input, ln_in, is x
    parallel_residual: bool = False
    # q and k are each normalised over every head's d_k dimensions (an RMSNorm with its own γ) before the rotary
    # rotation: q = R(N_q(x W_Q)) (Qwen3). The trace's q and k are the normalised, rotated ones
    qk_norm: bool = False
    # scores capped softly before the softmax: score = c · tanh(q·kᵀ/√d_k / c) (Gemma 2's attn_logit_softcapping);
    # 0: not capped. The trace's scores are the capped ones, the softmax's input
    score_cap: float = 0.0
    # q·kᵀ divided by √score_scalar instead of √d_k (Gemma 2 27B's and Gemma 3 27B's query_pre_attn_scalar, 144 and
    # 168 for d_k 128); 0: by √d_k. The trace's scores are divided as the model divides them
    score_scalar: float = 0.0

    def __post_init__(self) -> None:
        problems = []
        if self.layout not in LAYOUTS:
            problems.append(f"layout must be one of {', '.join(LAYOUTS)}")
        if not self.stacks:
            problems.append("a model needs at least one stack")
        if self.norm not in NORM_KINDS or self.norm_place not in NORM_PLACES:
            problems.append(f"norm must be one of {', '.join(NORM_KINDS)}, placed {' or '.join(NORM_PLACES)}")
        if self.positions not in POSITIONS:
            problems.append(f"positions must be one of {', '.join(POSITIONS)}")
        if self.n_heads < 1 or self.n_kv_heads < 1 or self.n_heads % self.n_kv_heads:
            problems.append(f"{self.n_heads} query heads cannot share {self.n_kv_heads} key/value heads")
        for st in self.stacks:
            if st.n_layers < 1:                  # (a layer-less model has no attention to show)
                problems.append(f"the {st.title.lower()} has {st.n_layers} layers: at least 1 is needed")
            if any(s.kind not in SUBLAYER_KINDS for s in st.sublayers):
                problems.append(f"stack {st.key}: bad sublayer kind")
        if problems:
            raise ValueError("invalid model schema: " + "; ".join(problems))

    # --- lookups ------------------------------------------------------------------------------
    def stack(self, key: str) -> Stack:
        """The stack of this key ("enc", "dec", ...); KeyError naming the stacks there are."""
        for st in self.stacks:
            if st.key == key:
                return st
        raise KeyError(f"this model has no stack {key!r} (it has {', '.join(s.key for s in self.stacks)})")

    @cached_property
    def kinds(self) -> tuple[AttentionKind, ...]:
        """Every attention kind, in the order of the pipeline (computed once: the view state asks at every change)."""
        out = []
        for st in self.stacks:
            for sub in st.sublayers:
                if sub.is_attention:
                    queries = st.tokens
                    keys = self.stacks[0].tokens if sub.kind == ATTENTION_CROSS else st.tokens
                    out.append(AttentionKind(sub.attention, st.key, sub.key, sub.title, sub.label, sub.file,
                                             queries, keys,
                                             sub.kind == ATTENTION_CAUSAL, st.by_step))
        return tuple(out)

    @cached_property
    def kind_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.kinds)

    def kind(self, name: str) -> AttentionKind:
        """The attention kind of this name ("enc_self", "cross", ...); KeyError naming the kinds there are."""
        for k in self.kinds:
            if k.name == name:
                return k
        raise KeyError(f"unknown attention kind {name!r} (this model has {', '.join(self.kind_names)})")

    def kind_called(self, name: str) -> AttentionKind:
        """A kind by its short name (enc_self) or by its part of exported file names (encoder_self); KeyError
        naming both."""
        for k in self.kinds:
            if name in (k.name, k.file):
                return k
        raise KeyError(f"unknown attention kind {name!r} (this model has {', '.join(self.kind_names)}; in "
                       f"exported file names {', '.join(k.file for k in self.kinds)})")

    def kind_at(self, stack: str, sublayer: str) -> AttentionKind | None:
        """The attention kind of a sublayer, or None when it is not an attention sublayer."""
        for k in self.kinds:
            if (k.stack, k.sublayer) == (stack, sublayer):
                return k
        return None

    def kinds_of(self, stack: str) -> tuple[AttentionKind, ...]:
        """The attention kinds of a stack's layers."""
        return tuple(k for k in self.kinds if k.stack == stack)

    @property
    def output_stack(self) -> Stack:
        """The stack whose rows the output layer reads (the last one)."""
        return self.stacks[-1]

    @property
    def n_layers(self) -> int:
        """The most layers of any stack."""
        return max(st.n_layers for st in self.stacks)

    @property
    def gqa_group(self) -> int:
        """Query heads per key/value head."""
        return self.n_heads // self.n_kv_heads

    def kv_head(self, head: int) -> int:
        """The key/value head a query head reads (grouped-query attention)."""
        return head // self.gqa_group

    # --- positions a model uses besides an added p ------------------------------------------------
    def norm_input(self, stack: str, sublayer: str) -> str:
        """What the norm of a stack's sublayer reads, as the panels write it (in the stack's letter: y + Sublayer(y)
        in the paper's decoder, as its captions)."""
        st = self.stack(stack)
        x = st.stream
        if self.norm_place == NORM_AFTER:
            return f"v = {x} + Sublayer({x})"
        if self.parallel_residual and not st.sublayer(sublayer).is_attention:
            return f"v = {x}, the layer's input (the attention's too: a parallel residual)"
        return f"v = {x}, the residual stream"

    def rotary_keys(self, stack: str) -> RotaryKeys | None:
        """Where a Trace keeps a stack's rotary tables; None when the model's positions are not rotary."""
        if self.positions != "rotary":
            return None
        p = self.stack(stack).tokens
        return RotaryKeys(f"{p}.rotary_theta", f"{p}.rotary_cos", f"{p}.rotary_sin", f"{p}.rotary_positions",
                          f"{p}.rotary_theta_local")

    def bias_keys(self, kind: str) -> BiasKeys | None:
        """Where a Trace keeps an attention kind's relative position bias; None when that kind adds none."""
        k = self.kind(kind)
        if not self.stack(k.stack).sublayer(k.sublayer).position_bias:
            return None
        return BiasKeys(f"{k.stack}.{k.sublayer}.position_bias", f"{k.stack}.{k.sublayer}.position_buckets")

    # --- the pipeline -------------------------------------------------------------------------
    def stages(self) -> list[Stage]:
        """Every stage in the order data flows through the model."""
        out: list[Stage] = []
        for st in self.stacks:
            out.append(Stage(st.embed_stage))
            out += [Stage(st.key, l, s.key) for l in range(st.n_layers) for s in st.sublayers]
        return out + ([Stage(OUTPUT)] if self.has_output else [])

    def stream(self, tokens: str) -> str:
        """The letter of the vectors made from a token list ("src", "tgt"): the captions' x or y."""
        return next((st.stream for st in self.stacks if st.tokens == tokens), "x")

    def stack_of_stage(self, stage: Stage) -> Stack:
        """The stack a stage belongs to: its own, the one an embedding feeds, or the output's."""
        if stage.stack == OUTPUT:
            return self.output_stack
        for st in self.stacks:
            if stage.stack in (st.key, st.embed_stage):
                return st
        raise KeyError(f"this model has no stage {stage.stack!r}")

    def is_layer_stage(self, stage: Stage) -> bool:
        return any(stage.stack == st.key for st in self.stacks)

    def has_stage(self, stage: Stage) -> bool:
        return stage in set(self.stages())

    def stage_names(self) -> tuple[str, ...]:
        """Every value a Stage's stack can take: stack keys, embedding stages and the output."""
        return tuple(n for st in self.stacks for n in (st.embed_stage, st.key)) + ((OUTPUT,) if self.has_output else ())

    def title(self, stage: Stage) -> str:
        """The stage's title, with its layer where it has one."""
        if stage.stack == OUTPUT:
            return self.output_title
        st = self.stack_of_stage(stage)
        if stage.stack == st.embed_stage:
            return st.embed_title
        sub = st.sublayer(stage.sublayer)
        name = sub.stage_title or sub.title
        if self.norm_place == NORM_AFTER:
            return f"{name} + {self.norm_label} — layer {stage.layer + 1}"
        # the norm first, as the map's box and the equation have it (QA: GPT-2's read "Masked self-attention +
        # LayerNorm" under a box "LayerNorm → Masked self-attention"); a second norm after (Gemma 2) too
        after = f" → {self.norm}" if sub.short.endswith(f" → {self.norm}") else ""
        return f"{self.norm} → {name}{after} — layer {stage.layer + 1}"

    def short(self, stage: Stage, positional: bool = True) -> str:
        """The label of the stage's box in the architecture map; positional=False: the run's positional encodings
        are switched off."""
        if stage.stack == OUTPUT:
            return self.output_short
        st = self.stack_of_stage(stage)
        if stage.stack == st.embed_stage:
            if self.positions not in ("sinusoidal", "learned"):
                return "Embedding"
            return "Embedding + positional encoding" if positional else "Embedding (positions off)"
        return st.sublayer(stage.sublayer).short

    def terse(self, stage: Stage, positional: bool = True) -> str:
        """The box's label without the norm step every sublayer box repeats ("Masked self-attention" for
        "Masked self-attention → Add & Norm", "Self-attention" for "LayerNorm → Self-attention"), for a map too
        narrow for the whole label at a readable size."""
        label = self.short(stage, positional)
        if self.is_layer_stage(stage):
            label = label.removesuffix(f" → {self.norm_label}").removeprefix(f"{self.norm_label} → ")
        return label

    def caption(self, stage: Stage, positional: bool = True) -> tuple[str, str, str]:
        """(title, one-sentence explanation, equation) of a stage; positional=False: in a run with the positions
        switched off (an embedding's caption had gone on saying "+ PE(i)", QA)."""
        if stage.stack == OUTPUT:
            return self.output_title, self.output_caption, self.output_equation
        st = self.stack_of_stage(stage)
        if stage.stack == st.embed_stage:
            if not positional and st.embed_caption_off:
                return (st.embed_title.replace(" + positional encoding", " (positions off)"), st.embed_caption_off,
                        st.embed_equation_off)
            return st.embed_title, st.embed_caption, st.embed_equation
        sub = st.sublayer(stage.sublayer)
        return self.title(stage), sub.caption, sub.equation

    @property
    def norm_label(self) -> str:
        """How the panels name the norm step: "Add & Norm" after the residual, the norm's name before it."""
        return "Add & Norm" if self.norm_place == NORM_AFTER else self.norm

    def describe(self) -> str:
        """One line for the status bar: '3+3 layers, 4 heads, d_model 256'."""
        layers = "+".join(str(st.n_layers) for st in self.stacks)
        heads = f"{self.n_heads} head{'s' if self.n_heads != 1 else ''}" + (
            f" ({self.n_kv_heads} key/value)" if self.n_kv_heads != self.n_heads else "")
        return f"{layers} layers, {heads}, d_model {self.d_model}"

    # --- the embedding's terms, for the panels' formulas -------------------------------------------
    def embedding_terms(self, position: str = "position", positional: bool = True) -> tuple[str, str]:
        """(e, p) as formulas in plain text: ("√d_model · E[token]", "PE(position)") for the paper's model,
        ("E[token]", "P[position]") for learned positions without a scale (GPT-2, BERT); p is "0" where no position
        is added, and in a run with the positions switched off (positional False: "PE(3) = [0, 0, …]" read as if
        the encoding were 0, QA)."""
        e = ("√d_model · " if self.scale_embedding else "") + "E[token]"
        if not positional:
            return e, "0"
        row = position if not self.position_offset else str(int(position) + self.position_offset) \
            if position.isdigit() else f"{position} + {self.position_offset}"      # RoBERTa's place 0 is P[2]
        return e, {"sinusoidal": f"PE({position})", "learned": f"P[{row}]"}.get(self.positions, "0")

    def sum_term(self, positional: bool = True) -> str:
        """x from e and p as the model computes it: "e + p" (the paper), "LayerNorm(e + p + s)" (BERT: the sum
        normalised, a segment vector s added), "e" where no position is added or they are switched off."""
        added = positional and self.positions in ("sinusoidal", "learned")
        terms = "e" + (" + p" if added else "") + (" + s" if self.segment else "")
        return f"LayerNorm({terms})" if self.embedding_norm else terms

    def same_model(self, other: "Schema") -> bool:
        """Whether other describes the same model, whatever their words for the panels (WORDING): a frame saved by
        a version that worded a caption otherwise is that model's run (it was set aside as damaged after an update)."""
        def shape(x):
            if isinstance(x, dict):
                return {k: shape(v) for k, v in x.items() if k not in WORDING}
            if isinstance(x, (list, tuple)):
                return [shape(v) for v in x]
            return x
        return shape(self.to_dict()) == shape(other.to_dict())

    # --- files --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The schema as plain data (JSON-ready); from_dict reads it back."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Schema":
        """Raises ValueError (with the field named) on anything malformed."""
        try:
            # a schema saved before stacks had their letter (a bundled start frame): the paper's decoder's is y
            paper_decoder = {"stream": DECODER_STREAM} if data.get("layout") == ENCODER_DECODER else {}
            stacks = tuple(Stack(**{**(paper_decoder if st.get("key") == "dec" else {}), **st,
                                    "sublayers": tuple(Sublayer(**s) for s in st["sublayers"])})
                           for st in data["stacks"])
            return cls(**{**data, "stacks": stacks, "special": dict(data.get("special", {}))})
        except (KeyError, TypeError) as e:
            raise ValueError(f"invalid model schema: {e}") from None

    def with_layers(self, **n_layers: int) -> "Schema":
        """The same schema with other layer counts per stack key (for tests and tools)."""
        return replace(self, stacks=tuple(replace(st, n_layers=n_layers.get(st.key, st.n_layers))
                                          for st in self.stacks))

