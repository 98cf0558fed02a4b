"""The corpora: the bundled UDHR (metadata, clean text, cache extraction), the fable, folders, filters."""

from __future__ import annotations

import math
import os
import re
import socket

import pytest

from bpeinspect.core.analysis.corpus import (
    CACHE_ENV,
    REGIONS,
    Corpus,
    cache_dir,
    fable_corpus,
    find_language,
    folder_corpus,
    load_corpus,
    udhr_corpus,
    udhr_languages,
    udhr_source_dir,
    udhr_texts,
)
from bpeinspect.core.analysis.samples import SampleError
from bpeinspect.core.analysis.worldmap import coastline_xy, coastlines
from bpeinspect.core.scripts import dominant_script


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def offline(monkeypatch):
    """Any attempt to open a network connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# -- the bundled UDHR ------------------------------------------------------------------------------


def test_table_and_archive_hold_the_same_532_translations():
    langs = udhr_languages()
    assert len(langs) == 532
    assert {g.code for g in langs} == set(udhr_texts())
    assert sum(g.stage == 4 for g in langs) == 527
    for g in langs:
        assert g.name and g.script and g.iso639_3 and g.bcp47
        assert g.direction in ("ltr", "rtl")
        assert g.region in (*REGIONS, "")
        assert (g.latitude is None) == (g.longitude is None) == (g.region == "")
        if g.located:
            assert -90 <= g.latitude <= 90 and -180 <= g.longitude <= 180


def test_table_script_is_the_texts_script():
    texts = udhr_texts()
    for g in udhr_languages():
        assert dominant_script(texts[g.code], limit=len(texts[g.code])) == g.script, g.code


@pytest.mark.parametrize(
    ("code", "facts", "first", "article"),
    [
        ("eng", ("Latin", "ltr", "Europe"), "Universal Declaration of Human Rights", "Article 1"),
        ("arb", ("Arabic", "rtl", "Asia"), "الإعلان العالمي لحقوق الإنسان", "المادة 1"),
        ("cmn_hans", ("Han", "ltr", "Asia"), "世界人权宣言", "第一条"),
        ("hin", ("Devanagari", "ltr", "Asia"), "मानव अधिकारों की सार्वभौम घोषणा", "अनुच्छेद १."),
        ("amh", ("Ethiopic", "ltr", "Africa"), "ስለሰብአዊ፡መብቶች፡ለማስተማር፡ የሚረዱ፡አንዳንድ፡ዘዴዎች።", "አንቀጽ፡፩፤"),
        ("jpn", ("Kanji and kana", "ltr", "Asia"), "『世界人権宣言』", "第１条"),
    ],
)
def test_texts_are_clean_with_their_structure(code, facts, first, article):
    text = udhr_texts()[code]
    lang = udhr_corpus().language(code)
    assert (lang.script, lang.direction, lang.region) == facts
    assert text.startswith(first + "\n\n")
    assert f"\n\n{article}\n" in text
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert not re.search(r"<[a-z/]|&[a-z#0-9]+;|[\x80-\x9f]", text)


def test_english_has_preamble_then_thirty_articles_in_order():
    sections = udhr_texts()["eng"].rstrip("\n").split("\n\n")
    assert sections[1].startswith("Preamble\nWhereas recognition of the inherent dignity")
    assert [s.split("\n")[0] for s in sections[2:]] == [f"Article {n}" for n in range(1, 31)]
    assert sections[-1].endswith("any of the rights and freedoms set forth herein.")


def test_every_complete_text_has_its_articles_as_sections():
    for t in udhr_corpus():
        lang = t.language
        blocks = udhr_texts()[lang.code].split("\n\n")
        assert len(blocks) >= lang.articles + int(lang.preamble), lang.code


def test_source_dir_holds_the_exact_texts_and_is_reused(cache, offline):
    folder = udhr_source_dir()
    assert folder.parent == cache == cache_dir()
    for code, text in udhr_texts().items():
        assert (folder / f"{code}.txt").read_bytes() == text.encode("utf-8")
    (folder / "eng.txt").write_text("damaged", "utf-8")  # a changed file is noticed and rewritten
    assert udhr_corpus().source_path("eng") == folder / "eng.txt"
    assert (folder / "eng.txt").read_text("utf-8") == udhr_texts()["eng"]
    (folder / "kor.txt").unlink()
    assert udhr_corpus().source_path("kor").read_text("utf-8") == udhr_texts()["kor"]
    assert [p.name for p in cache.iterdir()] == [folder.name]  # no temporary folders left


def test_the_source_dir_has_the_usual_mode_not_0700(cache, offline):
    old = os.umask(0o022)
    try:
        folder = udhr_source_dir()
    finally:
        os.umask(old)
    assert folder.stat().st_mode & 0o777 == 0o755
    assert {(folder / f).stat().st_mode & 0o777 for f in ("eng.txt", "kor.txt")} == {0o644}


def test_source_path_of_each_kind(cache):
    assert udhr_corpus().source_path("kor") == cache_dir() / udhr_source_dir().name / "kor.txt"
    assert fable_corpus().source_path("ko").name == "ko.txt"


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if cache_dir().parent == tmp_path:  # Linux and other XDG systems
        assert cache_dir() == tmp_path / "bpeinspect"


# -- filters ---------------------------------------------------------------------------------------


def test_udhr_default_is_the_complete_stage():
    assert len(udhr_corpus()) == 527
    assert len(udhr_corpus(stages=None)) == 532
    assert {t.language.stage for t in udhr_corpus(stages={1})} == {1}
    assert load_corpus("udhr-all").codes == udhr_corpus(stages=None).codes


def test_filters_combine_and_keep_the_baseline():
    udhr = udhr_corpus()
    cyrillic_asia = udhr.filter(scripts={"Cyrillic"}, regions={"Asia"})
    assert len(cyrillic_asia) and all(
        t.language.script == "Cyrillic" and t.language.region == "Asia" for t in cyrillic_asia
    )
    assert "eng" not in cyrillic_asia.codes and cyrillic_asia.baseline.code == "eng"
    assert cyrillic_asia.language("eng").name == "English"  # still reachable for premiums
    europe = udhr.filter(regions={"Europe"})
    assert "eng" in europe.codes and "jpn" not in europe.codes
    complete = udhr.filter(complete=True)
    assert len(complete) == 499 and "amh" not in complete.codes
    assert udhr.filter(codes={"eng", "fra"}).codes == ["eng", "fra"]
    assert udhr.filter(scripts={"Klingon"}).codes == []


def test_scripts_and_regions_lists():
    udhr = udhr_corpus()
    assert udhr.scripts[0] == "Latin" and "Ethiopic" in udhr.scripts
    assert udhr.regions == list(REGIONS)


# -- the fable and folders -------------------------------------------------------------------------


def test_fable_languages_get_udhr_locations():
    fable = fable_corpus()
    assert len(fable) == 27 and fable.baseline.code == "en" and fable.kind == "fable"
    ko = fable.language("ko")
    assert (ko.name, ko.script, ko.region) == ("Korean", "Hangul", "Asia")
    assert fable.language("ar").direction == "rtl" and fable.language("he").direction == "rtl"
    assert all(t.language.located for t in fable)


def test_find_language_by_any_code():
    assert find_language("en").code == "eng"
    assert find_language("zh").code == "cmn_hans"
    assert find_language("cmn_hant").code == "cmn_hant"
    assert find_language("xx-nothing") is None


def test_folder_corpus_reads_scripts_and_finds_english(tmp_path):
    (tmp_path / "en.txt").write_text("The cat sat on the mat.", "utf-8")
    (tmp_path / "ru.txt").write_text("Кошка сидела на коврике.", "utf-8")
    (tmp_path / "notes.txt").write_text("ἐν ἀρχῇ ἦν ὁ λόγος", "utf-8")
    c = folder_corpus(tmp_path)
    assert c.kind == "folder" and not c.bundled and c.baseline.code == "en"
    assert [(t.code, t.language.name, t.language.script) for t in c] == [
        ("en", "English", "Latin"),
        ("notes", "notes", "Greek"),
        ("ru", "Russian", "Cyrillic"),
    ]
    assert c.source_path("ru") == tmp_path / "ru.txt"
    assert load_corpus(str(tmp_path)).codes == c.codes


def test_folder_without_english_has_no_baseline(tmp_path):
    (tmp_path / "a.txt").write_text("x", "utf-8")
    assert folder_corpus(tmp_path).baseline is None
    with pytest.raises(SampleError):
        folder_corpus(tmp_path / "missing")


def test_corpus_is_a_plain_value():
    c = udhr_corpus().filter(codes={"eng"})
    assert isinstance(c, Corpus) and len(c) == 1 and [t.code for t in c] == ["eng"]
    with pytest.raises(KeyError):
        c.language("nope")


# -- the world map ---------------------------------------------------------------------------------


def test_coastlines_outline_the_land_without_wrapping():
    lines = coastlines()
    assert len(lines) == 137 and sum(len(xs) for xs, _ in lines) > 5000
    for xs, ys in lines:
        assert len(xs) == len(ys) >= 1
        assert all(abs(a - b) <= 180 for a, b in zip(xs, xs[1:]))  # no line jumps across the map
    xs, ys = coastline_xy()
    assert sum(math.isnan(x) for x in xs) == len(lines) - 1 == sum(math.isnan(y) for y in ys)
    # every located language lies within the map's extent
    for t in udhr_corpus(stages=None):
        g = t.language
        if g.located:
            assert -60 < g.latitude < 85 and -180 <= g.longitude <= 180, g.code


def test_the_udhr_is_unpacked_with_checks_between_pieces_and_texts() -> None:
    """The languages view's worker unpacks it at the view's first open, beside the window's
    first paint of the view: it asks ``should_stop`` (and gives way there), and stops when told."""
    from bpeinspect.core import Cancelled
    from bpeinspect.core.analysis import corpus as corpus_module

    whole = dict(corpus_module.udhr_texts())
    corpus_module.forget_udhr_texts()
    try:
        with pytest.raises(Cancelled):
            corpus_module.udhr_texts(lambda: True)
        with pytest.raises(Cancelled):
            corpus_module.load_corpus("udhr", should_stop=lambda: True)
        asked: list[int] = []
        assert corpus_module.udhr_texts(lambda: asked.append(1) or False) == whole
        assert len(asked) > len(whole)  # a check per text, and per piece of the archive
        asked.clear()
        assert corpus_module.udhr_texts(lambda: asked.append(1) or False) is corpus_module.udhr_texts()
        assert not asked  # unpacked once per process
    finally:
        corpus_module.forget_udhr_texts()
    assert corpus_module._unxz(__import__("lzma").compress(b"x" * 100_000), piece=1000) == b"x" * 100_000
