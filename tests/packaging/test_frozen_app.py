"""Build the one-folder app with PyInstaller and run the frozen binaries.

Slow (about a minute on 2 cores: ~30 s of PyInstaller, then the frozen window's screenshot),
but CI runs it: it is the only check that the shipped app starts at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from bpeinspect.core import load_tokenizer
from tests.paths import ROOT, SHARED

EXE_SUFFIX = ".exe" if sys.platform == "win32" else ""

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory) -> Path:
    import PyInstaller  # noqa: F401  (in the test extra: a missing one must fail, not skip)

    tmp = tmp_path_factory.mktemp("frozen")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(tmp / "dist"),
            "--workpath",
            str(tmp / "work"),
            str(ROOT / "packaging" / "bpeinspect.spec"),
        ],
        capture_output=True,
        text=True,
        timeout=1100,
        check=False,
        cwd=tmp,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return tmp / "dist" / "bpeinspect"


def frozen_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    # settings and caches of the frozen app go to tmp_path, never the user's
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path))
    return env


def test_layout_is_lean_and_has_the_resources(app_dir):
    internal = app_dir / "_internal"
    assert (app_dir / f"bpeinspect{EXE_SUFFIX}").is_file()
    assert (app_dir / f"bpeinspect-cli{EXE_SUFFIX}").is_file()
    resources = internal / "bpeinspect" / "resources"
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        assert (resources / "vocabs" / f"{name}.tiktoken.gz").is_file()
    assert (resources / "samples" / "welcome.txt").is_file()
    assert (resources / "icons" / "bpeinspect.svg").is_file()
    qt_modules = {p.name.split(".")[0] for p in (internal / "PySide6").glob("Qt*.so")} | {
        p.name.split(".")[0] for p in (internal / "PySide6").glob("Qt*.pyd")
    }
    assert qt_modules <= {"QtCore", "QtGui", "QtWidgets", "QtSvg"}, qt_modules
    assert {"QtCore", "QtGui", "QtWidgets"} <= qt_modules
    for unwanted in ("tiktoken", "tokenizers", "hypothesis", "pytest", "PyInstaller", "tkinter"):
        assert not (internal / unwanted).exists(), unwanted
    assert not (internal / "PySide6" / "Qt" / "translations").exists()
    size = sum(f.stat().st_size for f in app_dir.rglob("*") if f.is_file())
    assert size < 400 << 20, f"{size >> 20} MB: something heavy slipped in"


def test_frozen_window_screenshot(app_dir, tmp_path):
    out = tmp_path / "shot.png"
    proc = subprocess.run(
        [str(app_dir / f"bpeinspect{EXE_SUFFIX}"), "--screenshot", str(out)],
        env=frozen_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1400, 860)
    # the two default panes are drawn with their token colours, not a blank or error window
    colors = {img.pixel(x, y) for x in range(0, 1400, 7) for y in range(40, 600, 5)}
    assert len(colors) > 40
    assert "Traceback" not in proc.stderr


def test_frozen_cli_encodes_like_the_package(app_dir, tmp_path):
    text = "Frozen apps tokenize too: naïve café, 日本語, 👩‍💻 and <|endoftext|> as text.\n"
    proc = subprocess.run(
        [str(app_dir / f"bpeinspect-cli{EXE_SUFFIX}"), "encode", "-t", "cl100k_base"],
        input=text,
        env=frozen_env(tmp_path),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    ids = [int(x) for x in proc.stdout.split()]
    assert ids == load_tokenizer("cl100k_base").encode_ordinary(text)


@pytest.mark.skipif(not (SHARED / "vocabs" / "gpt2.gguf").is_file(), reason="no shared test data (BPEINSPECT_SHARED)")
def test_frozen_cli_reads_every_format(app_dir, tmp_path):
    """numpy/gguf and the JSON loaders made it into the bundle."""
    vocabs = SHARED / "vocabs"
    for spec in (vocabs / "gpt2.gguf", vocabs / "gpt2" / "tokenizer.json", vocabs / "gpt2", vocabs / "gpt2.tiktoken"):
        proc = subprocess.run(
            [str(app_dir / f"bpeinspect-cli{EXE_SUFFIX}"), "encode", "-t", str(spec)],
            input="hello world",
            env=frozen_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, (spec, proc.stderr)
        assert proc.stdout.split() == ["31373", "995"], spec
