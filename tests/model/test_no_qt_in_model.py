"""model/ must stay usable without Qt: no Qt or pyqtgraph import in its source or at run time."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "model"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "PySide2", "pyqtgraph", "visualizer")


def test_no_qt_imports_in_the_source():
    offenders = []
    for path in MODEL.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                    "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                names = [str(node.args[0].value)]                      # importlib.import_module("PySide6")
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert len(list(MODEL.rglob("*.py"))) >= 10                      # the scan found the package
    assert offenders == []


def test_importing_model_loads_no_qt():
    code = ("import sys, model, model.train, model.evaluate, model.equations, model.gradient_step, model.model_card; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in %r))" % (FORBIDDEN,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=MODEL.parent).stdout.strip()
    assert out == "[]"
