"""Start-up: arguments, the welcome text, and ``--screenshot`` as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from bpeinspect.gui.app import DEFAULT_TOKENIZERS, parse_args, welcome_text

ROOT = Path(__file__).resolve().parents[2]


def test_parse_args():
    a = parse_args(["-t", "gpt2", "-t", "x.tiktoken", "notes.txt"])
    assert a.tokenizer == ["gpt2", "x.tiktoken"] and a.file == "notes.txt" and a.screenshot is None


def test_welcome_text_is_multilingual():
    text = welcome_text()
    for sample in (
        "def ",
        "grüßen",
        "Русский",
        "Ελληνικά",
        "العربية",
        "हिन्दी",
        "中文",
        "日本語",
        "한국어",
        "👩‍💻",
        "3.14159",
    ):
        assert sample in text


def run_screenshot(tmp_path, *args):
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT), XDG_CONFIG_HOME=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "bpeinspect", "--screenshot", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return proc, out


def test_screenshot_default(tmp_path):
    proc, out = run_screenshot(tmp_path, "--size", "1200x760")
    assert proc.returncode == 0, proc.stderr
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1200, 760)
    # token colours are there: many distinct colours, not a blank window
    colors = {img.pixel(x, y) for x in range(0, 900, 7) for y in range(40, 400, 5)}
    assert len(colors) > 30
    assert DEFAULT_TOKENIZERS == ["o200k_base"]  # a calm first screen: one pane


def test_screenshot_with_file_and_bad_tokenizer(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("hello\n", encoding="utf-8")
    proc, out = run_screenshot(tmp_path, "-t", "gpt2", "-t", str(tmp_path / "missing.tiktoken"), str(text))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_the_app_has_freed_blocks_merged_at_once_not_kept_for_a_long_merge_later():
    """glibc keeps small freed blocks aside and merges them all in a later large allocation: a
    pause of tens of ms on the GUI thread after Qt freed the formats of a long text's lines."""
    import ctypes
    import sys

    from bpeinspect.gui.app import merge_freed_blocks_at_once

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("glibc 2.33 or later only")
    assert sys.platform.startswith("linux")

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    libc.mallinfo2.restype = MallInfo2
    libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = (
        ctypes.c_void_p,
        [ctypes.c_size_t],
        [ctypes.c_void_p],
    )
    blocks = (ctypes.c_void_p * 2000)()  # no Python list growing between the calls (a large allocation merges)

    def kept_aside() -> int:
        before = libc.mallinfo2().smblks  # blocks other code left aside before the setting
        for i in range(len(blocks)):
            blocks[i] = libc.malloc(40)
        for i in range(0, len(blocks), 2):  # every other one: no neighbour to merge with yet
            libc.free(blocks[i])
        kept = libc.mallinfo2().smblks - before
        for i in range(1, len(blocks), 2):
            libc.free(blocks[i])
        return kept

    assert merge_freed_blocks_at_once()
    assert kept_aside() < 50  # without the setting: about 1,000 of the 1,000 freed
