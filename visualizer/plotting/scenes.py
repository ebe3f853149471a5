"""settle_scenes: apply the plots' pending view ranges and layouts right after a render, not during the paint."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtWidgets


def settle_scenes(widget: QtWidgets.QWidget) -> None:
    """Apply the plots' new view ranges now, not when Qt paints them.

    pyqtgraph defers a range change to the start of the next paint; the transform it then changes marks the
    plot dirty again, so every range change cost two full paints. Likewise a plot whose axis grew is laid out
    again after its first paint. Settling both right after a render costs one paint.
    """
    for view in widget.findChildren(pg.GraphicsView):
        scene = view.scene()
        if scene is not None and view.isVisible():
            for item in scene.items():          # pending re-layouts (an axis grew) now, not after a first paint
                layout = QtWidgets.QGraphicsWidget.layout(item) if isinstance(item, QtWidgets.QGraphicsWidget) else None
                if layout is not None:        # (pyqtgraph items hide layout() behind a .layout attribute)
                    layout.activate()
            scene.prepareForPaint()
