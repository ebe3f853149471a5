"""Every panel of the window, in one list: adding a panel is one new module in this folder and one line here.

A panel is a QWidget with render(trace, state). It may also have view_key(state) (it is not drawn again while that
is unchanged), set_vocab(pieces) (the target vocabulary's readable pieces, when a model or frame opens),
set_model(lm) (the open model, a model.LoadedModel) and set_prefix_handler(fn) (fn(node id) shows the decoder's
attention for a hypothesis of the beam tree: visualizer/beam_prefix.py)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class PanelEntry:
    name: str                   # its key in window.panels and window.docks; its dock is named "dock-NAME"
    title: str                  # the dock's title, and its entry in the View menu
    place: str                  # "central" (under the caption), "left", "right-top" (above the tab group), "right" (a tab)
    path: str                   # "module:Class" in this package
    takes_state: bool = False   # built with the ViewState (the panel changes the view itself)
    optional: bool = False      # one that fails to build is left out with a note on stderr
    scrolls: bool = True        # in a scroll area, so that the window can shrink below the panel's own minimum
    lazy: bool = False          # built when its tab is first shown (or code first asks for it): a faster start
    roomy: bool = False         # a grid or table that wants most of its column: View ▸ Go to panel gives it that


PANELS = (
    PanelEntry("attention", "Attention", "central", "attention:AttentionPanel", takes_state=True),
    PanelEntry("architecture", "Architecture map", "left", "architecture:ArchitectureMap", takes_state=True,
               scrolls=False),     # it scales its drawing to any size
    PanelEntry("output", "Output distribution", "right-top", "output:OutputPanel", optional=True),
    PanelEntry("layernorm", "LayerNorm", "right", "layernorm:LayerNormPanel", optional=True),
    # (roomy: at 1024 × 768 Math showed 3 to 6 lines, Embeddings the top of its first plot, QA as a teacher)
    PanelEntry("embeddings", "Embeddings", "right", "embeddings:EmbeddingsPanel", optional=True, lazy=True,
               roomy=True),
    PanelEntry("inspector", "Math", "right", "inspector:InspectorPanel", lazy=True, roomy=True),
    PanelEntry("training", "Training step", "right", "training_step:TrainingStepPanel", lazy=True),
    PanelEntry("model_view", "Model view", "right", "model_view:ModelViewPanel", takes_state=True, scrolls=False,
               lazy=True, roomy=True),
    # (in a scroll area: its button's one-line text made the column 419 pixels wide at the least, and the window
    # wider than a 1024-pixel projector, QA; the beam tree lays its buttons out narrower, in no scroll area: there
    # its view's size and the scroll bars chased each other, and the window hung)
    PanelEntry("metrics", "Head metrics", "right", "metrics:MetricsPanel", takes_state=True, lazy=True, roomy=True),
    PanelEntry("flow", "Rollout and lines", "right", "flow:FlowPanel", takes_state=True, lazy=True, roomy=True),
    PanelEntry("compare", "Compare runs", "right", "compare:ComparePanel", takes_state=True, lazy=True, roomy=True),
    PanelEntry("beam_tree", "Beam tree", "right", "beam_tree:BeamTreePanel", takes_state=True, scrolls=False,
               lazy=True, roomy=True),
)


def build(entry: PanelEntry, state):
    """A new panel of this entry (its module imported now)."""
    module, cls = entry.path.split(":")
    panel_class = getattr(importlib.import_module(f"{__package__}.{module}"), cls)
    return panel_class(state) if entry.takes_state else panel_class()
