"""Colour maps and colours of every plot: perceptually uniform, colour-blind safe, readable in greyscale."""
from __future__ import annotations

import numpy as np

COLORMAP = "viridis"                                            # attention weights (0 … largest)
COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")   # the attention panel's choice
SIGNED_COLORMAP = "CET-CBD1"    # colorcet's colour-blind-safe diverging map (blue-white-yellow): 0 reads as white
GRADIENT_COLORMAP = "CET-D1"    # diverging: blue negative, red positive
MASK_GREY = "#9a9a9a"           # the hatch under masked cells

# Okabe-Ito: distinguishable with every common colour-vision deficiency
BLUE, ORANGE, GREEN, PINK, VERMILLION, SKY = "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9"
PALETTE = (BLUE, ORANGE, GREEN, PINK)
HIGHLIGHT = "#ff3b30"           # the focused head's frame, the generation step's row


def symmetric_levels(*arrays: np.ndarray) -> tuple[float, float]:
    """(-m, m) with m the largest magnitude in the arrays (1 when they are empty or all zero)."""
    m = max((float(np.nanmax(np.abs(a))) if np.size(a) else 0.0) for a in arrays)
    m = m if np.isfinite(m) and m > 0 else 1.0
    return -m, m
