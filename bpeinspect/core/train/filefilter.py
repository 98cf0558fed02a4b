"""Which files of a corpus folder are trained on: the user's file patterns and ``.gitignore`` files.

Patterns are written as in a ``.gitignore``: ``*`` matches within one path part, ``?`` one
character, ``[abc]`` one of a set, ``**`` any number of folders; a pattern with a ``/`` (other
than a trailing one) is taken from the folder it belongs to, one without it matches a name at
any depth; a trailing ``/`` matches folders only; ``!`` takes a pattern back; ``#`` starts a
comment. Within one list the last matching pattern decides, and a ``.gitignore`` deeper in the
tree decides before the ones above it.

>>> rules = IgnoreRules.parse("build/\\n*.log\\n!keep.log\\n/top.txt")
>>> [rules.match(p, d) for p, d in [("build", True), ("a/x.log", False), ("a/keep.log", False)]]
[True, True, False]
>>> rules.match("top.txt", False), rules.match("sub/top.txt", False)
(True, None)

A :class:`FileFilter` is what a folder's scan applies: include patterns (a file must match one),
exclude patterns (what they match is left out) and whether ``.gitignore`` files count.

>>> f = FileFilter.from_text("*.txt, *.md", "drafts/")
>>> f.includes("notes/a.TXT"), f.includes("a.png"), f.excludes("drafts", is_dir=True)
(True, False, True)
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_INCLUDE",
    "FileFilter",
    "IgnoreRules",
    "parse_patterns",
    "pattern_regex",
]

# The files of a folder trained on unless the user says otherwise: text by name (their content
# is still checked, see corpus.is_binary_file).
DEFAULT_INCLUDE = (
    "*.txt",
    "*.text",
    "*.md",
    "*.rst",
    "*.org",
    "*.adoc",
    "*.tex",
    "*.bib",
    "*.csv",
    "*.tsv",
    "*.json",
    "*.jsonl",
    "*.xml",
    "*.html",
    "*.htm",
    "*.css",
    "*.yaml",
    "*.yml",
    "*.toml",
    "*.ini",
    "*.cfg",
    "*.conf",
    "*.srt",
    "*.vtt",
    "*.po",
    "*.log",
    "*.py",
    "*.pyi",
    "*.ipynb",
    "*.c",
    "*.h",
    "*.cc",
    "*.cpp",
    "*.hpp",
    "*.cs",
    "*.java",
    "*.kt",
    "*.scala",
    "*.go",
    "*.rs",
    "*.swift",
    "*.js",
    "*.mjs",
    "*.jsx",
    "*.ts",
    "*.tsx",
    "*.vue",
    "*.rb",
    "*.php",
    "*.pl",
    "*.lua",
    "*.r",
    "*.jl",
    "*.hs",
    "*.ml",
    "*.el",
    "*.sh",
    "*.bat",
    "*.ps1",
    "*.sql",
    "*.proto",
    "*.cmake",
    "README*",
    "LICENSE*",
    "Makefile",
    "Dockerfile",
)
IGNORE_FILE = ".gitignore"
_SEPARATORS = re.compile(r"[,;\s]+")


def parse_patterns(text: str) -> tuple[str, ...]:
    """Patterns from a text field: separated by commas, semicolons, spaces or new lines.

    >>> parse_patterns("*.txt, *.md;docs/  *.py")
    ('*.txt', '*.md', 'docs/', '*.py')
    """
    return tuple(p for p in _SEPARATORS.split(text) if p)


def pattern_regex(glob: str) -> str:
    """The regular expression of a ``.gitignore`` glob (without its ``!``, leading ``/`` or
    trailing ``/``), to match a whole ``/``-separated path.

    >>> pattern_regex("a/**/b*.py")
    'a/(?:.*/)?b[^/]*\\\\.py'
    """
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            stars = j - i
            whole_part = (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/")
            if stars >= 2 and whole_part:
                if j == n:  # "a/**": everything inside (or, alone, everything)
                    out.append(".*")
                else:  # "**/b", "a/**/b": any number of folders, none included
                    out.append("(?:.*/)?")
                    j += 1
            else:  # other runs of stars are one star
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _char_class(glob, i)
            if cls is None:  # an unclosed set: git's pattern then matches nothing
                return "(?!)"
            out.append(cls)
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _char_class(glob: str, start: int) -> tuple[str | None, int]:
    """The regex of the ``[...]`` set at ``glob[start]`` and the index after it (``None`` for
    an unclosed ``[``). A set never matches the separator ``/``.

    >>> _char_class("[!a-c]x", 0)
    ('(?!/)[^a-c]', 6)
    """
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    if negate:
        i += 1
    body: list[str] = []
    first = i
    n = len(glob)

    def char_at(j: int) -> tuple[str, int]:  # the set's character at j (an escaped one too), and after it
        if glob[j] == "\\" and j + 1 < n:
            return glob[j + 1], j + 2
        return glob[j], j + 1

    while i < n and (glob[i] != "]" or i == first):
        lo, i = char_at(i)
        if i + 1 < n and glob[i] == "-" and glob[i + 1] != "]":
            hi, i = char_at(i + 1)
            # as git reads it: a range backwards holds its first character only
            body.append(f"{re.escape(lo)}-{re.escape(hi)}" if lo <= hi else re.escape(lo))
        else:
            body.append(re.escape(lo))
    if i >= len(glob):
        return None, len(glob)
    inner = "".join(body)
    return (f"(?!/)[^{inner}]" if negate else f"[{inner}]"), i + 1


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negated: bool
    folders_only: bool


class IgnoreRules:
    """The patterns of one ``.gitignore`` (or of a text field), for paths relative to its folder."""

    def __init__(self, rules: list[_Rule], flags: int = 0) -> None:
        self.rules = rules
        # one regex each for files and folders telling whether any rule matches (most paths
        # match none: one search instead of one per rule)
        self._any = {
            is_dir: re.compile(
                "|".join(f"(?:{r.regex.pattern})" for r in rules if is_dir or not r.folders_only) or "(?!)",
                flags | re.DOTALL,
            )
            for is_dir in (False, True)
        }

    @classmethod
    def parse(cls, text: str | list[str] | tuple[str, ...], *, ignore_case: bool = False) -> IgnoreRules:
        """The rules of ``text`` (a ``.gitignore``'s lines, or a list of patterns).

        >>> IgnoreRules.parse("# a comment\\n\\n\\\\#hash \\n").match("#hash", False)
        True
        """
        lines = text.splitlines() if isinstance(text, str) else list(text)
        flags = re.IGNORECASE if ignore_case else 0
        rules: list[_Rule] = []
        for raw in lines:
            line = _strip_trailing_spaces(raw.rstrip("\r\n"))
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            elif line.startswith("\\!"):
                line = line[1:]
            folders_only = line.endswith("/") and not line.endswith("\\/")
            if folders_only:
                line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            if not line:
                continue
            body = pattern_regex(line)
            if not anchored and not line.startswith("**"):
                body = "(?:.*/)?" + body
            try:
                regex = re.compile(body + r"\Z", flags | re.DOTALL)
            except re.error:  # a set such as [z-a]: git's pattern matches nothing
                continue
            rules.append(_Rule(regex, negated, folders_only))
        return cls(rules, flags)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """Whether ``rel`` (a ``/``-separated path relative to the rules' folder) is ignored:
        ``True``, ``False`` (taken back with ``!``), or ``None`` (no pattern matches it)."""
        if not self._any[is_dir].match(rel):
            return None
        for rule in reversed(self.rules):  # the last one that matches decides
            if (is_dir or not rule.folders_only) and rule.regex.match(rel):
                return not rule.negated
        return None


def _git_dir(dot_git: Path) -> Path:
    """The folder a repository's ``info/exclude`` is in: ``.git`` itself, or for a worktree
    or submodule (whose ``.git`` is a file saying ``gitdir: …``) the folder that names, or the
    common one it shares with the main worktree."""
    if dot_git.is_dir():
        return dot_git
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return dot_git
    if not line.startswith("gitdir:"):
        return dot_git
    git_dir = dot_git.parent / line.removeprefix("gitdir:").strip()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return git_dir
    return git_dir / common


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped with a backslash (``"a\\ "`` keeps one)."""
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        if end >= 2 and line[end - 2] == "\\":
            break
        end -= 1
    return line[:end]


class IgnoreStack:
    """The ``.gitignore`` files on the way from a folder down to where a walk is: the deepest
    that has a say decides."""

    def __init__(self, layers: tuple[tuple[str, IgnoreRules], ...] = ()) -> None:
        self.layers = layers  # (folder relative to the walk's top, "" for the top; its rules)

    def entered(self, rel_dir: str, folder: Path) -> IgnoreStack:
        """The stack inside ``folder`` (at ``rel_dir``), with its ``.gitignore`` if it has one."""
        try:
            text = (folder / IGNORE_FILE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return self
        rules = IgnoreRules.parse(text)
        return IgnoreStack((*self.layers, (rel_dir, rules))) if rules else self

    @classmethod
    def above(cls, folder: Path) -> tuple[IgnoreStack, str]:
        """What git ignores in ``folder`` before its own ``.gitignore`` is read: the rules of the
        repository holding it (the nearest folder above, or itself, with a ``.git``), that is its
        ``.git/info/exclude`` and the ``.gitignore`` files from the repository's top down to
        ``folder``'s parent; and ``folder``'s path from that top (``""`` outside a repository or
        at its top), which the paths the stack is asked about start with.

        >>> IgnoreStack.above(Path("/")) [1]
        ''
        """
        folder = Path(os.path.abspath(folder))
        top = next((d for d in (folder, *folder.parents) if (d / ".git").exists()), None)
        if top is None:
            return cls(), ""
        layers: list[tuple[str, IgnoreRules]] = []
        exclude = _git_dir(top / ".git") / "info" / "exclude"
        try:
            rules = IgnoreRules.parse(exclude.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            rules = IgnoreRules([])
        if rules:
            layers.append(("", rules))
        stack = cls(tuple(layers))
        rel = folder.relative_to(top).as_posix() if folder != top else ""
        parts = rel.split("/") if rel else []
        for k in range(len(parts)):  # the top's own, then each folder's down to the parent
            stack = stack.entered("/".join(parts[:k]), top.joinpath(*parts[:k]))
        return stack, rel

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the walk's top) is ignored."""
        for base, rules in reversed(self.layers):
            sub = rel[len(base) + 1 :] if base else rel
            verdict = rules.match(sub, is_dir)
            if verdict is not None:
                return verdict
        return False


@dataclass(frozen=True)
class FileFilter:
    """Which files of a folder to train on. ``include``: patterns a file's path must match one
    of (empty: every file); ``exclude``: patterns of files and folders to leave out (``!`` takes
    one back); ``gitignore``: leave out what the folder's ``.gitignore`` files ignore. Patterns
    are matched without regard to case. Files named one by one are never filtered."""

    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    gitignore: bool = True

    @classmethod
    def from_text(cls, include: str, exclude: str = "", gitignore: bool = True) -> FileFilter:
        """A filter from two text fields (see :func:`parse_patterns`)."""
        return cls(parse_patterns(include), parse_patterns(exclude), gitignore)

    @classmethod
    def everything(cls) -> FileFilter:
        """Every text file of a folder, ``.gitignore`` files or not (binary files still are not)."""
        return cls((), (), False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))

    # The patterns are compiled when a scan first asks (on its worker), not when a settings form
    # makes the filter: the default's seventy patterns take tens of milliseconds to compile.
    @functools.cached_property
    def _include(self) -> IgnoreRules:
        return IgnoreRules.parse(self.include, ignore_case=True)

    @functools.cached_property
    def _exclude(self) -> IgnoreRules:
        return IgnoreRules.parse(self.exclude, ignore_case=True)

    def includes(self, rel: str) -> bool:
        """Whether the file at ``rel`` (``/``-separated, relative to the folder) matches an include pattern."""
        return not self.include or bool(self._include.match(rel, False))

    def excludes(self, rel: str, is_dir: bool = False) -> bool:
        """Whether an exclude pattern leaves ``rel`` out."""
        return bool(self._exclude.match(rel, is_dir))

    def settings(self) -> dict[str, list[str] | bool]:
        """The filter as a trained tokenizer's settings record it (to repeat the run), see
        :meth:`from_settings`.

        >>> FileFilter(("*.txt",), ("old/",), False).settings()
        {'include': ['*.txt'], 'exclude': ['old/'], 'gitignore': False}
        """
        return {"include": list(self.include), "exclude": list(self.exclude), "gitignore": self.gitignore}

    @classmethod
    def from_settings(cls, settings: dict) -> FileFilter:
        """The filter a trained tokenizer's settings recorded (:meth:`settings`); ``ValueError``
        if they do not describe one.

        >>> f = FileFilter(("*.md",), (), True); FileFilter.from_settings(f.settings()) == f
        True
        """
        patterns: list[tuple[str, ...]] = []
        for key in ("include", "exclude"):
            value = settings.get(key)
            if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                raise ValueError("a file filter's include and exclude are lists of patterns")
            patterns.append(tuple(value))
        gitignore = settings.get("gitignore")
        if not isinstance(gitignore, bool):
            raise ValueError("a file filter's gitignore is true or false")
        return cls(patterns[0], patterns[1], gitignore)

    def describe(self) -> str:
        """One line for a note or a tooltip.

        >>> FileFilter(("*.txt",), ("old/",)).describe()
        'files matching *.txt, leaving out old/, skipping what .gitignore files ignore'
        """
        parts = [f"files matching {', '.join(self.include)}" if self.include else "every text file"]
        if self.exclude:
            parts.append(f"leaving out {', '.join(self.exclude)}")
        if self.gitignore:
            parts.append("skipping what .gitignore files ignore")
        return ", ".join(parts)
