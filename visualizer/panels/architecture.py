"""The architecture map: the encoder-decoder stack drawn as boxes; the current stage is highlighted, a click moves there."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..captions import caption
from ..state import Stage, pipeline

SHORT = {("src_embed", ""): "Embedding + positional encoding", ("enc", "self"): "Self-attention → Add & Norm",
         ("enc", "ffn"): "Feed-forward → Add & Norm", ("tgt_embed", ""): "Embedding + positional encoding",
         ("dec", "self"): "Masked self-attention → Add & Norm", ("dec", "cross"): "Cross-attention → Add & Norm",
         ("dec", "ffn"): "Feed-forward → Add & Norm", ("output", ""): "Linear → softmax"}
COLOURS = {"src_embed": "#e8eef7", "tgt_embed": "#e8eef7", "output": "#e9f5e9",
           ("enc", "self"): "#fdebd0", ("dec", "self"): "#fdebd0", ("dec", "cross"): "#f9d9d9",
           ("enc", "ffn"): "#dfeaf7", ("dec", "ffn"): "#dfeaf7"}


class ArchitectureMap(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.setMinimumSize(260, 320)
        self.setMouseTracking(True)
        self.boxes: dict[Stage, QtCore.QRectF] = {}
        self.frames: list[tuple[str, QtCore.QRectF]] = []
        self.highlighted: Stage | None = None
        self.n_enc = self.n_dec = 1

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(340, 560)

    def view_key(self, state):
        return state.stage

    def render(self, trace, state) -> None:
        self.n_enc, self.n_dec = trace.n_layers("enc"), trace.n_layers("dec")
        self.highlighted = state.stage
        self._layout()
        self.update()

    def _layout(self) -> None:
        self.boxes.clear()
        self.frames.clear()
        w, h = self.width(), self.height()
        m = 8
        head = 26
        col_w = (w - 3 * m) / 2
        # one box height for both columns, set by the longer one, so that boxes of a kind look alike
        rows = max(1 + self.n_enc * 2, 2 + self.n_dec * 3)
        box_h = max(14.0, (h - head - m - 22 * max(self.n_enc, self.n_dec) - 30) / rows)
        for col, stack in enumerate(("enc", "dec")):
            x = m + col * (col_w + m)
            n = self.n_enc if stack == "enc" else self.n_dec
            y = head
            embed = Stage("src_embed" if stack == "enc" else "tgt_embed")
            self.boxes[embed] = QtCore.QRectF(x, y, col_w, box_h)
            y += box_h + 8
            for l in range(n):
                top = y
                y += 14
                for sub in (("self", "ffn") if stack == "enc" else ("self", "cross", "ffn")):
                    self.boxes[Stage(stack, l, sub)] = QtCore.QRectF(x + 4, y, col_w - 8, box_h)
                    y += box_h + 3
                self.frames.append((f"{'Encoder' if stack == 'enc' else 'Decoder'} layer {l + 1}",
                                    QtCore.QRectF(x, top, col_w, y - top + 2)))
                y += 6
            if stack == "dec":
                self.boxes[Stage("output")] = QtCore.QRectF(x, y + 2, col_w, box_h)

    def resizeEvent(self, event) -> None:
        self._layout()
        super().resizeEvent(event)

    def paintEvent(self, event) -> None:
        if not self.boxes:
            self._layout()
        p = QtGui.QPainter(self)
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QtGui.QPalette.ColorRole.Base))
        text = pal.color(QtGui.QPalette.ColorRole.Text)
        font = p.font()
        font.setBold(True)
        p.setFont(font)
        p.setPen(text)
        w = self.width()
        p.drawText(QtCore.QRectF(8, 4, (w - 24) / 2, 20), QtCore.Qt.AlignmentFlag.AlignCenter, f"Encoder ×{self.n_enc}")
        p.drawText(QtCore.QRectF(16 + (w - 24) / 2, 4, (w - 24) / 2, 20), QtCore.Qt.AlignmentFlag.AlignCenter,
                   f"Decoder ×{self.n_dec}")
        font.setBold(False)
        small = QtGui.QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        for label, r in self.frames:
            p.setPen(QtGui.QPen(QtGui.QColor("#999999"), 1, QtCore.Qt.PenStyle.DashLine))
            p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(r, 6, 6)
            p.setFont(small)
            p.setPen(text)
            p.drawText(r.adjusted(6, 0, 0, 0), QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop, label)
        p.setFont(font)
        for stage, r in self.boxes.items():
            colour = COLOURS.get((stage.stack, stage.sublayer), COLOURS.get(stage.stack, "#eeeeee"))
            current = stage == self.highlighted
            p.setBrush(QtGui.QColor("#ffd400") if current else QtGui.QColor(colour))
            p.setPen(QtGui.QPen(QtGui.QColor("#d12b2b") if current else QtGui.QColor("#666666"), 3 if current else 1))
            p.drawRoundedRect(r, 5, 5)
            p.setPen(QtGui.QColor("#111111"))
            p.drawText(r.adjusted(4, 0, -4, 0), QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap,
                       SHORT[(stage.stack, stage.sublayer)])
        p.end()

    def stage_at(self, pos: QtCore.QPointF) -> Stage | None:
        for stage, r in self.boxes.items():
            if r.contains(pos):
                return stage
        return None

    def mouseMoveEvent(self, event) -> None:
        stage = self.stage_at(event.position())
        if stage is not None:
            title, text, equation = caption(stage)
            self.setToolTip(f"<b>{title}</b><br>{text}<br><i>{equation}</i>")
        else:
            self.setToolTip("")

    def mousePressEvent(self, event) -> None:
        stage = self.stage_at(event.position())
        if stage is not None:
            self.state.go_to(stage)
