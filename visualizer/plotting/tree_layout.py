"""A tree laid out left to right, one column per depth, one row per line of labels: each node on the row of its
first child (so the first children from the root form one straight line: the chosen translation, read left to
right), later children below, every subtree packed up against the one before it wherever their columns allow
(the contours of Reingold and Tilford's tidy trees). Two nodes of one column are always at least one row apart,
and edges of one column never cross."""
from __future__ import annotations

from typing import Callable, Sequence


def layout_rows(root, children: Callable[[object], Sequence]) -> dict:
    """{node: row} (rows from 0, the root's row 0); children(node) in the order they are laid out, top to bottom.
    A node's column is its depth."""
    rows: dict = {}
    _place(root, children, 0, rows)
    return rows


def _place(node, children, depth: int, rows: dict) -> dict[int, list[float]]:
    """Lay the subtree of node out with node on row 0 of rows (relative); its contour {depth: [top, bottom]}."""
    contour = {depth: [0.0, 0.0]}
    placed = {node: 0.0}
    for i, child in enumerate(children(node)):
        sub_rows: dict = {}
        sub = _place(child, children, depth + 1, sub_rows)
        shift = 0.0 if i == 0 else max(contour[d][1] - top + 1 for d, (top, _) in sub.items() if d in contour)
        for n, r in sub_rows.items():
            placed[n] = r + shift
        for d, (top, bottom) in sub.items():
            if d in contour:
                contour[d][1] = bottom + shift
            else:
                contour[d] = [top + shift, bottom + shift]
    rows.update(placed)
    return contour
