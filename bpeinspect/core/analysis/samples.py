"""Texts to compare tokenizers on: the bundled parallel samples, or a folder of the user's own.

The bundled folder holds one fable translated into many languages, one file per language
named by its code (``resources/samples/ko.txt``), and ``code/`` with the same data as JSON,
YAML, TOML, CSV and XML and the same program in Python (spaces and tabs) and JavaScript.

>>> names = [s.name for s in load_samples()]
>>> "en" in names and "ko" in names
True
>>> LANGUAGES["ko"]
('Korean', 'Hangul')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from bpeinspect.core.errors import SampleError
from bpeinspect.core.io.builtins import resources_dir

# code -> (English name, script); used for labels and to pick the bundled language files
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "Latin"),
    "de": ("German", "Latin"),
    "fr": ("French", "Latin"),
    "es": ("Spanish", "Latin"),
    "pt": ("Portuguese", "Latin"),
    "it": ("Italian", "Latin"),
    "pl": ("Polish", "Latin"),
    "tr": ("Turkish", "Latin"),
    "vi": ("Vietnamese", "Latin"),
    "id": ("Indonesian", "Latin"),
    "sw": ("Swahili", "Latin"),
    "ru": ("Russian", "Cyrillic"),
    "uk": ("Ukrainian", "Cyrillic"),
    "el": ("Greek", "Greek"),
    "ar": ("Arabic", "Arabic"),
    "fa": ("Persian", "Arabic"),
    "he": ("Hebrew", "Hebrew"),
    "hi": ("Hindi", "Devanagari"),
    "bn": ("Bengali", "Bengali"),
    "ta": ("Tamil", "Tamil"),
    "th": ("Thai", "Thai"),
    "zh": ("Chinese (Simplified)", "Han"),
    "ja": ("Japanese", "Kanji and kana"),
    "ko": ("Korean", "Hangul"),
    "am": ("Amharic", "Ethiopic"),
    "ka": ("Georgian", "Georgian"),
    "hy": ("Armenian", "Armenian"),
}

_LANG_CODE = re.compile(r"[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")
_MAX_SAMPLE_FILES = 1000


@dataclass(frozen=True)
class Sample:
    """One text to measure: held in memory (``text``) or read from ``path`` when needed."""

    name: str
    path: Path | None = None
    text: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """``"ko (Korean)"`` for a known language code, else the name itself."""
        lang = LANGUAGES.get(self.name)
        return f"{self.name} ({lang[0]})" if lang else self.name

    def size(self) -> int:
        """Size in UTF-8 bytes (the file's size for file samples)."""
        if self.text is not None:
            return len(self.text.encode("utf-8"))
        assert self.path is not None
        try:
            return self.path.stat().st_size
        except OSError as exc:
            raise SampleError(f"{self.path}: cannot read: {exc.strerror or exc}") from None

    def read(self) -> str:
        """The whole text (strict UTF-8 for files)."""
        if self.text is not None:
            return self.text
        assert self.path is not None
        return read_text(self.path)


def read_text(path: str | os.PathLike[str]) -> str:
    """A file's text as strict UTF-8, or a :class:`SampleError` that names the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise SampleError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SampleError(f"{p}: not UTF-8 text (bad byte at offset {exc.start})") from None


def samples_dir() -> Path:
    """The bundled ``samples`` folder."""
    return resources_dir() / "samples"


def _files_in(folder: Path) -> list[Path]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise SampleError(f"{folder}: cannot list the folder: {exc.strerror or exc}") from None
    files = [p for p in entries if p.is_file() and not p.name.startswith(".")]
    if len(files) > _MAX_SAMPLE_FILES:
        raise SampleError(f"{folder}: more than {_MAX_SAMPLE_FILES} files; pick a smaller folder")
    return files


def load_samples(folder: str | os.PathLike[str] | None = None) -> list[Sample]:
    """The samples of a folder, one per file, named by file stem and sorted by name.

    Without ``folder``: the bundled languages (files named by a language code). With a
    folder of your own: every visible regular file in it (subfolders are ignored). Files are
    read lazily; :meth:`Sample.read` reports bad UTF-8.
    """
    if folder is None:
        files = [p for p in _files_in(samples_dir()) if p.suffix == ".txt" and _LANG_CODE.fullmatch(p.stem)]
    else:
        root = Path(folder)
        if not root.is_dir():
            raise SampleError(f"{root}: not a folder")
        files = _files_in(root)
    if not files:
        raise SampleError(f"{folder or samples_dir()}: no sample files in the folder")
    names = [p.stem for p in files]
    # two files with one stem (notes.txt, notes.md) keep their full names apart
    return [Sample(p.name if names.count(p.stem) > 1 else p.stem, p) for p in files]


def code_samples() -> list[Sample]:
    """The bundled code and data samples (``samples/code``), named by file name.

    >>> [s.name for s in code_samples()][:3]
    ['mill.js', 'mill.py', 'mill_tabs.py']
    """
    return [Sample(p.name, p) for p in _files_in(samples_dir() / "code")]


def expand_paths(paths: list[str | os.PathLike[str]]) -> list[Path]:
    """Files named directly plus the visible regular files of each named folder, in order."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = _files_in(p)
            if not found:
                raise SampleError(f"{p}: no files in the folder")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        elif p.exists():  # a device (/dev/zero), a pipe, a socket
            raise SampleError(f"{p}: not a regular file or folder")
        else:
            raise SampleError(f"{p}: no such file or folder")
    return out
