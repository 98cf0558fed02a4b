"""The core's lazy package faces: every name they list loads from the module their
``TYPE_CHECKING`` block names, and only when it is asked for."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bpeinspect.core.faces import lazy_names

LAZY = ("bpeinspect.core.analysis", "bpeinspect.core.io")


def checked_imports(package: str) -> dict[str, tuple[str, str]]:
    """Name -> (module, name there) for the imports under ``if TYPE_CHECKING:`` in ``package``."""
    source = Path(importlib.import_module(package).__file__).read_text(encoding="utf-8")
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                for alias in stmt.names:
                    found[alias.asname or alias.name] = (stmt.module, alias.name)
    return found


@pytest.mark.parametrize("package", [*LAZY, "bpeinspect.core.train"])
def test_every_listed_name_is_the_object_its_module_defines(package):
    face = importlib.import_module(package)
    checked = checked_imports(package)
    assert checked and set(checked) <= set(face.__all__)
    if package in LAZY:
        assert set(checked) == set(face.__all__)
    for name, (module, original) in checked.items():
        if module.endswith(".distributed") and importlib.util.find_spec("dask") is None:
            continue
        assert getattr(face, name) is getattr(importlib.import_module(module), original), name


def test_a_lazy_face_loads_a_module_when_one_of_its_names_is_asked_for():
    code = (
        "import json, sys, bpeinspect.core.analysis as a\n"
        "before = {m for m in sys.modules if m.startswith('bpeinspect.core.analysis.')}\n"
        "a.coastline_xy\n"
        "after = {m for m in sys.modules if m.startswith('bpeinspect.core.analysis.')}\n"
        "print(json.dumps([sorted(before), sorted(after - before)]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    before, loaded = json.loads(out)
    assert "bpeinspect.core.analysis.worldmap" in loaded
    assert not {m.rpartition(".")[2] for m in before} & {"worldmap", "fairness", "stats", "compare", "vocab_diff"}


def test_an_unknown_name_is_an_attribute_error():
    from bpeinspect.core import analysis

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        analysis.nothing  # noqa: B018
    with pytest.raises(ImportError):
        exec("from bpeinspect.core.io import nothing", {})


def test_an_alias_names_the_original():
    getter = lazy_names("json", {"decoder": "Decoder=JSONDecoder"})
    assert getter("Decoder").__name__ == "JSONDecoder"
