"""The README and the pages under docs/ stay true: every relative link and image resolves, and
every ``bpeinspect-cli`` example runs and prints what the page shows.

Examples are the ``$ `` lines of ```` ```console ```` blocks; the lines after one, up to the next,
are its output (stdout and stderr as a terminal shows them; a line ``...`` stands for any number
of lines). A block opened as ```` ```json file=NAME ```` is a file the examples after it read,
written as shown. The examples of one page run in order in one empty folder that holds the
repository's ``resources/`` (the bundled samples), with a fresh configuration and cache; one
``bpeinspect-cli`` command runs in this process (as the command line's tests run it), anything
else in ``bash``.
An example that needs the network or a server is shown but not run: one that names a Hugging
Face spec (``hf:``) or a Dask scheduler (``tcp://``).
"""

from __future__ import annotations

import glob
import html
import io
import os
import re
import shlex
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLE_PAGES = [ROOT / "README.md", ROOT / "docs" / "cli.md"]
NEEDS_NETWORK = ("hf:", "tcp://")

_FENCE = re.compile(r"^```(.*)$")
_MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HTML_REF = re.compile(r"\b(?:src|srcset|href)=\"([^\"]+)\"")


def prose(text: str) -> str:
    """``text`` without its fenced code blocks and inline code (links there are not links)."""
    out, inside = [], False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.

    >>> slug("Why it is exact"), slug("Across languages: the Languages view (View ▸ Languages…, Ctrl+L)")
    ('why-it-is-exact', 'across-languages-the-languages-view-view--languages-ctrll')
    """
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+)$", prose(page.read_text(encoding="utf-8")), re.M)}


def relative_links(page: Path) -> list[str]:
    """Every link and image target of ``page`` that is not on the web."""
    text = prose(page.read_text(encoding="utf-8"))
    targets = [m.group(1) for m in _MD_LINK.finditer(text)]
    targets += [html.unescape(m.group(1)) for m in _HTML_REF.finditer(text)]
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_image_resolves(page: Path) -> None:
    links = relative_links(page)
    assert links or page.name != "README.md"
    broken = []
    for link in links:
        path, _, fragment = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(link)
        elif fragment and target.suffix == ".md" and fragment not in anchors(target):
            broken.append(link)
    assert not broken, f"{page.name}: broken links {broken}"


def test_a_missing_file_or_heading_counts_as_broken(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n[ok](#top) [gone](#nowhere) ![img](missing.png) `[code](x.md)`\n", encoding="utf-8")
    links = relative_links(page)
    assert links == ["#top", "#nowhere", "missing.png"]
    assert anchors(page) == {"top"}


# -- the examples ----------------------------------------------------------------------------------


@dataclass
class Example:
    command: str
    expected: list[str] = field(default_factory=list)


@dataclass
class File:
    name: str
    text: str


def examples(page: Path) -> list[Example | File]:
    """The page's examples and the files they read, in the page's order."""
    out: list[Example | File] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        info = m.group(1).split()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = lines[i + 1 : end]
        if info[:1] == ["console"]:
            for line in body:
                if line.startswith("$ "):
                    out.append(Example(line[2:]))
                elif out and isinstance(out[-1], Example):
                    out[-1].expected.append(line)
        elif len(info) > 1 and info[1].startswith("file="):
            out.append(File(info[1].removeprefix("file="), "\n".join(body) + "\n"))
        i = end + 1
    return out


def matches(expected: list[str], got: list[str]) -> bool:
    """Whether ``got`` is ``expected`` line for line, a ``...`` line standing for any lines.

    >>> matches(["a", "...", "d"], ["a", "b", "c", "d"]), matches(["a", "..."], ["a"]), matches(["a"], ["b"])
    (True, True, False)
    """
    if not expected:
        return not got
    if expected[0] == "...":
        return any(matches(expected[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and got[0].rstrip() == expected[0].rstrip() and matches(expected[1:], got[1:])


_ONE_COMMAND = re.compile(r'(?:echo "([^"$`\\!]*)" \| )?bpeinspect-cli ([^|;&<>$`()\\]*?)(?: \| head -(\d+))?')


def run_here(command: str, work: Path, env: dict[str, str]) -> tuple[str, int] | None:
    """Run ``command`` in this process, as the shell would run it in ``work`` with ``env``, when it
    is one ``bpeinspect-cli`` command (after ``echo "…" |``, before ``| head -N``); else None.

    Starting Python for each example costs more than most examples; the command line's own
    tests call it in process too. What it prints on stdout and stderr comes back as one text.
    """
    m = _ONE_COMMAND.fullmatch(command)
    if m is None or ("*" in m.group(2) and ("'" in m.group(2) or '"' in m.group(2))):
        return None  # a quoted pattern is not expanded: the shell knows which
    if m.group(2).split()[0] == "list":
        return None  # the Hub's library reads where its cache is once, when it is imported
    from bpeinspect.cli import commands

    args: list[str] = []
    for word in shlex.split(m.group(2)):
        found = sorted(glob.glob(word, root_dir=work)) if any(c in word for c in "*?[") else []
        args += found or [word]
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    stdin = io.TextIOWrapper(io.BytesIO(b"" if m.group(1) is None else (m.group(1) + "\n").encode()), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("default")  # each warning once per command, as in a new process
        for name, value in env.items():
            mp.setenv(name, value)
        mp.chdir(work)
        mp.setattr(sys, "stdin", stdin)
        mp.setattr(sys, "stdout", out)
        mp.setattr(sys, "stderr", out)
        try:
            status = commands.main(args)
        except SystemExit as exc:  # argparse's errors
            status = exc.code if isinstance(exc.code, int) else 1
    printed = raw.getvalue().decode("utf-8")
    if m.group(3) is not None:
        printed = "".join(printed.splitlines(keepends=True)[: int(m.group(3))])
    return printed, status


def run_examples(page: Path, folder: Path) -> list[tuple[Example, str, int]]:
    """Run the page's examples in ``folder``; each with what it printed and its exit status."""
    shims = folder / ".bin"
    shims.mkdir()
    shim = shims / "bpeinspect-cli"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bpeinspect.cli "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    work = folder / "work"
    work.mkdir()
    (work / "resources").symlink_to(ROOT / "resources")
    env = dict(
        os.environ,
        PATH=f"{shims}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        PYTHONIOENCODING="utf-8",
        PYTHONUNBUFFERED="1",
        LC_ALL="C.UTF-8",
        COLUMNS="100",
        BPEINSPECT_CONFIG_DIR=str(folder / "config"),
        BPEINSPECT_CACHE_DIR=str(folder / "cache"),
        XDG_CACHE_HOME=str(folder / "cache"),
        TIKTOKEN_CACHE_DIR=str(folder / "tiktoken"),
        HF_HOME=str(folder / "hf"),
        HF_HUB_CACHE=str(folder / "hf" / "hub"),
        HF_HUB_OFFLINE="1",
    )
    env.pop("BPEINSPECT_DEBUG", None)
    ran = []
    for item in examples(page):
        if isinstance(item, File):
            (work / item.name).write_text(item.text, encoding="utf-8")
            continue
        if any(word in item.command for word in NEEDS_NETWORK):
            continue
        here = run_here(item.command, work, env)
        if here is not None:
            ran.append((item, *here))
            continue
        done = subprocess.run(
            ["bash", "-c", item.command],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            timeout=300,
            check=False,
        )
        ran.append((item, done.stdout, done.returncode))
    return ran


def stray_commands(page: Path) -> list[str]:
    """Command lines of ``bpeinspect-cli`` in code blocks that are not ``console`` examples."""
    out, info = [], None
    for line in page.read_text(encoding="utf-8").splitlines():
        m = _FENCE.match(line.strip())
        if m:
            info = None if info is not None else m.group(1).split()[:1]
        elif info is not None and info != ["console"] and re.match(r"\s*(\$ )?bpeinspect-cli ", line):
            out.append(line)
    return out


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_line_example_is_one_the_test_runs(page: Path) -> None:
    assert not stray_commands(page)


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_line_example_runs_and_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    ran = run_examples(page, tmp_path)
    assert ran, f"{page.name} shows no bpeinspect-cli example"
    for example, printed, status in ran:
        fails = any(line.startswith("bpeinspect-cli: error:") for line in example.expected)
        assert status == (2 if fails else 0), f"$ {example.command}\n{printed}"
        assert matches(example.expected, printed.splitlines()), (
            f"$ {example.command}\n--- the page shows:\n"
            + "\n".join(example.expected)
            + f"\n--- it printed:\n{printed}"
        )


def test_every_example_of_a_page_is_collected(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```json file=m.json\n[1]\n```\n\n```console\n$ bpeinspect-cli a\nout\n...\n$ x hf:o/n\n```\n"
        "```sh\nbpeinspect-cli not-an-example\n```\n",
        encoding="utf-8",
    )
    assert stray_commands(page) == ["bpeinspect-cli not-an-example"]
    got = examples(page)
    assert got == [File("m.json", "[1]\n"), Example("bpeinspect-cli a", ["out", "..."]), Example("x hf:o/n")]


def test_the_conformance_page_lists_every_real_vocabulary_and_its_package() -> None:
    from tests.conformance.sources import VOCABS

    rows = [
        line
        for line in (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ")
    ]
    missing = [
        v.model
        for v in VOCABS
        if not any(row.startswith(f"| {v.model} |") and f"`{v.package.spec}`" in row for row in rows)
    ]
    assert not missing, f"docs/conformance.md does not list {missing}"
    exact = sum(v.status == "exact" for v in VOCABS)
    assert f"{len(VOCABS)} files, {exact} exact" in (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")


def test_the_command_line_page_shows_every_command() -> None:
    import argparse

    from bpeinspect.cli.commands import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    shown = {
        ex.command.split("bpeinspect-cli ", 1)[1].split()[0]
        for ex in examples(ROOT / "docs" / "cli.md")
        if isinstance(ex, Example) and "bpeinspect-cli " in ex.command
    }
    assert set(sub.choices) <= shown, f"docs/cli.md has no example of {sorted(set(sub.choices) - shown)}"


@pytest.mark.parametrize(
    ("page", "limit"),
    [("README.md", 12_000), ("benchmarks/README.md", 20_000), ("docs/ARCHITECTURE.md", 6_000)],
)
def test_the_pages_a_newcomer_reads_first_stay_short(page: str, limit: int) -> None:
    assert len((ROOT / page).read_bytes()) <= limit
