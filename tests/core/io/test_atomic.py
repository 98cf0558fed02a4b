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


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_new_files_get_the_umask_mode_not_0600(tmp_path, umask_022):
    from bpeinspect.core.io.atomic import atomic_path, atomic_write_many
    from bpeinspect.core.train.counts import write_counts_tsv

    atomic_write(tmp_path / "a", b"x")
    with atomic_path(tmp_path / "b.png", suffix=".png") as tmp:
        tmp.write_bytes(b"png")
    atomic_write_many({tmp_path / "c": b"1", tmp_path / "d": b"2"})
    write_counts_tsv({b"hi": 1}, tmp_path / "e.tsv")
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == dict.fromkeys(["a", "b.png", "c", "d", "e.tsv"], 0o644)


@pytest.mark.parametrize("fail", ["raise", "write nothing"])
def test_atomic_path_leaves_no_temporary_file_when_the_writer_fails(tmp_path, fail):
    from bpeinspect.core.io.atomic import atomic_path

    p = tmp_path / "plot.svg"
    p.write_text("old")
    with pytest.raises((RuntimeError, OSError)), atomic_path(p, suffix=".svg") as tmp:
        assert tmp.parent == tmp_path and tmp.name.endswith(".svg")
        if fail == "raise":
            tmp.write_text("half")
            raise RuntimeError("exporter failed")
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["plot.svg"]


def test_write_many_leaves_no_temporary_file_when_one_write_fails(tmp_path):
    from bpeinspect.core.io.atomic import atomic_write_many

    (tmp_path / "a").write_text("old a")
    with pytest.raises(TypeError):
        atomic_write_many({tmp_path / "a": b"new a", tmp_path / "b": 12345})  # type: ignore[dict-item]
    assert (tmp_path / "a").read_text() == "old a"
    assert os.listdir(tmp_path) == ["a"]


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_folder_is_replaced_whole_with_the_umask_mode(tmp_path, umask_022):
    from bpeinspect.core.io.atomic import atomic_folder

    target = tmp_path / "texts"
    target.mkdir()
    (target / "old.txt").write_text("old")
    killed = tmp_path / f".texts.{_dead_pid()}.abcd1234.tmp"  # a killed process's half-made folder
    killed.mkdir()
    (killed / "half.txt").write_text("half")
    with pytest.raises(RuntimeError), atomic_folder(target) as tmp:
        (tmp / "a.txt").write_text("new")
        raise RuntimeError("extraction failed")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    assert os.listdir(tmp_path) == ["texts"]  # the killed one went too
    with atomic_folder(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".texts.")
        (tmp / "a.txt").write_text("new")
    assert [p.name for p in target.iterdir()] == ["a.txt"] and os.listdir(tmp_path) == ["texts"]
    assert target.stat().st_mode & 0o777 == 0o755 and (target / "a.txt").stat().st_mode & 0o777 == 0o644


# A target that is not a regular file (a device, a named pipe, a link to one) is written
# straight through, as ``sort -o`` does: never replaced by a regular file.


def test_a_named_pipe_is_written_through_not_replaced(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)  # noqa: SIM115
    reader.start()
    atomic_write(fifo, b"through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"]
    assert os.path.exists(fifo) and not os.path.isfile(fifo)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]


def test_a_link_to_a_device_stays_a_link_to_the_device(tmp_path):
    link = tmp_path / "null"
    os.symlink(os.devnull, link)
    atomic_write(link, b"gone")
    assert os.path.islink(link) and os.readlink(link) == os.devnull
    assert sorted(os.listdir(tmp_path)) == ["null"]


def test_an_open_descriptor_path_writes_to_that_descriptor(tmp_path):
    # what a shell's process substitution gives: -o >(gzip > out.gz) is /dev/fd/N
    read_end, write_end = os.pipe()
    try:
        atomic_write(f"/dev/fd/{write_end}", b"substituted")
        os.close(write_end)
        write_end = -1
        assert os.read(read_end, 100) == b"substituted"
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_a_descriptor_link_to_a_regular_file_writes_at_its_offset(tmp_path):
    out = tmp_path / "out.txt"
    with open(out, "ab") as f:
        f.write(b"before\n")
        f.flush()
        atomic_write(f"/proc/self/fd/{f.fileno()}", b"after\n")
    assert out.read_bytes() == b"before\nafter\n"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_an_exporter_path_on_a_device_writes_through(tmp_path):
    from bpeinspect.core.io.atomic import atomic_path

    link = tmp_path / "null.svg"
    os.symlink(os.devnull, link)
    with atomic_path(link, suffix=".svg") as tmp:
        tmp.write_text("<svg/>")
    assert os.path.islink(link)
    assert sorted(os.listdir(tmp_path)) == ["null.svg"]


def test_a_pair_on_a_device_is_refused_in_one_line(tmp_path):
    from bpeinspect.core.io.atomic import atomic_write_many

    link = tmp_path / "vocab.bpe"
    os.symlink(os.devnull, link)
    with pytest.raises(OSError, match="not a regular file") as info:
        atomic_write_many({tmp_path / "encoder.json": b"{}", link: b"x"})
    assert "\n" not in str(info.value)
    assert os.path.islink(link) and not (tmp_path / "encoder.json").exists()



def test_a_state_file_written_not_through_replaces_a_pipe_in_its_place(tmp_path):
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    atomic_write(fifo, b"{}", through=False)  # would wait for a reader for ever if written through
    assert fifo.is_file() and fifo.read_bytes() == b"{}"


def test_a_pipe_named_like_a_journal_does_not_hold_up_loading_a_pair(tmp_path):
    import threading

    from bpeinspect.core.io.atomic import finish_interrupted, unfinished_saves

    os.mkfifo(tmp_path / ".encoder.json.999999.journal")  # a process id that is not running
    done: list = []

    def work():
        done.append((finish_interrupted(tmp_path), unfinished_saves(tmp_path, ("encoder.json",))))

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(20)
    assert done == [([], [])]


def test_a_state_file_is_read_through_a_link_unless_links_are_refused(tmp_path):
    from bpeinspect.core.io.atomic import read_state

    (tmp_path / "real").write_bytes(b"state")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert read_state(tmp_path / "link") == b"state"
    assert read_state(tmp_path / "link", follow_links=False) is None
    assert read_state(tmp_path / "real", 4) is None  # over the limit
