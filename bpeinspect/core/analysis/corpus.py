"""Parallel corpora to measure tokenizers across languages: the fable, the UDHR, or a folder.

A :class:`Corpus` is a list of texts, one per language, each with what is known of its
language (:class:`Language`: name, codes, script, direction, location, region), plus the
English text that premiums are taken against, kept even when a filter leaves it out.

>>> udhr = udhr_corpus()                       # the complete (stage 4) translations
>>> len(udhr), udhr.baseline.language.code
(527, 'eng')
>>> arabic = udhr.language("arb")
>>> (arabic.name, arabic.script, arabic.direction, arabic.region)
('Arabic, Standard', 'Arabic', 'rtl', 'Asia')
>>> [t.language.code for t in udhr.filter(scripts={"Ethiopic"})]
['amh', 'tir']
>>> fable = fable_corpus()
>>> fable.language("ko").name, fable.language("ko").latitude
('Korean', 37.5)

The UDHR texts ship compressed (``resources/udhr``); :meth:`Corpus.source_path` extracts
them to the user's cache folder the first time a file is wanted, so a text can be named by a
path that holds exactly the bytes that were counted.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import lzma
import os
import tarfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from bpeinspect.core.analysis.samples import LANGUAGES, Sample, SampleError, load_samples, samples_dir
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.io.atomic import atomic_folder
from bpeinspect.core.io.builtins import resources_dir
from bpeinspect.core.io.discover import CACHE_ENV, cache_dir
from bpeinspect.core.scripts import dominant_script

UDHR_VERSION = "6.0.0"
COMPLETE_STAGE = 4
BASELINE_CODES = ("eng", "en")  # the English text of a corpus, by its code or file stem
REGIONS = ("Africa", "Americas", "Asia", "Europe", "Oceania")


@dataclass(frozen=True)
class Language:
    """What is known about the language of one text; empty or ``None`` where unknown."""

    code: str  # unique in its corpus: the UDHR's code (``cmn_hans``), the fable's (``zh``), a file stem
    name: str
    script: str = ""
    bcp47: str = ""
    iso639_3: str = ""
    direction: str = "ltr"
    latitude: float | None = None
    longitude: float | None = None
    region: str = ""
    stage: int | None = None  # the UDHR's encoding stage (4 = complete)
    articles: int | None = None  # UDHR articles present (of 30)
    preamble: bool | None = None

    @property
    def has_code(self) -> bool:
        """False for a UDHR text whose language has no ISO 639 code (``und`` in its index)."""
        return self.bcp47 != "und"

    @property
    def label(self) -> str:
        """``"amh (Amharic)"``; the code alone when the name is the code."""
        return self.code if self.name == self.code else f"{self.code} ({self.name})"

    @property
    def located(self) -> bool:
        return self.latitude is not None and self.longitude is not None


@dataclass(frozen=True)
class CorpusText:
    """One text of a corpus: its language and the :class:`Sample` to count (named by the code)."""

    language: Language
    sample: Sample

    @property
    def code(self) -> str:
        return self.language.code


@dataclass(frozen=True)
class Corpus:
    """Texts in many languages, one per language code, and the English baseline text."""

    kind: str  # "udhr", "fable" or "folder"
    title: str
    texts: tuple[CorpusText, ...]
    baseline: CorpusText | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self) -> Iterator[CorpusText]:
        return iter(self.texts)

    @property
    def codes(self) -> list[str]:
        return [t.code for t in self.texts]

    @property
    def bundled(self) -> bool:
        """Whether the texts ship with bpeinspect (so their language codes are meaningful)."""
        return self.kind != "folder"

    @property
    def scripts(self) -> list[str]:
        """The scripts present, the most used first."""
        return _by_count(t.language.script for t in self.texts)

    @property
    def regions(self) -> list[str]:
        return [r for r in REGIONS if any(t.language.region == r for t in self.texts)]

    def entry(self, code: str) -> CorpusText:
        return self._index[code]

    @functools.cached_property
    def _index(self) -> dict[str, CorpusText]:
        # code -> text, the baseline included: the views ask for a language per point drawn
        return {t.code: t for t in reversed(list(self._all()))}

    def language(self, code: str) -> Language:
        return self.entry(code).language

    def text(self, code: str) -> str:
        """The text of one language, as it is counted."""
        return self.entry(code).sample.read()

    def samples(self) -> list[Sample]:
        return [t.sample for t in self.texts]

    def filter(
        self,
        *,
        stages: Collection[int] | None = None,
        scripts: Collection[str] | None = None,
        regions: Collection[str] | None = None,
        codes: Collection[str] | None = None,
        complete: bool = False,
    ) -> Corpus:
        """The texts that pass every filter given; the baseline stays available for premiums.

        ``complete`` keeps only texts with the preamble and all 30 articles (UDHR).
        """

        def keep(lang: Language) -> bool:
            return (
                (stages is None or lang.stage in stages)
                and (scripts is None or lang.script in scripts)
                and (regions is None or lang.region in regions)
                and (codes is None or lang.code in codes)
                and (not complete or (lang.articles == 30 and bool(lang.preamble)))
            )

        return replace(self, texts=tuple(t for t in self.texts if keep(t.language)))

    def source_path(self, code: str) -> Path:
        """A file holding exactly the text counted for ``code`` (bundled texts are extracted once)."""
        entry = self.entry(code)
        if entry.sample.path is not None:
            return entry.sample.path
        if self.kind == "udhr":
            data = entry.sample.read().encode("utf-8")
            path = udhr_source_dir() / f"{code}.txt"
            if not _holds(path, data):  # changed since the folder was checked: check it again
                _checked_dirs.discard(path.parent)
                path = udhr_source_dir() / f"{code}.txt"
            return path
        raise SampleError(f"{code}: this text is not in a file")

    def _all(self) -> Iterator[CorpusText]:
        yield from self.texts
        if self.baseline is not None:
            yield self.baseline


def _by_count(values: Iterator[str]) -> list[str]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts, key=lambda v: (-counts[v], v))


def _make(kind: str, title: str, texts: list[CorpusText]) -> Corpus:
    base = next((t for code in BASELINE_CODES for t in texts if t.code == code), None)
    return Corpus(kind, title, tuple(texts), base)


# -- the UDHR --------------------------------------------------------------------------------------


def udhr_dir() -> Path:
    return resources_dir() / "udhr"


def udhr_name(name: str, bcp47: str) -> str:
    """The name to show for a UDHR text: the index writes ``(Jinan)`` for a language it has no
    code for, which reads like a missing name; it says so instead.

    >>> udhr_name("(Jinan)", "und"), udhr_name("Drung", "duu")
    ('Jinan, no language code', 'Drung')
    """
    if bcp47 != "und":
        return name
    bare = name[1:-1] if name.startswith("(") and name.endswith(")") else name
    return f"{bare}, no language code"


@functools.cache
def udhr_languages() -> tuple[Language, ...]:
    """Every translation's metadata (``languages.tsv``), in code order."""
    path = udhr_dir() / "languages.tsv"
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise SampleError(f"{path}: cannot read the UDHR's language table: {exc.strerror or exc}") from None
    out = []
    for row in csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\"):
        out.append(
            Language(
                code=row["code"],
                name=udhr_name(row["name"], row["bcp47"]),
                script=row["script"],
                bcp47=row["bcp47"],
                iso639_3=row["iso639_3"],
                direction=row["direction"],
                latitude=float(row["latitude"]) if row["latitude"] else None,
                longitude=float(row["longitude"]) if row["longitude"] else None,
                region=row["region"],
                stage=int(row["stage"]),
                articles=int(row["articles"]),
                preamble=row["preamble"] == "1",
            )
        )
    return tuple(out)


@functools.cache
def _udhr_archive() -> tuple[bytes, str]:
    path = udhr_dir() / "udhr.tar.xz"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SampleError(f"{path}: cannot read the UDHR texts: {exc.strerror or exc}") from None
    return data, hashlib.sha256(data).hexdigest()


def _unxz(data: bytes, piece: int = 1 << 18, should_stop: Callable[[], bool] | None = None) -> bytes:
    """``lzma.decompress(data)`` of one stream, ``piece`` bytes at a time with ``should_stop``
    asked between."""
    d = lzma.LZMADecompressor()
    out = [d.decompress(data, piece)]
    while not d.eof and not d.needs_input:
        if should_stop is not None and should_stop():
            raise Cancelled()
        out.append(d.decompress(b"", piece))
    if not d.eof:
        raise lzma.LZMAError("Compressed data ended before the end-of-stream marker was reached")
    return b"".join(out)


_UDHR_TEXTS: list[dict[str, str]] = []  # the texts once unpacked (at most one entry)


def udhr_texts(should_stop: Callable[[], bool] | None = None) -> dict[str, str]:
    """Code -> text of every translation (decompressed once per process), with ``should_stop``
    asked between pieces and texts (:class:`Cancelled` if it says so): the languages view's
    worker loads it at the view's first open, beside the GUI thread's first paint of it."""
    if _UDHR_TEXTS:
        return _UDHR_TEXTS[0]
    texts = _unpack_udhr(should_stop)
    if not _UDHR_TEXTS:  # another thread may have unpacked it meanwhile: one copy is kept
        _UDHR_TEXTS.append(texts)
    return _UDHR_TEXTS[0]


def forget_udhr_texts() -> None:
    """Drop the unpacked texts: the next :func:`udhr_texts` unpacks the archive again."""
    _UDHR_TEXTS.clear()


def _unpack_udhr(should_stop: Callable[[], bool] | None) -> dict[str, str]:
    data, _ = _udhr_archive()
    try:
        with tarfile.open(fileobj=io.BytesIO(_unxz(data, should_stop=should_stop))) as tf:
            out = {}
            for m in tf:
                if should_stop is not None and should_stop():
                    raise Cancelled()
                f = tf.extractfile(m)
                if f is not None and m.name.endswith(".txt"):
                    out[m.name[: -len(".txt")]] = f.read().decode("utf-8")
    except (lzma.LZMAError, tarfile.TarError, UnicodeDecodeError) as exc:
        raise SampleError(f"{udhr_dir() / 'udhr.tar.xz'}: damaged ({exc})") from None
    return out


def udhr_corpus(
    *,
    stages: Collection[int] | None = (COMPLETE_STAGE,),
    scripts: Collection[str] | None = None,
    regions: Collection[str] | None = None,
    complete: bool = False,
    should_stop: Callable[[], bool] | None = None,
) -> Corpus:
    """The Universal Declaration of Human Rights: by default its 527 complete translations.

    ``stages=None`` keeps the five fragments too (stages 1 and 3; their premiums compare a
    fragment with the whole English text). English is the baseline whatever is filtered.
    ``should_stop`` is asked while the texts are unpacked (the first time in a process).
    """
    texts = udhr_texts(should_stop)
    entries = [CorpusText(lang, Sample(lang.code, text=texts[lang.code])) for lang in udhr_languages()]
    corpus = _make("udhr", f"UDHR {UDHR_VERSION}", entries)
    return corpus.filter(stages=stages, scripts=scripts, regions=regions, complete=complete)


def udhr_source_dir() -> Path:
    """A folder with ``<code>.txt`` for every UDHR translation, extracted on first use.

    The folder is named by the archive's hash, so a new bundle never meets old files; a
    folder with a missing or changed file is rebuilt, by :func:`~bpeinspect.core.io.atomic.atomic_folder`
    (a temporary folder renamed into place), so a reader never sees half of it. A folder found
    whole is not read again in this process.
    """
    _, digest = _udhr_archive()
    root = cache_dir()
    final = root / f"udhr-{UDHR_VERSION}-{digest[:12]}"
    if final in _checked_dirs:
        return final
    texts = {code: text.encode("utf-8") for code, text in udhr_texts().items()}
    if _complete_dir(final, texts):
        _checked_dirs.add(final)
        return final
    try:
        root.mkdir(parents=True, exist_ok=True)
        with atomic_folder(final) as tmp:
            for code, data in texts.items():
                (tmp / f"{code}.txt").write_bytes(data)
    except OSError as exc:
        if not _complete_dir(final, texts):  # unless another process won the race
            raise SampleError(f"{root}: cannot extract the UDHR texts: {exc.strerror or exc}") from None
    _checked_dirs.add(final)
    return final


_checked_dirs: set[Path] = set()


def _complete_dir(folder: Path, texts: dict[str, bytes]) -> bool:
    return all(_holds(folder / f"{code}.txt", data) for code, data in texts.items())


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def find_language(code: str) -> Language | None:
    """The UDHR's metadata for a language code (BCP 47, ISO 639-3 or the UDHR's own), if any.

    >>> find_language("fr").code, find_language("deu").code, find_language("pt").code
    ('fra', 'deu_1901', 'por_BR')
    """
    key = code.replace("_", "-").lower()
    langs = [lang for lang in udhr_languages() if lang.stage == COMPLETE_STAGE]

    def best(found: list[Language]) -> Language | None:
        # the plain translation (code == ISO 639-3) before regional or dated variants
        return min(found, key=lambda g: (g.code != g.iso639_3, len(g.code), g.code)) if found else None

    return (
        best([g for g in langs if g.code.lower() == code.lower()])
        or best([g for g in langs if g.bcp47.lower() == key])
        or best([g for g in langs if g.iso639_3 == key])
        or best([g for g in langs if g.bcp47.lower().split("-")[0] == key])
    )


# -- the fable and folders -------------------------------------------------------------------------


def _language_for(code: str, *, name: str | None = None, script: str | None = None, text: str = "") -> Language:
    """A sample's language: UDHR metadata found by its code (location, direction), or just the name."""
    found = find_language(code) if _looks_like_code(code) else None
    if found is not None:
        return replace(
            found,
            code=code,
            name=name or found.name,
            script=script or dominant_script(text) or found.script,
            stage=None,
            articles=None,
            preamble=None,
        )
    return Language(code, name or code, script if script is not None else dominant_script(text))


def _looks_like_code(name: str) -> bool:
    return 2 <= len(name) <= 16 and name.replace("_", "-").split("-")[0].isalpha() and name.isascii()


def fable_corpus() -> Corpus:
    """The fable bpeinspect ships, in its 27 languages (``resources/samples``)."""
    entries = []
    for s in load_samples():
        name, script = LANGUAGES.get(s.name, (None, None))
        lang = _language_for(s.name, name=name, script=script, text="" if script else s.read())
        entries.append(CorpusText(lang, s))
    return _make("fable", "The Miller's Cat (fable)", entries)


def folder_corpus(folder: str | os.PathLike[str]) -> Corpus:
    """One text per file of a folder, named by the file's stem; the script is read from the text.

    A stem that is a language code (``de.txt``, ``cmn_hans.txt``) gets the UDHR's metadata
    for that language (name, location, direction); ``en``/``eng`` is the baseline.
    """
    entries = []
    for s in load_samples(folder):
        entries.append(CorpusText(_language_for(s.name, text=_head(s)), s))
    return _make("folder", str(folder), entries)


def _head(sample: Sample) -> str:
    """The start of a file sample, enough to tell its script (long files are not read whole)."""
    assert sample.path is not None
    try:
        with open(sample.path, "rb") as f:
            return f.read(1 << 18).decode("utf-8", "ignore")
    except OSError as exc:
        raise SampleError(f"{sample.path}: cannot read: {exc.strerror or exc}") from None


FOLDER_PREFIX = "folder:"  # a corpus named by its folder: "folder:PATH"
CORPUS_NAMES = ("udhr", "udhr-all", "fable", "code")  # the bundled corpora, by name


def load_corpus(name: str, *, fragments: bool = False, should_stop: Callable[[], bool] | None = None) -> Corpus:
    """The corpus ``name`` names: ``"udhr"`` (its complete translations; with ``fragments``,
    its fragments too), ``"udhr-all"`` (fragments too), ``"fable"``, ``"code"`` (the bundled
    code and data samples), or a folder, as ``"folder:PATH"`` or its path. ``should_stop`` is
    asked while the UDHR is unpacked.

    >>> load_corpus("udhr").codes == udhr_corpus().codes
    True
    >>> len(load_corpus("udhr", fragments=True)) - len(load_corpus("udhr"))
    5
    """
    if name == "udhr":
        return udhr_corpus(stages=None if fragments else (COMPLETE_STAGE,), should_stop=should_stop)
    if name == "udhr-all":
        return udhr_corpus(stages=None, should_stop=should_stop)
    if name == "fable":
        return fable_corpus()
    if name == "code":
        return replace(folder_corpus(samples_dir() / "code"), title="Code & data samples")
    return folder_corpus(name.removeprefix(FOLDER_PREFIX))


__all__ = [
    "CACHE_ENV",
    "COMPLETE_STAGE",
    "CORPUS_NAMES",
    "FOLDER_PREFIX",
    "REGIONS",
    "Corpus",
    "CorpusText",
    "Language",
    "cache_dir",
    "fable_corpus",
    "find_language",
    "folder_corpus",
    "forget_udhr_texts",
    "load_corpus",
    "udhr_corpus",
    "udhr_languages",
    "udhr_source_dir",
    "udhr_texts",
]
