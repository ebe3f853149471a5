"""Head ablation: a set of attention heads switched off. A head that is off gives zeros as its slice of the
concatenated heads, before W_O, so the rest of the model runs on without it (model/attention.py).

Inside, an ablation is (kind, layer, head), 0-based, with the schema's short kind names; users read and type
them 1-based as KIND:LAYER:HEAD, with `all` for every layer or head ("cross:all:all", "enc_self:2:all").
No torch here.
"""
from __future__ import annotations

import numpy as np

Ablation = tuple[str, int, int]          # (kind short name, layer, head), 0-based
NONE: frozenset[Ablation] = frozenset()


class AblationError(ValueError):
    """An ablation that names no head of the model; str() is one line."""


def parse_spec(text: str) -> tuple[str, int | None, int | None]:
    """'KIND:LAYER:HEAD' -> (kind, layer or None for all, head or None for all), layer and head 1-based."""
    parts = text.strip().split(":")
    if len(parts) != 3 or not parts[0]:
        raise AblationError(f"{text!r} is not KIND:LAYER:HEAD (e.g. cross:2:1, or cross:all:all)")
    numbers = []
    for what, part in zip(("layer", "head"), parts[1:]):
        if part.strip().lower() == "all":
            numbers.append(None)
            continue
        try:
            value = int(part)
        except ValueError:
            raise AblationError(f"{text!r}: the {what} must be a number from 1, or 'all'") from None
        if value < 1:
            raise AblationError(f"{text!r}: the {what} must be a number from 1, or 'all'")
        numbers.append(value)
    return parts[0].strip(), numbers[0], numbers[1]


def expand(specs, schema) -> frozenset[Ablation]:
    """Parsed specs (see parse_spec) -> the 0-based heads they name in this schema; AblationError when a kind,
    layer or head does not exist."""
    out: set[Ablation] = set()
    for kind, layer, head in specs:
        try:
            kind = schema.kind_called(kind).name       # also by its part of exported file names: encoder_self
        except KeyError as e:
            raise AblationError(e.args[0]) from None
        n_layers = schema.stack(schema.kind(kind).stack).n_layers
        if layer is not None and layer > n_layers:
            raise AblationError(f"{kind}: no layer {layer} (it has {n_layers})")
        if head is not None and head > schema.n_heads:
            raise AblationError(f"{kind}: no head {head} (it has {schema.n_heads})")
        layers = range(n_layers) if layer is None else [layer - 1]
        heads = range(schema.n_heads) if head is None else [head - 1]
        out |= {(kind, l, h) for l in layers for h in heads}
    return frozenset(out)


def check(ablations, schema) -> frozenset[Ablation]:
    """0-based ablations, (kind, layer, head) triples as translate takes them (None for every layer or head),
    checked against a schema: the heads they name, or AblationError saying, counted from 0, which is not there. A
    negative number had passed (Python's indexing took the last layer, the trace recorded 'cross:0:0', and a
    Hugging Face model switched nothing off: QA)."""
    if not ablations:
        return NONE
    if isinstance(ablations, tuple) and len(ablations) == 3 and isinstance(ablations[0], str):
        raise AblationError(f"ablations: a set of (kind, layer, head) triples, not one triple: {{{ablations!r}}}")
    specs = []
    for item in ablations:
        try:
            kind, layer, head = item
        except (TypeError, ValueError):
            raise AblationError(f"ablations: {item!r} is not a (kind, layer, head) triple") from None
        try:
            kind = schema.kind_called(str(kind)).name
        except KeyError as e:
            raise AblationError(e.args[0]) from None
        counts = {"layer": schema.stack(schema.kind(kind).stack).n_layers, "head": schema.n_heads}
        for name, value in (("layer", layer), ("head", head)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise AblationError(f"ablations: the {name} of {kind} is {value!r}: a whole number counted from 0, "
                                    f"or None for every {name}")
            if not 0 <= value < counts[name]:
                raise AblationError(f"{kind}: no {name} {value} counted from 0 (it has {name}s 0 to "
                                    f"{counts[name] - 1})")
        specs.append((kind, None if layer is None else int(layer) + 1, None if head is None else int(head) + 1))
    return expand(specs, schema)


def spec(ablation: Ablation) -> str:
    """The 1-based text of one ablated head: 'cross:2:1'."""
    kind, layer, head = ablation
    return f"{kind}:{layer + 1}:{head + 1}"


def describe(ablations, schema=None, listed: int | None = 6) -> str:
    """'2 heads off: cross:1:1; cross:1:2' (the first `listed` named, as --ablate spells them; None: every one),
    or '' when none are; with a schema, in the panels' words and by layer: '3 heads off: Cross L1 H1, H2; Self L2
    H4', a layer's every head '8 heads off: Cross L1 (all 8 heads)' (listed counts layers then)."""
    if not ablations:
        return ""
    names = sorted(ablations)

    # (a head of a kind the schema lacks, as --ablate spells it: a session's heads are set while the model before
    # its own is still on screen, and a Hugging Face session's 'self' raised)
    known = [a for a in names if schema is not None and a[0] in schema.kind_names]
    groups: dict[tuple[str, int], list[int]] = {}
    for kind, layer, head in known:
        groups.setdefault((kind, layer), []).append(head)
    # a whole layer's heads in a few words: an exported title listed "Decoder masked self L5 H1, … L5 H2, …" over
    # three lines (QA); a layer's heads together: "Cross L1 H1, H2"
    def layer_words(kind: str, layer: int, heads: list[int]) -> str:
        every = len(heads) == schema.n_heads > 1
        return f"{schema.kind(kind).label} L{layer + 1} " + (
            f"(all {len(heads)} heads)" if every else ", ".join(f"H{h + 1}" for h in heads))
    # a kind's every head in every layer in a few words too: "Cross, every layer (all 40 heads)"; Compare runs'
    # title with every cross head off ran to five lines (QA as a researcher)
    layers = {k.name: schema.stack(k.stack).n_layers for k in schema.kinds} if schema is not None else {}
    whole = {kind for kind, _ in groups if layers[kind] > 1 and all(
        len(groups.get((kind, layer), ())) == schema.n_heads for layer in range(layers[kind]))}
    items = [f"{schema.kind(kind).label}, every layer (all {layers[kind] * schema.n_heads} heads)"
             for kind in sorted(whole, key=lambda k: schema.kind_names.index(k))]
    items += [layer_words(kind, layer, heads) for (kind, layer), heads in groups.items() if kind not in whole] + \
        [spec(a) for a in names if a not in known]
    shown = items if listed is None else items[:listed]
    words = "; ".join(shown) + ("; …" if len(shown) < len(items) else "")
    return f"{len(names)} head{'s' if len(names) != 1 else ''} off: {words}"


def mean_of_heads_on(weights, kind: str, layer: int, ablations) -> tuple[np.ndarray, str]:
    """(the mean over the heads of weights (H, Tq, Tk) that are on, its words for a title): a switched-off head's
    pattern is computed but adds nothing to the layer's output, and a mean that counted it read as the layer's
    (QA: "mean of heads" with 2 of 8 off was the 8 heads' mean). Every head's mean where all are on or all off."""
    w = np.asarray(weights)
    on = [h for h in range(len(w)) if (kind, layer, h) not in ablations]
    if len(on) == 1 < len(w):                 # ("mean of the 1 heads on", QA)
        return w[on[0]], f"the one head on, head\u00a0{on[0] + 1}"
    if 0 < len(on) < len(w):
        return w[on].mean(0), f"mean of the {len(on)} heads on"
    return w.mean(0), "mean of heads" if on else "mean of heads (every one switched off)"


def by_module(ablations, schema) -> dict[tuple[str, int, str], tuple[int, ...]]:
    """{(stack, layer, sublayer): heads} of the ablations (where each attention module must zero its heads)."""
    out: dict[tuple[str, int, str], list[int]] = {}
    for kind, layer, head in sorted(ablations):
        k = schema.kind(kind)
        out.setdefault((k.stack, layer, k.sublayer), []).append(head)
    return {key: tuple(v) for key, v in out.items()}


def ablated_heads(trace) -> frozenset[Ablation]:
    """The heads that were off in the run a trace records (its meta's "ablations"), 0-based."""
    out = set()
    for text in trace.meta.get("ablations", ()):
        kind, layer, head = parse_spec(text)
        if layer is not None and head is not None:
            out.add((kind, layer - 1, head - 1))
    return frozenset(out)
