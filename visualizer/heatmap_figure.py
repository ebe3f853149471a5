"""The old home of the export figure; the plotting kit is visualizer/plotting now. Kept so that the lazy imports
`from .heatmap_figure import HeatmapFigure / encode_png` in window.py and cli.py keep working until they import
from visualizer.plotting."""
from .plotting.figure import HeatmapFigure  # noqa: F401  (re-exported)
from .plotting.render import encode_png  # noqa: F401
