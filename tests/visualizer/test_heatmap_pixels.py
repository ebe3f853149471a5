"""The heatmap's pixels are coloured in numpy (plotting/colormaps.packed_colours): they must be the colour map's
colours of the values on screen, masked cells transparent, and a long matrix' thumbnail its block maxima."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from visualizer.plotting.heatmap import Heatmap, max_pooled


def lut_of(name: str) -> np.ndarray:
    return pg.colormap.get(name).getLookupTable(nPts=256, alpha=True)


def expected_pixels(values, mask, lo, hi, lut):
    index = np.clip(np.floor((values - lo) * 255 / (hi - lo) + 0.5), 0, 255).astype(int)
    return np.where(mask[..., None], lut[index], 0)


@pytest.fixture
def heatmap(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 400)
    hm = Heatmap(widget.addPlot())
    hm.widget = widget                  # keep the view alive as long as the heatmap
    return hm


def test_pixels_are_the_colour_map_of_the_values_and_masked_cells_are_transparent(heatmap):
    rng = np.random.default_rng(3)
    m = rng.random((9, 7)).astype(np.float32)
    mask = rng.random((9, 7)) > 0.3
    heatmap.show_matrix(m, mask, levels=(0.1, 0.8))        # values outside the levels take the end colours
    np.testing.assert_array_equal(heatmap.image.image, expected_pixels(m, mask, 0.1, 0.8, lut_of("viridis")))
    np.testing.assert_array_equal(heatmap.shown, np.where(mask, m, np.nan))
    heatmap.set_colormap("magma")                           # recoloured in place
    np.testing.assert_array_equal(heatmap.image.image, expected_pixels(m, mask, 0.1, 0.8, lut_of("magma")))


def test_a_long_matrix_is_drawn_max_pooled_past_max_pixels_and_spans_its_cells(heatmap):
    m = np.zeros((100, 100), np.float32)
    m[61, 37] = 1.0                                         # one peak: a strided thumbnail would drop it
    mask = np.tril(np.ones((100, 100), bool))
    heatmap.show_matrix(m, mask, max_pixels=40)
    pixels = heatmap.image.image
    assert pixels.shape[:2] == (34, 34)                     # blocks of 3 × 3
    lut = lut_of("viridis")
    np.testing.assert_array_equal(pixels[61 // 3, 37 // 3], lut[-1])
    assert pixels[0, 33, 3] == 0 and pixels[33, 0, 3] == 255   # above the diagonal: masked; below: shown
    # the image still covers the 100 × 100 cells, and the hover reads the full matrix
    rect = heatmap.image.mapRectToParent(heatmap.image.boundingRect())
    assert (rect.left(), rect.top(), rect.width(), rect.height()) == (-0.5, -0.5, 100, 100)
    assert heatmap.shown.shape == (100, 100) and heatmap.shown[61, 37] == 1.0


@settings(max_examples=60, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 40), st.integers(1, 40)), elements=st.floats(0, 1, width=32)),
       st.integers(1, 12), st.data())
def test_max_pooling_keeps_every_blocks_largest_allowed_value(values, most, data):
    mask = data.draw(arrays(bool, values.shape))
    pooled, allowed = max_pooled(values, mask, most)
    if max(values.shape) <= most:
        assert pooled is values and allowed is mask
        return
    R, C = values.shape
    fr, fc = -(-R // most), -(-C // most)
    assert pooled.shape == (-(-R // fr), -(-C // fc)) and max(pooled.shape) <= most
    for i in range(pooled.shape[0]):
        for j in range(pooled.shape[1]):
            block, ok = values[i * fr:(i + 1) * fr, j * fc:(j + 1) * fc], mask[i * fr:(i + 1) * fr, j * fc:(j + 1) * fc]
            is_allowed = True if allowed is None else bool(allowed[i, j])
            assert is_allowed == bool(ok.any())
            if ok.any():
                assert pooled[i, j] == block[ok].max()
