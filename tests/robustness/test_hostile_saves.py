"""A save killed with SIGKILL leaves no temporary file for good, and a
two-file save (GPT-2's encoder.json + vocab.bpe, minbpe's .model + .vocab) is all-or-nothing.

Each save runs in a child Python that kills itself (SIGKILL: no ``finally``, no cleanup) at
one exact point of the save: while writing, after its data is on disk but before the
rename, or between the two renames of a pair. The old code left ``.NAME.XXXX.tmp`` files that
no later save removed, and a pair killed between its renames loaded as a new encoder.json
beside the old vocab.bpe (or not at all).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bpeinspect.core import train_tokenizer
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io import atomic
from bpeinspect.core.io.formats import load_path, save

from .seeds import SAMPLE, small_tokenizer

ROOT = Path(__file__).resolve().parents[2]
FORMAT_NAMES = ["x.tiktoken", "tokenizer.json", "x.json", "x.model", "encoder.json"]
PAIRS = {"x.model": ["x.model", "x.vocab"], "encoder.json": ["encoder.json", "vocab.bpe"]}

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL")]


def killed_save(target: Path, *, at: str, nth: int = 1, named: bool = False) -> None:
    """Save a tokenizer other than the one at ``target`` in a child that SIGKILLs itself at
    the ``nth`` call of ``at`` (``write``: while writing the data; ``fsync``: the data is
    written; ``replace``: a rename into place). ``named``: as on a system without O_TMPFILE."""
    script = textwrap.dedent(f"""
        import os, signal
        from bpeinspect.core import train_tokenizer
        from bpeinspect.core.io import atomic
        from bpeinspect.core.io.formats import save
        from tests.robustness.seeds import SAMPLE
        tok = train_tokenizer(SAMPLE[::-1], 300, pattern="gpt2", special_tokens=["<|x|>"])
        if hasattr(atomic, "_Unnamed"):
            atomic._Unnamed.works = {not named!r} and atomic._Unnamed.works
        calls = [0]
        def kill_at(real):
            def wrapper(*args, **kwargs):
                calls[0] += 1
                if calls[0] == {nth}:
                    os.kill(os.getpid(), signal.SIGKILL)
                return real(*args, **kwargs)
            return wrapper
        if {at!r} == "write":
            real_fdopen = os.fdopen
            def fdopen(*args, **kwargs):
                f = real_fdopen(*args, **kwargs)
                class Half:
                    def __getattr__(self, name):
                        return getattr(f, name)
                    def __enter__(self):
                        return self
                    def __exit__(self, *exc):
                        return f.__exit__(*exc)
                    def write(self, data):
                        f.write(data[: len(data) // 2]); f.flush()
                        os.kill(os.getpid(), signal.SIGKILL)
                return Half()
            os.fdopen = fdopen
        else:
            setattr(os, {at!r}, kill_at(getattr(os, {at!r})))
        save(tok, {str(target)!r})
        print("not killed")
    """)  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-P", "-c", script], check=False, capture_output=True, text=True, env=env, timeout=100)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr[-2000:])


def files_of(name: str) -> list[str]:
    return sorted(PAIRS.get(name, [name]))


@pytest.fixture(scope="module")
def other():
    """What the killed child saves (the same training, here)."""
    return train_tokenizer(SAMPLE[::-1], 300, pattern="gpt2", special_tokens=["<|x|>"])


def encodes(path: Path) -> list[int]:
    return load_path(path).encode(SAMPLE, allowed_special="all")


# -- nothing left behind ------------------------------------------------------------------------


@pytest.mark.parametrize("name", FORMAT_NAMES)
@pytest.mark.parametrize("at", ["write", "fsync"])
def test_a_kill_while_saving_leaves_no_temporary_file(tmp_path, name, at):
    if not atomic._Unnamed.works or not hasattr(os, "O_TMPFILE"):
        pytest.skip("no unnamed files (O_TMPFILE) here")
    target = tmp_path / name
    written = save(small_tokenizer(), target)
    before = encodes(written)
    killed_save(target, at=at)
    if name not in PAIRS:
        assert sorted(os.listdir(tmp_path)) == files_of(name), "a temporary file was left"
    assert encodes(written) == before  # a pair stages named files: loading it removes them
    assert sorted(os.listdir(tmp_path)) == files_of(name), "a temporary file was left"


@pytest.mark.parametrize("name", FORMAT_NAMES)
@pytest.mark.parametrize(("at", "named"), [("write", True), ("fsync", True), ("replace", False)])
def test_the_next_save_removes_what_a_killed_save_left(tmp_path, name, at, named, other):
    target = tmp_path / name
    written = save(small_tokenizer(), target)
    killed_save(target, at=at, named=named)
    save(other, target)
    assert sorted(os.listdir(tmp_path)) == files_of(name)
    assert encodes(written) == other.encode(SAMPLE, allowed_special="all")


def test_temporary_files_of_live_processes_and_others_are_kept(tmp_path):
    target = tmp_path / "x.json"
    mine = tmp_path / f".x.json.{os.getpid()}.abcd1234.tmp"  # a save in progress (this process)
    foreign = tmp_path / ".x.json.tmp"  # not of our naming
    other_name = tmp_path / ".y.json.999999.abcd1234.tmp"  # another file's
    for p in (mine, foreign, other_name):
        p.write_text("x")
    dead = tmp_path / f".x.json.{_dead_pid()}.abcd1234.tmp"
    dead.write_text("x")
    save(small_tokenizer(), target)
    assert not dead.exists()
    assert mine.exists() and foreign.exists() and other_name.exists()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# -- a pair is all-or-nothing ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_a_pair_killed_between_its_renames_loads_whole(tmp_path, name, other):
    target = tmp_path / name
    written = save(small_tokenizer(), target)
    killed_save(target, at="replace", nth=2, named=True)  # the first file renamed, the second not
    # the next load finishes the save: both new files, nothing else left
    assert encodes(written) == other.encode(SAMPLE, allowed_special="all")
    assert sorted(os.listdir(tmp_path)) == files_of(name)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_a_pair_killed_before_its_renames_loads_old(tmp_path, name):
    target = tmp_path / name
    written = save(small_tokenizer(), target)
    before = encodes(written)
    killed_save(target, at="fsync", nth=2, named=True)  # the second file staged, no journal yet
    assert encodes(written) == before
    assert sorted(os.listdir(tmp_path)) == files_of(name)


def test_a_pair_that_cannot_be_finished_is_refused_not_loaded_half(tmp_path, monkeypatch):
    # a new encoder.json beside the old vocab.bpe: here refused for a misleading reason (a merge
    # makes a token encoder.json lacks); when the new vocabulary extends the old one it loads,
    # half old and half new, with only a warning. The loader must see the unfinished save.
    target = tmp_path / "encoder.json"
    save(train_tokenizer(SAMPLE, 300, pattern="gpt2"), target)
    killed_save(target, at="replace", nth=2, named=True)
    assert len(atomic.unfinished_saves(tmp_path, ("encoder.json", "vocab.bpe"))) == 1

    def denied(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as m:
        m.setattr(atomic.os, "replace", denied)  # as in a folder the loading user cannot write
        m.setattr(atomic.os, "unlink", denied)
        with pytest.raises(VocabularyError, match="between its two renames") as info:
            load_path(target)
        assert str(tmp_path) in str(info.value)
    assert encodes(target) == train_tokenizer(SAMPLE[::-1], 300, pattern="gpt2", special_tokens=["<|x|>"]).encode(
        SAMPLE, allowed_special="all"
    )  # where it can be written, the load finishes the save
    assert sorted(os.listdir(tmp_path)) == files_of("encoder.json")


def test_a_pair_being_saved_by_a_live_process_is_not_loaded_half(tmp_path):
    target = tmp_path / "encoder.json"
    save(small_tokenizer(), target)
    staged = tmp_path / f".vocab.bpe.{os.getpid()}.abcd1234.tmp"  # this process, between its renames
    staged.write_text("#version: 0.2\n", encoding="utf-8")
    (tmp_path / f".encoder.json.{os.getpid()}.journal").write_text(f"{staged.name}\tvocab.bpe\nend\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match="still running"):
        load_path(target)
    staged.unlink()  # renamed: the pair is whole again
    assert load_path(target).n_vocab == small_tokenizer().n_vocab
