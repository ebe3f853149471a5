"""An exported figure's default size (no Qt here: the export command and CSV exports read it without Qt)."""
FIGURE_SIZE = (900, 760)        # a figure's width and height in pixels at 96 dpi (9.4 × 7.9 inches)
MIN_SIZE = (300, 240)           # the smallest a figure may be asked for: a title, the matrix, its labels and colour bar
