"""Atomic saves: the old file survives any failure, and no temporary files are left."""

from __future__ import annotations

import os

import pytest

from bpeinspect.core.io.atomic import atomic_open, atomic_write
from bpeinspect.core.io.formats import save


def test_replaces_and_keeps_mode(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")
    os.chmod(p, 0o640)
    atomic_write(p, "new")
    assert p.read_text() == "new"
    assert p.stat().st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["f.txt"]


def test_failure_keeps_the_old_file(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(p, "w", encoding="utf-8") as f:
        f.write("half of the new")
        raise RuntimeError("disk on fire")
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_saver_failure_midway_keeps_the_old_file(tmp_path, monkeypatch):
    from bpeinspect.core import load_tokenizer
    from bpeinspect.core.io.formats import huggingface

    p = tmp_path / "tokenizer.json"
    p.write_text("precious")

    def boom(tok):
        raise MemoryError("out of memory while serialising")

    monkeypatch.setattr(huggingface, "dumps", boom)
    with pytest.raises(MemoryError):
        save(load_tokenizer("gpt2"), p)
    assert p.read_text() == "precious"
    assert os.listdir(tmp_path) == ["tokenizer.json"]


def test_rejects_append_mode(tmp_path):
    with pytest.raises(ValueError, match="whole files"), atomic_open(tmp_path / "x", "a"):
        pass
