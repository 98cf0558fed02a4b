"""The tree keeps the shape docs/ARCHITECTURE.md describes: no module reads a tokenizer's private
attributes, one writer renames files, and private names stay in their modules."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bpeinspect"
# SentencePieceBPE subclasses Tokenizer and builds its state itself; its package shares it
OWNERS = ("core/tokenizer.py",)


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def tokenizer_private_names(source: str) -> set[str]:
    """The private methods and attributes of ``class Tokenizer`` in ``source``.

    >>> sorted(tokenizer_private_names("class Tokenizer:\\n def _a(self):\\n  self._b = self.c = 1"))
    ['_a', '_b']
    """
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Tokenizer")
    names = {f.name for f in cls.body if isinstance(f, ast.FunctionDef)}
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_reads(source: str, names: set[str]) -> list[str]:
    """Expressions in ``source`` that read one of ``names`` from anything but ``self``/``cls``.

    >>> private_reads("x = tok._cache[1]\\ny = self._cache", {"_cache"})
    ['tok._cache']
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in names:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(ast.unparse(node))
    return found


def test_no_module_reads_a_tokenizers_private_attributes() -> None:
    names = tokenizer_private_names((PACKAGE / "core" / "tokenizer.py").read_text(encoding="utf-8"))
    assert {"_cache", "_id_bytes", "_segments"} <= names
    reads = {}
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(OWNERS):
            continue
        found = private_reads(path.read_text(encoding="utf-8"), names)
        if found:
            reads[rel] = found
    assert reads == {}


# what writing a file in place of another takes; only core/io/atomic.py may call these
RENAMING = {"os.replace", "os.rename", "os.renames", "shutil.move", "mkstemp", "mkdtemp", "NamedTemporaryFile",
            "tempfile.mkstemp", "tempfile.mkdtemp", "tempfile.NamedTemporaryFile"}  # fmt: skip


def renaming_calls(source: str) -> list[str]:
    """Calls in ``source`` (its code, not its doctests) of what only the atomic writer may use.

    >>> renaming_calls('import os\\n"os.replace(a, b)"\\nos.replace(tmp, target)')
    ['os.replace']
    """
    return [f for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and (f := ast.unparse(n.func)) in RENAMING]


def test_every_file_is_written_by_the_one_atomic_writer() -> None:
    found = {}
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        calls = renaming_calls(path.read_text(encoding="utf-8"))
        if calls and rel != "core/io/atomic.py":
            found[rel] = calls
    assert found == {}
    assert renaming_calls((PACKAGE / "core" / "io" / "atomic.py").read_text(encoding="utf-8"))


def private_imports(source: str) -> list[str]:
    """``from bpeinspect… import _name`` in ``source``: a module's private names stay its own.

    >>> private_imports("from bpeinspect.core.live import _join, plan_encode\\nfrom os import _exit")
    ['bpeinspect.core.live._join']
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "bpeinspect":
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    found = {}
    for path in _modules():
        names = private_imports(path.read_text(encoding="utf-8"))
        if names:
            found[path.relative_to(PACKAGE).as_posix()] = names
    assert found == {}


def test_code_is_formatted_not_packed() -> None:
    """``# fmt: skip`` is for the odd table that reads better by hand, never for fitting code
    into fewer lines (``.ci/run`` checks the rest is as ``ruff format`` writes it)."""
    skips = {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8").count("# fmt: skip") for p in _modules()}
    assert sum(skips.values()) <= 10, {p: n for p, n in skips.items() if n}


def test_type_ignores_are_few_and_each_says_what_and_why() -> None:
    """A ``# type: ignore`` names its error code and gives a reason after it, and there are few:
    a type error is fixed at its cause (an annotation, a narrowing, a protocol), not silenced."""
    ignores = {}
    for path in _modules():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "type: ignore" in line:
                ignores[f"{path.relative_to(PACKAGE).as_posix()}:{n}"] = line.split("type: ignore", 1)[1]
    assert len(ignores) <= 10, sorted(ignores)
    unexplained = {
        where: rest for where, rest in ignores.items() if not re.fullmatch(r"\[[a-z-]+(, [a-z-]+)*\]  # \S.*", rest)
    }
    assert unexplained == {}


def test_the_type_checker_skips_no_module_of_the_package() -> None:
    """mypy (run by ``.ci/run``) checks every module: no override turns its errors off for one."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["bpeinspect"]
    skipped = []
    for override in config.get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        if override.get("ignore_errors") or override.get("follow_imports") == "skip":
            skipped += [m for m in modules if m == "bpeinspect" or m.startswith("bpeinspect.")]
    assert skipped == []


TESTS = PACKAGE.parent / "tests"


def mirrored_test(module: Path) -> Path:
    """Where the tests of ``module`` (a path under ``bpeinspect/``) live: the same path under ``tests/``.

    >>> mirrored_test(PACKAGE / "core" / "io" / "formats" / "gguf.py").relative_to(TESTS).as_posix()
    'core/io/formats/test_gguf.py'
    """
    rel = module.relative_to(PACKAGE)
    return TESTS / rel.parent / f"test_{rel.name}"


def test_most_modules_have_their_tests_at_the_mirrored_path() -> None:
    """Three modules in four have ``tests/<same path>/test_<module>.py``: a newcomer finds the
    tests of a module where the module is."""
    modules = [p for p in _modules() if p.name not in ("__init__.py", "__main__.py")]
    missing = sorted(p.relative_to(PACKAGE).as_posix() for p in modules if not mirrored_test(p).is_file())
    mirrored = 1 - len(missing) / len(modules)
    assert mirrored >= 0.75, f"{mirrored:.0%} of modules have mirrored tests; none for {missing}"
