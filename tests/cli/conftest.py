"""What the command-line tests share: a config, caches and a Hub cache of each test's own, a
text with special-token text and emoji, and a run of the command line in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT, SHARED

TEXT = "Hello world! It's <|endoftext|> 1234 naïve 中文 👍🏽\n"


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def run(*args: str, stdin: str | None = None, env_dir: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "bpeinspect.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "in.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


@pytest.fixture
def vocabs_dir():
    p = SHARED / "vocabs"
    if not p.is_dir():
        pytest.skip("shared vocabularies not available")
    return p
