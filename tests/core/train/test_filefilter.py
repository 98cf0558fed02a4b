"""Folder filters: ``.gitignore`` rules (checked against git itself on real trees) and the user's
include/exclude patterns, as a folder's scan and a training apply them."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from bpeinspect.core.train import TrainingJob, TrainingPlan
from bpeinspect.core.train.corpus import (
    BINARY,
    FILTERED,
    IGNORED,
    FileFilter,
    iter_corpus,
    scan_corpus,
    skipped_note,
)
from bpeinspect.core.train.filefilter import IgnoreRules, parse_patterns

GITIGNORE_ONLY = FileFilter((), (), True)


def make_tree(top: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = top / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def kept(top: Path, file_filter: FileFilter = GITIGNORE_ONLY) -> list[str]:
    return sorted(p.relative_to(top).as_posix() for p in scan_corpus(top, file_filter).files)


def git_kept(top: Path, folder: Path | None = None) -> list[str]:
    """What git lists as untracked and not ignored in ``folder`` (default: ``top``) of the
    repository ``top`` (made one), relative to ``folder``, hidden files and folders left out as
    the scan leaves them out."""
    folder = top if folder is None else folder
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "XDG_CONFIG_HOME": str(top / ".no-config"),
        "HOME": str(top / ".no-home"),
    }
    if not (top / ".git" / "HEAD").exists():
        subprocess.run(["git", "init", "-q", str(top)], check=True, env=env)
    out = subprocess.run(
        ["git", "-C", str(folder), "-c", "core.quotePath=false", "ls-files", "-z", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
        env=env,
    ).stdout.decode("utf-8")
    names = [n for n in out.split("\0") if n]
    return sorted(n for n in names if not any(part.startswith(".") for part in n.split("/")))


def git_ignored_folders(top: Path) -> list[str]:
    """The folders git ignores in the repository ``top`` (the outermost of each), as ``"a/b/"``."""
    out = subprocess.run(
        ["git", "-C", str(top), "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    ).stdout.decode("utf-8")
    return [n for n in out.split("\0") if n.endswith("/")]


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is the oracle")

TREE = {
    "a.txt": "a",
    "a.log": "log",
    "keep.log": "kept log",
    "debug.log.txt": "not a log",
    "build/out.txt": "built",
    "docs/build/page.txt": "a docs build file",
    "docs/index.md": "index",
    "docs/notes.tmp": "tmp",
    "docs/draft/one.md": "draft",
    "src/main.py": "main",
    "src/gen/made.py": "generated",
    "src/gen/hand.py": "by hand",
    "src/deep/er/x.py": "deep",
    "src/deep/er/y.cfg": "cfg",
    "top.txt": "top",
    "sub/top.txt": "sub top",
    "#hash.txt": "hash",
    "q1.txt": "q",
    "q12.txt": "q",
    "c_a.txt": "c",
    "c_z.txt": "c",
    "lit[.txt": "bracket",
    "r_z.txt": "range",
    "r_b.txt": "range",
    "r_-.txt": "range",
    "trail.txt": "trailing space pattern",
}
GITIGNORE = """\
# logs, but one
*.log
!keep.log
# a folder anywhere vs the top one only
/build/
docs/build
*.tmp
\\#hash.txt
q?.txt
c_[a-m].txt
r_[z-a].txt
r_[-x].txt
lit[.txt
trail.txt{spaces}
src/**/er/*.cfg
""".format(spaces="   ")  # trailing spaces are not part of a pattern
NESTED = {
    "src/.gitignore": "gen/*\n!gen/hand.py\n",
    "docs/.gitignore": "draft/\n",
    "sub/.gitignore": "/top.txt\n",
}


@needs_git
def test_gitignore_rules_keep_what_git_keeps(tmp_path):
    make_tree(tmp_path, TREE)
    make_tree(tmp_path, {".gitignore": GITIGNORE, **NESTED})
    ours = kept(tmp_path)
    assert ours == git_kept(tmp_path)
    # what the rules were written to do
    for gone in ("a.log", "build/out.txt", "docs/build/page.txt", "docs/notes.tmp", "#hash.txt", "q1.txt"):
        assert gone not in ours
    for there in ("keep.log", "debug.log.txt", "q12.txt", "c_z.txt", "src/gen/hand.py", "top.txt"):
        assert there in ours
    assert "c_a.txt" not in ours and "trail.txt" not in ours
    assert "lit[.txt" in ours  # an unclosed [ matches nothing
    assert "src/gen/made.py" not in ours and "src/deep/er/x.py" in ours and "src/deep/er/y.cfg" not in ours
    assert "docs/draft/one.md" not in ours and "sub/top.txt" not in ours


PARTS = ["a", "b", "dir", "x1", "x2", "log"]
EXTS = ["", ".txt", ".log", ".py"]


def random_pattern(rng: random.Random) -> str:
    parts = [
        rng.choice([*PARTS, "*", "?1", "x[12]", "[!a]*", "*o*", "[x-a]*", "[-b]*", "**"])
        for _ in range(rng.randint(1, 3))
    ]
    body = "/".join(parts)
    if rng.random() < 0.4 and not body.endswith("*"):
        body += rng.choice(EXTS[1:]) if rng.random() < 0.5 else "*"
    if rng.random() < 0.2:
        body = "/" + body
    if rng.random() < 0.2:
        body += "/"
    if rng.random() < 0.25:
        body = "!" + body
    return body


@needs_git
@pytest.mark.parametrize("seed", range(12))
def test_random_gitignores_keep_what_git_keeps(tmp_path, seed):
    rng = random.Random(seed)
    files = {}
    for _ in range(40):
        depth = rng.randint(1, 4)
        rel = "/".join(rng.choice(PARTS) for _ in range(depth)) + rng.choice(EXTS)
        files[rel] = rel
    top = tmp_path / "t"
    # a name cannot be a file and a folder at once: keep the first, as written
    for rel in list(files):
        if any(other.startswith(rel + "/") for other in files) or any(
            rel.startswith(other + "/") for other in files if other != rel
        ):
            del files[rel]
    make_tree(top, files)
    folders = sorted({str(Path(rel).parent.as_posix()) for rel in files} - {"."})
    ignores = {".gitignore": "\n".join(random_pattern(rng) for _ in range(rng.randint(2, 6))) + "\n"}
    for folder in rng.sample(folders, min(2, len(folders))):
        ignores[f"{folder}/.gitignore"] = "\n".join(random_pattern(rng) for _ in range(rng.randint(1, 3))) + "\n"
    make_tree(top, ignores)
    assert kept(top) == git_kept(top), ignores
    # a folder added from inside the repository: the .gitignore files above it and the
    # repository's info/exclude count too, as they do for git
    exclude = "\n".join(random_pattern(rng) for _ in range(rng.randint(1, 3))) + "\n"
    make_tree(top, {".git/info/exclude": exclude})
    for folder in folders:
        if any(f"{folder}/".startswith(d) for d in git_ignored_folders(top)):
            continue  # git lists nothing in it; the scan takes the folder it is given (see below)
        assert kept(top / folder) == git_kept(top, top / folder), (folder, ignores, exclude)


@needs_git
def test_a_folder_inside_a_repository_follows_the_gitignores_above_it_and_info_exclude(tmp_path):
    repo = tmp_path / "repo"
    make_tree(repo, TREE)
    make_tree(repo, {".gitignore": GITIGNORE, **NESTED})
    make_tree(
        repo,
        {
            "src/deep/.gitignore": "*.py\n!keep*.py\n",
            "src/deep/er/keep_me.py": "taken back below",
            "src/deep/er/made.txt": "left out by info/exclude",
            "src/deep/er/inner/z.txt": "in a folder left out from above",
        },
    )
    make_tree(repo, {".git/info/exclude": "made.txt\ninner/\n"})
    folder = repo / "src" / "deep" / "er"
    ours = kept(folder)
    assert ours == git_kept(repo, folder)
    # the top's src/**/er/*.cfg, src/deep's *.py (and its !keep*.py), info/exclude's made.txt and inner/
    assert ours == ["keep_me.py"]
    scan = scan_corpus(folder, GITIGNORE_ONLY)
    assert sorted((p.name, why) for p, why in scan.skipped) == [
        ("inner", IGNORED),
        ("made.txt", IGNORED),
        ("x.py", IGNORED),
        ("y.cfg", IGNORED),
    ]
    # the folder's own path counts in the rules above it: /build/ is the top's build only
    make_tree(repo, {"docs/sub/build/b.txt": "docs' build", "top2/build/c.txt": "another build"})
    assert kept(repo / "top2") == git_kept(repo, repo / "top2") == ["build/c.txt"]
    assert kept(repo / "docs") == git_kept(repo, repo / "docs")
    # a folder the rules above ignore is still the user's choice, as a file named one by one
    # is: its files count, as the rules inside it and below say
    assert "build/" in git_ignored_folders(repo)
    make_tree(repo, {"build/skip.log": "log"})
    assert kept(repo / "build") == ["out.txt"]
    # without the .gitignore switch none of it counts
    assert kept(folder, FileFilter.everything()) == ["inner/z.txt", "keep_me.py", "made.txt", "x.py", "y.cfg"]


@needs_git
def test_a_worktree_reads_the_exclude_file_of_its_main_repository(tmp_path):
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    main = tmp_path / "main"
    make_tree(main, {"a.txt": "a"})
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(main)], check=True, env=env)
    subprocess.run([*git, "-C", str(main), "add", "a.txt"], check=True, env=env)
    subprocess.run([*git, "-C", str(main), "commit", "-q", "-m", "a"], check=True, env=env)
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True, env=env)
    make_tree(main, {".git/info/exclude": "*.tmp\n"})
    wt = tmp_path / "wt"
    make_tree(wt, {"sub/x.tmp": "x", "sub/y.txt": "y"})
    assert (wt / ".git").is_file()
    assert kept(wt / "sub") == git_kept(wt, wt / "sub") == ["y.txt"]


def test_a_folder_outside_any_repository_reads_no_gitignore_above_it(tmp_path):
    make_tree(tmp_path, {".gitignore": "*.txt\n", "sub/a.txt": "a"})
    assert kept(tmp_path / "sub") == ["a.txt"]


def test_rules_in_detail():
    rules = IgnoreRules.parse(["doc/*.txt", "**/logs", "a/**/b", "x/**", "!x/keep"])
    assert rules.match("doc/n.txt", False) and rules.match("doc/deeper/n.txt", False) is None
    assert rules.match("logs", True) and rules.match("p/q/logs", False)
    assert rules.match("a/b", False) and rules.match("a/1/2/b", False)
    assert rules.match("x/y/z", False) and rules.match("x", True) is None
    assert rules.match("x/keep", False) is False  # taken back
    assert IgnoreRules.parse("only/\n").match("only", False) is None  # a folder pattern, and a file
    assert not IgnoreRules.parse("# comment\n\n   \n")
    backwards = IgnoreRules.parse("[z-a].txt\n*.log\n")  # git takes a range backwards as its first character
    assert backwards.match("b.txt", False) is None and backwards.match("z.txt", False)


def test_a_deeper_gitignore_decides_before_the_one_above(tmp_path):
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.md\n",
            "a/.gitignore": "!*.md\n",
            "a/b/.gitignore": "secret.md\n",
            "top.md": "",
            "a/x.md": "",
            "a/b/y.md": "",
            "a/b/secret.md": "",
            "a/b/t.txt": "",
        },
    )
    assert kept(tmp_path) == ["a/b/t.txt", "a/b/y.md", "a/x.md"]


def test_a_file_inside_an_ignored_folder_cannot_be_taken_back(tmp_path):
    make_tree(tmp_path, {".gitignore": "out/\n!out/keep.txt\n", "out/keep.txt": "", "in.txt": ""})
    scan = scan_corpus(tmp_path, GITIGNORE_ONLY)
    assert [p.name for p in scan.files] == ["in.txt"]
    assert scan.skipped == [(tmp_path / "out", IGNORED)]  # the folder once, not searched
    assert skipped_note(scan.skipped) == "Skipped 1 file: out/ (ignored by .gitignore)."


def test_include_and_exclude_patterns_choose_the_files(tmp_path):
    make_tree(
        tmp_path,
        {
            "a.txt": "a",
            "B.TXT": "b",
            "c.md": "c",
            "d.py": "d",
            "notes/e.txt": "e",
            "notes/old/f.txt": "f",
            "vendor/g.txt": "g",
        },
    )
    f = FileFilter.from_text("*.txt, *.md", "vendor/ notes/old")
    scan = scan_corpus(tmp_path, f)
    assert [p.relative_to(tmp_path).as_posix() for p in scan.files] == ["B.TXT", "a.txt", "c.md", "notes/e.txt"]
    assert sorted((p.relative_to(tmp_path).as_posix(), why) for p, why in scan.skipped) == [
        ("d.py", FILTERED),
        ("notes/old", FILTERED),
        ("vendor", FILTERED),
    ]
    # an anchored include takes one folder's files only
    assert kept(tmp_path, FileFilter(("notes/*.txt",), (), False)) == ["notes/e.txt"]
    # no include pattern: every text file
    assert len(kept(tmp_path, FileFilter.everything())) == 7


def test_the_default_filter_takes_text_files_by_name_and_content(tmp_path):
    make_tree(tmp_path, {"README": "read me", "a.py": "x = 1", "b.md": "# b", "c.svg": "<svg/>"})
    (tmp_path / "bad.txt").write_bytes(b"\x00\x01 not text")
    (tmp_path / "pic.jpg").write_bytes(b"\xff\xd8\xff")
    scan = scan_corpus(tmp_path)
    assert [p.name for p in scan.files] == ["README", "a.py", "b.md"]
    assert {p.name: why for p, why in scan.skipped} == {"bad.txt": BINARY, "c.svg": FILTERED, "pic.jpg": FILTERED}


def test_a_file_named_one_by_one_is_never_filtered(tmp_path):
    make_tree(tmp_path, {".gitignore": "*.csv\n", "t.csv": "a,b"})
    assert scan_corpus([tmp_path / "t.csv"], FileFilter(("*.md",), ("*.csv",), True)).files == [tmp_path / "t.csv"]


def test_training_leaves_out_ignored_files_and_counts_them_apart_from_binary_ones(tmp_path):
    make_tree(
        tmp_path,
        {
            ".gitignore": "secret*\nbuild/\n",
            "a.txt": "apple apple apple\n",
            "secret.txt": "zzzz qqqq zzzz qqqq\n",
            "build/gen.txt": "zzzz qqqq\n",
        },
    )
    (tmp_path / "blob.txt").write_bytes(b"\x00zzzz")
    skipped: list = []
    texts = list(iter_corpus(tmp_path, "gpt4", skipped=skipped))
    assert texts == ["apple apple apple\n"]
    assert sorted((p.name, why) for p, why in skipped) == [
        ("blob.txt", BINARY),
        ("build", IGNORED),
        ("secret.txt", IGNORED),
    ]
    assert "(1 binary, 2 ignored by .gitignore)" in skipped_note(skipped)
    for in_process in (True, False):
        plan = TrainingPlan([tmp_path], [260], pattern="gpt4", name="t")
        outcome = TrainingJob(plan, plan.make_run(in_process=in_process)).run()
        learned = [t for t in outcome.tokenizers[-1].mergeable_ranks if len(t) > 1]
        assert learned and not any(b"z" in t or b"q" in t for t in learned), in_process
        assert len(outcome.skipped) == 3, in_process
        # without the .gitignore, the ignored files are trained on
        plan = TrainingPlan([tmp_path], [260], pattern="gpt4", name="t", file_filter=FileFilter(gitignore=False))
        outcome = TrainingJob(plan, plan.make_run(in_process=in_process)).run()
        assert [p.name for p, _ in outcome.skipped] == ["blob.txt"], in_process


def test_parse_patterns_reads_a_text_field():
    assert parse_patterns(" *.txt,*.md ;\n docs/ ") == ("*.txt", "*.md", "docs/")
    assert parse_patterns("") == ()


def test_a_real_source_tree_keeps_its_source_and_leaves_its_caches(tmp_path):
    """The standard library's json package as it is installed (with __pycache__ when Python
    has compiled it), and a copy of it with the caches written and binary files beside."""
    import sysconfig

    real = Path(sysconfig.get_path("stdlib")) / "json"
    top = tmp_path / "json"
    shutil.copytree(real, top)
    (top / "__pycache__").mkdir(exist_ok=True)
    (top / "__pycache__" / "decoder.cpython-311.pyc").write_bytes(b"\xa7\r\r\n\x00\x00")
    (top / "logo.bin").write_bytes(b"\x00\x01")
    for folder in (real, top):
        scan = scan_corpus(folder)
        assert [p.name for p in scan.files] == sorted(p.name for p in real.glob("*.py"))
        assert not any("__pycache__" in p.parts for p, _ in scan.skipped)
    assert scan_corpus(top).skipped == [(top / "logo.bin", FILTERED)]


def test_a_filter_compiles_its_patterns_when_first_asked_not_when_made(monkeypatch):
    from bpeinspect.core.train import filefilter

    parsed: list[tuple[str, ...]] = []
    real = filefilter.IgnoreRules.parse

    def counting(text, **kw):
        parsed.append(tuple(text))
        return real(text, **kw)

    monkeypatch.setattr(filefilter.IgnoreRules, "parse", counting)
    f = FileFilter(("*.txt",), ("old/",))
    assert parsed == []  # a settings form makes filters as the user types
    assert f.includes("a/b.TXT") and not f.includes("b.py")
    assert f.excludes("old", is_dir=True) and not f.excludes("new", is_dir=True)
    assert sorted(parsed) == [("*.txt",), ("old/",)]
    f.includes("c.txt")
    assert len(parsed) == 2  # compiled once
