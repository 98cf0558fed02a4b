"""Every module under bpeinspect/gui is a Qt module: it imports PySide6 or pyqtgraph itself.
Logic that needs no Qt belongs to the core, where the CLI can use it too. A package's
``__init__.py`` that only names its package (docstring, imports, ``__all__``, one-call
functions) is no module of its own."""

from __future__ import annotations

import ast
from pathlib import Path

GUI = Path(__file__).resolve().parents[2] / "bpeinspect" / "gui"
QT = ("PySide6", "pyqtgraph")


def imports_qt(source: str) -> bool:
    """Whether ``source`` imports PySide6 or pyqtgraph (anywhere: at the top, in a function).

    >>> imports_qt("from PySide6.QtCore import Qt"), imports_qt("import pyqtgraph as pg")
    (True, True)
    >>> imports_qt("import numpy\\nfrom bpeinspect.gui.overlay import palette")
    False
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in QT for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in QT:
            return True
    return False


def only_names_its_package(source: str) -> bool:
    """Whether an ``__init__.py`` holds nothing but a docstring, imports, ``__all__`` and
    functions of one call.

    >>> only_names_its_package("'Doc.'\\nfrom a import b\\n__all__ = ['b']\\ndef w():\\n    b()")
    True
    >>> only_names_its_package("def count(xs):\\n    n = len(xs)\\n    return n")
    False
    """

    def one_call(f: ast.FunctionDef) -> bool:
        body = f.body[1:] if f.body and isinstance(f.body[0], ast.Expr) and isinstance(f.body[0].value, ast.Constant) else f.body
        return len(body) == 1 and isinstance(body[0], (ast.Expr, ast.Return)) and isinstance(body[0].value, ast.Call)

    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        if isinstance(node, ast.FunctionDef) and one_call(node):
            continue
        return False
    return True


def test_every_gui_module_imports_qt() -> None:
    without = []
    for path in sorted(GUI.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if path.name == "__init__.py" and only_names_its_package(source):
            continue
        if not imports_qt(source):
            without.append(path.relative_to(GUI).as_posix())
    assert without == []
