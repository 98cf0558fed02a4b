"""``hf:`` specs on the command line, against a local stand-in for the Hub (tests/fake_hub.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bpeinspect.cli import commands as cli
from tests.fake_hub import FakeHub, Repo
from tests.paths import ROOT, SHARED


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("BPEINSPECT_CACHE_DIR", str(tmp_path / "bpe-cache"))
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "bpe-config"))
    for var in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def repos() -> dict[str, Repo]:
    return {"openai-community/gpt2": Repo({"tokenizer.json": (SHARED / "vocabs/gpt2/tokenizer.json").read_bytes()})}


def test_info_names_the_repository_and_the_commit_it_read(hub_env, capsys):
    served = repos()
    with FakeHub(served) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        assert cli.main(["info", "hf:openai-community/gpt2"]) == 0
    out = capsys.readouterr().out
    commit = served["openai-community/gpt2"].commit
    assert "repository:     openai-community/gpt2 (revision main)" in out
    assert f"commit:         {commit}" in out
    assert "vocab size:     50257 ids" in out


def test_encode_takes_an_hf_spec(hub_env, capsys, tmp_path):
    with FakeHub(repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        text = tmp_path / "t.txt"
        text.write_text("hello world", encoding="utf-8")
        assert cli.main(["encode", "-t", "hf:openai-community/gpt2", str(text)]) == 0
    assert "31373" in capsys.readouterr().out


def test_a_missing_repository_exits_2_with_one_line(hub_env):
    with FakeHub({}) as server:
        env = dict(os.environ, PYTHONPATH=str(ROOT), HF_ENDPOINT=server.endpoint, PYTHONIOENCODING="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "bpeinspect.cli", "info", "hf:nobody/no-such-model"],
            capture_output=True,
            check=False,
            text=True,
            env=env,
            timeout=120,
        )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "hf:nobody/no-such-model: no such repository" in lines[0]


def test_list_hub_marks_the_catalog_models_in_the_cache(hub_env, capsys):
    with FakeHub(repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        assert cli.main(["list", "--hub"]) == 0
        assert "* hf:openai-community/gpt2" not in capsys.readouterr().out
        assert cli.main(["info", "hf:openai-community/gpt2"]) == 0
        capsys.readouterr()
        assert cli.main(["list", "--hub"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 30
    assert [line.split()[1] for line in lines if line.startswith("*")] == ["hf:openai-community/gpt2"]
