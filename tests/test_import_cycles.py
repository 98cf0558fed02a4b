"""No import cycles among bpeinspect's modules, counting imports inside functions.

Imports under ``if TYPE_CHECKING:`` never run and are left out. The layers themselves are
import-linter contracts in pyproject.toml (run by ``lint-imports`` in .ci/run).
"""

from __future__ import annotations

import grimp

# Cycles known and on their way out (none: train20's process pool replaced the counts/count_worker
# pair). Entries here may only be removed.
KNOWN: list[list[str]] = []


def _cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    mods = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in mods) for m in mods}
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
    graph = grimp.build_graph("bpeinspect", exclude_type_checking_imports=True, cache_dir=None)
    assert [c for c in _cycles(graph, "bpeinspect") if c not in KNOWN] == []


def test_the_cycle_finder_finds_function_level_imports(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyc import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyc import a\n    return a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyc", exclude_type_checking_imports=True, cache_dir=None)
    assert _cycles(graph, "cyc") == [["cyc.a", "cyc.b"]]
