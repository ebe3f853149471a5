"""The plotting kit shared by the panels and by export: one heatmap, one token axis, colour maps, titles, fonts.

    colormaps.py   the colour maps and colours (colour-blind safe), colour levels
    text.py        font sizes, token labels made short and safe, smaller fonts to fit
    token_axis.py  TokenAxis: token labels that never overlap
    titles.py      plot titles that never widen their plot
    heatmap.py     Heatmap: one matrix in a plot (masked cells hatched, a highlighted row, a colour bar)
    plot_box.py    PlotBox (a plot widget with projector-sized fonts) and HeatmapBox (a PlotBox with a Heatmap)
    figure.py      HeatmapFigure: a titled heatmap with a colour bar, rendered offscreen for export
    render.py      a scene as PNG / SVG
    scenes.py      settle_scenes: apply pending ranges and layouts before a paint

Nothing here imports the panels, export or the window (tests/visualizer/test_import_graph.py checks that no
module of visualizer/ imports itself through others).
"""
