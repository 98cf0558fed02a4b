"""Hostile inputs in the app: the limits hold there too, dropped files included, and damaged
vocabularies of every format, dropped on the window and loaded in its loading worker, never
take the window down."""

from __future__ import annotations

import gzip
import os
import random
from pathlib import Path

import pytest

from bpeinspect.core import limits
from bpeinspect.core.io.formats import save, with_settings
from tests.gui.conftest import wait_idle
from tests.robustness.seeds import small_tokenizer
from tests.robustness.test_fuzz_loaders import SMALL, all_seeds, partners_for, target_name
from tests.robustness.test_hostile_files import rank_lines

pytestmark = pytest.mark.timeout(300)


def drop(window, *paths: Path) -> None:
    """What a drop on the window does with its files."""
    window.files.open_dropped([str(p) for p in paths])


def shows_error(qtbot, window, *words: str) -> str:
    wait_idle(qtbot, window)
    qtbot.waitUntil(window.message.isVisible, timeout=10000)
    text = window.message.text()
    for w in words:
        assert w in text, text
    return text


def still_works(qtbot, window, monkeypatch=None) -> None:
    """The window answers: a built-in loads and encodes a new text (with the usual limits)."""
    if monkeypatch is not None:
        monkeypatch.undo()
    window.open_tokenizer("gpt2")
    window.set_text("still alive")
    wait_idle(qtbot, window)
    tok = window.registry.find("gpt2")
    assert tok is not None and window.registry.result(tok).enc.text == "still alive"


# -- the same limits in the app --------------------------------------------------------------------


@pytest.mark.parametrize("case", ["too many tokens", "expands too far"])
def test_a_dropped_vocabulary_over_the_limits_is_refused(qtbot, window, tmp_path, monkeypatch, case):
    bomb = tmp_path / "bomb.tiktoken.gz"
    if case == "too many tokens":
        monkeypatch.setattr(limits, "MAX_IDS", 1000)
        bomb.write_bytes(gzip.compress(rank_lines(1200)))
    else:
        monkeypatch.setattr(limits, "MAX_VOCAB_FILE", 1 << 16)
        bomb.write_bytes(gzip.compress(rank_lines() + b"\n" * (1 << 17)))
    window.set_text("precious words")
    drop(window, bomb)
    shows_error(qtbot, window, "bomb.tiktoken.gz")
    assert len(window.registry) == 0 and window.text() == "precious words"
    still_works(qtbot, window, monkeypatch)


@pytest.mark.timeout(60)
def test_a_catastrophic_pattern_in_a_dropped_file_is_stopped(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "SPLIT_SECONDS", 0.3)
    monkeypatch.setattr(limits, "SPLIT_SECONDS_PER_CHAR", 0.0)
    vocab = save(with_settings(small_tokenizer(), pattern=r"(a|a)+$"), tmp_path / "evil.json")
    window.set_text("a" * 40 + "!")  # minutes of backtracking without the limit
    drop(window, vocab)
    shows_error(qtbot, window, "time limit")
    still_works(qtbot, window, monkeypatch)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_dropped_text_that_never_ends_is_refused(qtbot, window, tmp_path):
    link = tmp_path / "zero.txt"  # its size is 0: only reading tells
    link.symlink_to("/dev/zero")
    window.set_text("keep me")
    drop(window, link)
    shows_error(qtbot, window, "zero.txt", "more than")
    assert window.text() == "keep me"


# -- fuzzed files through the loading worker -------------------------------------------------------


def mutate(data: bytes, rng: random.Random) -> bytes:
    how = rng.choice(["flip", "cut", "splice", "repeat"])
    if not data:
        return bytes(rng.randrange(256) for _ in range(64))
    at = rng.randrange(len(data))
    if how == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if how == "cut":
        return data[:at]
    if how == "splice":
        return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))) + data[at:]
    return data[:at] + data[at : at + 200] * rng.randint(2, 50) + data[at:]


EXAMPLES = int(os.environ.get("BPEINSPECT_FUZZ_EXAMPLES", "60")) // 6 or 1


@pytest.mark.parametrize("seed_name", SMALL)
def test_fuzzed_vocabularies_dropped_on_the_window_never_take_it_down(qtbot, window, tmp_path, seed_name):
    seeds = all_seeds()
    rng = random.Random(f"hostile18-{seed_name}")
    window.set_text("hello wörld 12 日本 👩‍💻 aaaa")
    paths = []
    for n in range(EXAMPLES):
        folder = tmp_path / f"case{n}"
        folder.mkdir()
        for pname, pdata in partners_for(seed_name, seeds).items():
            (folder / pname).write_bytes(pdata)
        path = folder / target_name(seed_name)
        path.write_bytes(mutate(seeds[seed_name], rng) if n else b"")
        paths.append(path)
    drop(window, *paths)  # each loads in the window's loading worker
    wait_idle(qtbot, window, timeout=120_000)
    assert not window.registry.loading()
    for tok in window.registry.tokenizers():  # what did load can be closed
        window.registry.remove(tok)
    still_works(qtbot, window)
