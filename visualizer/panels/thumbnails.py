"""The attention panel's small heads, coloured once per trace: a layer (or kind) seen before shows its images again,
and after a new trace the other layers of the kind in view are coloured in a background thread (numpy releases the
interpreter lock for most of it), so that stepping through the layers of a long input does not colour 12 heads of
512 × 512 weights at every step (about 10 ms of a layer change for a GPT-2-sized model)."""
from __future__ import annotations

import threading

import numpy as np

from ..plotting.colormaps import colour_levels
from ..plotting.heatmap import coloured
from .background import TraceBackground

# the small heads' images have at most this many pixels a side: a longer input is drawn max-pooled (see
# Heatmap.show_matrix). Fixed, not the heads' size on screen: that changes while the window is laid out, and each
# size would colour every head again. Small heads are under 256 pixels a side on screens up to 4K.
THUMBNAIL_PIXELS = 256
MOST = 96            # images sets kept (a set: the heads of one kind and layer); a GPT-2-sized model has 12 layers


def head_levels(weights: np.ndarray, scale: str) -> list[tuple[float, float]]:
    """Each head's colour scale under a COLOUR_SCALES rule (colour_levels): 0 to the largest weight of the layer's
    heads ("layer"), of its own ("head"), or 0 to 1 ("one")."""
    return [colour_levels(weights, w, scale) for w in weights]


class Thumbnails:
    """Images of a trace's heads by (kind, layer, colour scale rule, colour map name); lut: that map's table."""

    def __init__(self):
        self._images: dict[tuple, list[np.ndarray]] = {}
        self._lock = threading.Lock()
        self.background = TraceBackground("thumbnails")

    def images(self, trace, kind: str, layer: int, scale: str, cmap: str, lut) -> list[np.ndarray]:
        """The heads' images of one layer (coloured now unless done before); starts the background colouring of
        the kind's other layers when the trace is new."""
        if self.background.follow(trace):
            with self._lock:
                self._images = {}
        key = (kind, layer, scale, cmap)
        with self._lock:
            got = self._images.get(key)
        if got is None:
            got = self._store(trace, key, make(trace, kind, layer, scale, lut))
            self.background.submit(lambda t: range(t.n_layers(t.schema.kind(kind).stack)),
                                   lambda t, other: self._fill(t, (kind, other, scale, cmap), lut))
        return got

    def _fill(self, trace, key: tuple, lut) -> None:
        with self._lock:
            done = key in self._images
        if not done:
            self._store(trace, key, make(trace, *key[:3], lut))

    def _store(self, trace, key: tuple, images: list[np.ndarray]) -> list[np.ndarray]:
        with self._lock:
            if not self.background.current(trace):     # coloured for a trace no longer shown: kept by nobody
                return images
            if len(self._images) >= MOST:
                self._images.pop(next(iter(self._images)))
            return self._images.setdefault(key, images)


def make(trace, kind: str, layer: int, scale: str, lut) -> list[np.ndarray]:
    """The images of the heads of one layer, as Heatmap.show_matrix(..., max_pixels=THUMBNAIL_PIXELS) colours them."""
    weights = trace.attention(kind, layer)
    mask = trace.mask(kind, layer)
    levels = head_levels(weights, scale)
    return [coloured(w, mask, lv, lut, THUMBNAIL_PIXELS) for w, lv in zip(weights, levels)]
