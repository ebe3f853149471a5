"""No import circles in visualizer/: every `import` (at the top or inside a function) read with ast."""
from __future__ import annotations

import ast
from pathlib import Path

import visualizer

ROOT = Path(visualizer.__file__).parent


def module_files(package: Path) -> dict[str, Path]:
    """{dotted module name: file} of a package folder and its subpackages."""
    out = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the same package that the module `name` imports, anywhere in its text."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets = [stem] + [f"{stem}.{alias.name}" for alias in node.names]   # `from . import x`: module x
        for target in targets:
            while target and target not in modules:      # `a.b.c` where c is a name in module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_cycles(package: Path) -> list[list[str]]:
    """Every import circle found by a depth-first walk (each as [a, b, …, a])."""
    modules = module_files(package)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    cycles, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def test_visualizer_has_no_import_circle():
    cycles = import_cycles(ROOT)
    assert not cycles, "import circles: " + "; ".join(" → ".join(c) for c in cycles)


def test_the_check_finds_a_circle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub.b import thing\n")
    (pkg / "sub" / "b.py").write_text("def thing():\n    from ..c import other\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from . import c\n")
    assert import_cycles(pkg) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
    (pkg / "c.py").write_text("from .d import nothing\n")       # d → c → d
    assert import_cycles(pkg) == [["pkg.c", "pkg.d", "pkg.c"]]


def test_model_has_no_import_circle():
    """model/ too (checkpoint.py and seed_example.py imported each other before the families took load())."""
    import model
    cycles = import_cycles(Path(model.__file__).parent)
    assert not cycles, "import circles: " + "; ".join(" → ".join(c) for c in cycles)
