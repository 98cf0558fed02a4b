"""The two faces (the GUI and the CLI) use the core through few modules: its public package
faces (``bpeinspect.core``, ``bpeinspect.core.train``, ...), not the modules behind them.

Run ``python -m tests.test_faces`` to list the core modules the faces import, and where.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACES = ("bpeinspect/gui", "bpeinspect/cli")
MOST = 15


def _is_module(name: str) -> bool:
    path = ROOT / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def core_imports(source: str) -> set[str]:
    """The core modules ``source`` imports (a name imported from a package that is a module of
    its own counts as that module).

    >>> sorted(core_imports("from bpeinspect.core import Tokenizer\\nimport bpeinspect.core.text"))
    ['bpeinspect.core', 'bpeinspect.core.text']
    >>> sorted(core_imports("from bpeinspect.core.analysis import corpus"))
    ['bpeinspect.core.analysis.corpus']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[:2] == ["bpeinspect", "core"])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[:2] != ["bpeinspect", "core"]:
                continue
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if _is_module(sub) else node.module)
    return found


def faces_core_modules() -> dict[str, set[str]]:
    """Core module -> the files of the faces that import it."""
    used: dict[str, set[str]] = defaultdict(set)
    for face in FACES:
        for path in sorted((ROOT / face).rglob("*.py")):
            for name in core_imports(path.read_text(encoding="utf-8")):
                used[name].add(path.relative_to(ROOT).as_posix())
    return dict(used)


def test_the_faces_import_few_core_modules() -> None:
    used = faces_core_modules()
    assert "bpeinspect.core" in used and "bpeinspect.core.train" in used
    behind = ("bpeinspect.core.train.", "bpeinspect.core.dataset.", "bpeinspect.core.analysis.", "bpeinspect.core.chat.")
    found = sorted(n for n in used if n.startswith(behind))
    assert found == [], "the faces of training, datasets, analysis and chat are their packages"
    assert len(used) <= MOST, sorted(used)


if __name__ == "__main__":
    for name, files in sorted(faces_core_modules().items()):
        print(f"{name:45} {len(files):3} {', '.join(sorted(files)[:3])}")
