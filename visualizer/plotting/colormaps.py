"""Colour maps and colours of every plot: perceptually uniform, colour-blind safe, readable in greyscale."""
from __future__ import annotations

import numpy as np

COLORMAP = "viridis"                                            # attention weights (0 … largest)
COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")   # the attention panel's choice
SIGNED_COLORMAP = "CET-CBD1"    # colorcet's colour-blind-safe diverging map (blue-white-yellow): 0 reads as white
GRADIENT_COLORMAP = "CET-D1"    # diverging: blue negative, red positive
MASK_GREY = "#9a9a9a"           # the hatch under masked cells
NAN_COLOUR = (0, 255, 255, 255)  # a cell the model computed as NaN: cyan, in none of COLORMAPS (never a weight)

# Okabe-Ito: distinguishable with every common colour-vision deficiency
BLUE, ORANGE, GREEN, PINK, VERMILLION, SKY = "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9"
PALETTE = (BLUE, ORANGE, GREEN, PINK)
# lines of several series told apart by more than colour (red-green colour blindness made two of four the same grey,
# QA): each its PALETTE colour, pyqtgraph marker, the marker's glyph for a legend, and Qt pen style
SERIES = tuple(zip(PALETTE, ("o", "s", "t", "d"), ("●", "■", "▼", "◆"),
                   ("SolidLine", "DashLine", "DotLine", "DashDotLine")))
HIGHLIGHT = "#ff3b30"           # the focused head's frame, the generation step's row
MARKED = "#a35200"              # token labels marked on an axis (a rare word's pieces): the warning orange (5.6:1 on
#                                 white; #b35900 was 4.4:1 on the light theme's window, under WCAG AA's 4.5, QA)


COLOUR_SCALES = {"layer": "0 to the largest weight of the layer's heads (the window's default: heads compare)",
                 "head": "0 to each head's own largest weight",
                 "one": "0 to 1 (figures of different layers and sentences compare)"}


def colour_levels(weights: np.ndarray, matrix: np.ndarray, scale: str) -> tuple[float, float]:
    """The colour scale of one matrix (a head, or the mean of heads) of a layer's weights (H, Tq, Tk) under a
    COLOUR_SCALES rule: the attention panel's and every export's."""
    if scale not in COLOUR_SCALES:
        raise ValueError(f"colour scale {scale!r}: give one of {', '.join(COLOUR_SCALES)}")
    top = 1.0 if scale == "one" else _finite_max(weights if scale == "layer" else matrix)
    return 0.0, max(top, 1e-6)


def _finite_max(a: np.ndarray) -> float:
    """The largest finite value (1 where there is none): a head that computed NaN made its layer's scale NaN, and
    every other head of the layer was drawn in the colour of 0 (QA)."""
    finite = np.asarray(a)[np.isfinite(a)]
    return float(finite.max()) if finite.size else 1.0


def symmetric_levels(*arrays: np.ndarray) -> tuple[float, float]:
    """(-m, m) with m the largest magnitude in the arrays (1 when they are empty or all zero)."""
    m = max((float(np.nanmax(np.abs(a))) if np.size(a) else 0.0) for a in arrays)
    m = m if np.isfinite(m) and m > 0 else 1.0
    return -m, m


def lookup_table(name: str) -> np.ndarray:
    """The colour map's 256 colours as (256, 4) uint8 RGBA."""
    import pyqtgraph as pg
    return np.ascontiguousarray(pg.colormap.get(name).getLookupTable(nPts=256, alpha=True), dtype=np.uint8)


def packed_colours(values: np.ndarray, lo, hi, lut: np.ndarray, nan: bool = True) -> np.ndarray:
    """uint32 array of values' shape, each an RGBA pixel: lo … hi through lut (256, 4) uint8, values outside
    clipped; NaN transparent (0) when nan. lo and hi broadcast against values (one scale per head). Colouring
    here, in a few passes over the array, spares pyqtgraph scaling a float image and finding its NaN at every
    paint (for a 512 × 512 matrix about 10 ms)."""
    values = np.asarray(values, dtype=np.float32)
    span = np.maximum(np.asarray(hi, np.float32) - np.asarray(lo, np.float32), np.float32(1e-12))
    z = values - np.asarray(lo, np.float32)
    z *= np.float32(255.0) / span
    z += np.float32(0.5)
    np.clip(z, 0, 255, out=z)                 # NaN stays NaN: cleared below
    with np.errstate(invalid="ignore"):
        index = z.astype(np.uint8)
    packed = np.ascontiguousarray(lut, dtype=np.uint8).view(np.uint32).ravel()[index]
    if nan:
        packed[np.isnan(values)] = 0
    return packed


def rgba_image(packed: np.ndarray) -> np.ndarray:
    """A 2-D array of packed pixels (see packed_colours) as rows × columns × RGBA uint8, for pg.ImageItem."""
    return packed.view(np.uint8).reshape(*packed.shape, 4)
