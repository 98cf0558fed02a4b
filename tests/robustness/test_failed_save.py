"""A save that fails part-way never replaces a good file and leaves no temporary file behind.

Failures are injected with monkeypatch where a real disk fails: while writing (disk full),
at fsync, at the final rename, and as a KeyboardInterrupt in the middle of writing.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from bpeinspect.core import train_tokenizer
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.discover import add_recent, recent_files
from bpeinspect.core.io.formats import load_path, save
from bpeinspect.core.train.counts import read_counts_tsv, write_counts_tsv

from .seeds import SAMPLE, small_tokenizer

pytestmark = pytest.mark.timeout(120)

FORMAT_NAMES = ["x.tiktoken", "tokenizer.json", "x.model", "x.json", "encoder.json"]
FAILURES = ["write", "fsync", "replace-first", "interrupt"]
TWO_FILE_NAMES = ["x.model", "encoder.json"]  # minbpe's .model + .vocab, GPT-2's encoder.json + vocab.bpe


def disk_full() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FailingFile:
    """Wraps a real file: lets ``allow`` bytes through, then fails the way ``exc`` says."""

    def __init__(self, f, allow: int, exc: BaseException) -> None:
        self.f, self.allow, self.exc = f, allow, exc

    def write(self, data):
        if len(data) > self.allow:
            self.f.write(data[: self.allow])  # half of it reaches the disk
            self.allow = 0
            raise self.exc
        self.allow -= len(data)
        return self.f.write(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.f.__exit__(*exc)


def inject(monkeypatch, how: str) -> type[BaseException]:
    """Make the next saves fail as ``how`` says; returns the exception type to expect."""
    if how in ("write", "interrupt"):
        real_fdopen = os.fdopen
        exc = disk_full() if how == "write" else KeyboardInterrupt()

        def fdopen(fd, mode="r", *args, **kwargs):
            f = real_fdopen(fd, mode, *args, **kwargs)
            return FailingFile(f, 20, exc) if "w" in mode else f

        monkeypatch.setattr(os, "fdopen", fdopen)
        return OSError if how == "write" else KeyboardInterrupt
    if how == "fsync":

        def fsync(fd):
            raise disk_full()

        monkeypatch.setattr(os, "fsync", fsync)
        return OSError
    real_replace = os.replace
    calls = {"n": 0}

    def replace(src, dst, *args, **kwargs):
        calls["n"] += 1
        # "replace-last" lets the first rename of a two-file format through and fails the second
        # (once: the rename that puts the first file back must work, or nothing could undo it)
        if how == "replace-first" or (how == "replace-last" and calls["n"] == 2):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return OSError


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def other_tokenizer():
    """Different from the one already on disk, so a half-done save would show."""
    return train_tokenizer(SAMPLE[::-1], 300, pattern="gpt2", special_tokens=["<|x|>"])


@pytest.mark.parametrize(
    ("name", "how"),
    [(n, h) for n in FORMAT_NAMES for h in FAILURES] + [(n, "replace-last") for n in TWO_FILE_NAMES],
)
def test_failed_save_keeps_the_good_file(tmp_path, monkeypatch, name, how, other_tokenizer):
    good = small_tokenizer()
    target = tmp_path / name
    written = save(good, target)
    before = snapshot(tmp_path)
    expected_ids = load_path(written).encode(SAMPLE, allowed_special="all")

    expect = inject(monkeypatch, how)
    with pytest.raises((expect, VocabularyError)) as info:
        save(other_tokenizer, target)
    monkeypatch.undo()

    if expect is OSError:
        assert isinstance(info.value, VocabularyError), "an OSError must reach the user as a VocabularyError"
        assert name in str(info.value) or str(tmp_path) in str(info.value)
    assert snapshot(tmp_path) == before, "the good file changed, or a temporary file was left"
    assert load_path(written).encode(SAMPLE, allowed_special="all") == expected_ids


@pytest.mark.parametrize(("name", "how"), [(n, h) for n in FORMAT_NAMES for h in FAILURES])
def test_failed_save_of_a_new_file_leaves_nothing(tmp_path, monkeypatch, name, how):
    inject(monkeypatch, how)
    with pytest.raises((OSError, KeyboardInterrupt, VocabularyError)):
        save(small_tokenizer(), tmp_path / name)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("how", ["write", "fsync", "replace-first", "interrupt"])
def test_counts_table_and_recent_list(tmp_path, monkeypatch, how):
    counts = {b"hello": 3, b" world": 2}
    tsv = tmp_path / "counts.tsv"
    write_counts_tsv(counts, tsv)
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    add_recent(tsv, "counts", 2)
    recent_before = recent_files()
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    inject(monkeypatch, how)
    raised = []
    for attempt in (
        lambda: write_counts_tsv({b"other": 1}, tsv),
        lambda: add_recent(tmp_path / "another.tiktoken", "another", 5),
    ):
        try:
            attempt()
        except (OSError, KeyboardInterrupt):
            raised.append(True)
        else:
            raised.append(False)
    monkeypatch.undo()
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    after = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert set(after) == set(before), "a temporary file was left (or a file vanished)"
    # Each file is entirely the old one or entirely the new one, never a mix; after an error, the old.
    if raised[0] or how != "fsync":
        assert raised[0] and read_counts_tsv(tsv) == counts
    else:
        assert read_counts_tsv(tsv) == {b"other": 1}
    names = [e.name for e in recent_files()]
    if raised[1]:
        assert recent_files() == recent_before
    else:  # the recent list is best effort: it may keep the old list quietly
        assert names in ([e.name for e in recent_before], ["another", "counts"])


@pytest.mark.parametrize("how", ["write", "replace-first", "interrupt"])
def test_gui_text_save_and_export(tmp_path, monkeypatch, how):
    from bpeinspect.core.io.atomic import atomic_write  # what the window saves texts and exports with

    target = tmp_path / "notes.txt"
    target.write_bytes(b"the good text\n")
    expect = inject(monkeypatch, how)
    with pytest.raises(expect):
        atomic_write(target, b"new text " * 1000)
    monkeypatch.undo()
    assert snapshot(tmp_path) == {"notes.txt": b"the good text\n"}
