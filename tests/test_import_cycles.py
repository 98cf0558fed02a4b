"""No import cycles among bpeinspect's modules, counting imports inside functions and imports
under ``if TYPE_CHECKING:`` (they never run, but a cycle through them is still two modules
that each need the other to be understood).

The graph is built twice: by grimp (import-linter's) and from every ``import`` statement read
here with ``ast`` (with ``importlib.import_module("literal")`` calls too), so neither one's
blind spot hides a cycle.
The layers themselves are import-linter contracts in pyproject.toml (``lint-imports`` in .ci/run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

# Cycles known and on their way out (none: train20's process pool replaced the counts/count_worker
# pair). Entries here may only be removed.
KNOWN: list[list[str]] = []


def _cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    mods = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    return _components({m: set(graph.find_modules_directly_imported_by(m)) for m in mods})


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of ``graph`` (module -> the modules it imports): its strongly connected
    components of more than one module."""
    mods = sorted(graph)
    edges = {m: sorted(i for i in graph[m] if i in graph) for m in mods}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in mods:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("bpeinspect", exclude_type_checking_imports=False, cache_dir=None)
    assert [c for c in _cycles(graph, "bpeinspect") if c not in KNOWN] == []


def test_the_cycle_finder_finds_function_level_and_type_checking_imports(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyc import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyc import a\n    return a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc import d\n")
    (pkg / "d.py").write_text("from cyc import c\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyc", exclude_type_checking_imports=False, cache_dir=None)
    assert _cycles(graph, "cyc") == [["cyc.a", "cyc.b"], ["cyc.c", "cyc.d"]]


def ast_import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, read with ``ast`` from every ``import`` and
    ``from … import`` statement (in functions and under ``if TYPE_CHECKING:`` too, relative
    ones resolved) and every ``importlib.import_module`` call with a literal name.
    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else ``pkg``."""
    files = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
                targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names)
            elif (isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module")
                  and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                targets.add(node.args[0].value)
        graph[mod] = {t for t in targets if t in files and t != mod}
    return graph


def test_no_import_cycles_read_with_ast() -> None:
    graph = ast_import_graph(Path(__file__).resolve().parents[1] / "bpeinspect")
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # it reads the real tree
    assert "bpeinspect.core.io.formats" in graph["bpeinspect.core.io.load"]  # an import inside a function
    assert [c for c in _components(graph) if c not in KNOWN] == []


def test_the_ast_reader_finds_every_kind_of_import(tmp_path) -> None:
    pkg = tmp_path / "cyc"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyc import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyc import a\n    return a\n")  # a function-level import
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc import d\n")
    (pkg / "d.py").write_text("import importlib\ndef f():\n    return importlib.import_module('cyc.sub.e')\n")
    (pkg / "sub" / "e.py").write_text("from .. import d\n")  # relative
    graph = ast_import_graph(pkg)
    assert graph["cyc.c"] == {"cyc.d"}  # a TYPE_CHECKING import counts
    assert _components(graph) == [["cyc.a", "cyc.b"], ["cyc.d", "cyc.sub.e"]]
