"""Tokenizers ▸ Open from Hugging Face…, against a local stand-in for the Hub (tests/fake_hub.py)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bpeinspect.core.io import hub
from tests.fake_hub import FakeHub, Repo
from tests.gui.conftest import wait_idle, wait_jobs
from tests.paths import SHARED


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("BPEINSPECT_CACHE_DIR", str(tmp_path / "bpe-cache"))
    for var in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def repos() -> dict[str, Repo]:
    gpt2 = (SHARED / "vocabs/gpt2/tokenizer.json").read_bytes()
    return {"openai-community/gpt2": Repo({"tokenizer.json": gpt2}), "acme/my-gpt2": Repo({"tokenizer.json": gpt2})}


def test_the_action_opens_a_dialog_that_searches_the_catalog(qtbot, window, hub_env):
    window.commands["tokenizers.open_hub"].trigger()
    dialog = window.hub_dialog
    assert dialog is not None and dialog.isVisible()
    assert len(dialog.rows()) >= 30
    qtbot.keyClicks(dialog.search, "qwen3")
    assert dialog.rows() and all(spec.startswith("hf:Qwen/Qwen3") for spec in dialog.rows())
    dialog.search.setText("someone/their-model@v2")  # any repository: offered first
    assert dialog.rows()[0] == "hf:someone/their-model@v2"
    dialog.search.setText("https://huggingface.co/Qwen/Qwen3-8B/tree/main")  # a model page's address
    assert dialog.rows() == ["hf:Qwen/Qwen3-8B"]
    wait_jobs(qtbot, dialog.jobs)
    dialog.reject()


def test_one_click_downloads_and_opens_and_the_model_is_then_marked_cached(qtbot, window, hub_env):
    served = repos()
    with FakeHub(served) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        dialog = window.show_hub_dialog()
        dialog.search.setText("openai-community/gpt2")
        item = dialog.list.topLevelItem(0)
        assert item.data(0, Qt.ItemDataRole.UserRole) == "hf:openai-community/gpt2" and item.text(4) == ""
        rect = dialog.list.visualItemRect(item)
        qtbot.mouseClick(dialog.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.waitUntil(lambda: window.hub_dialog is None, timeout=30000)  # accepted, and closed for good
        window.set_text("hello world")
        wait_idle(qtbot, window)
    tok = window.registry.current()
    commit = served["openai-community/gpt2"].commit
    assert tok is not None and f"openai-community/gpt2 at commit {commit}" in tok.source
    assert window.registry.result(tok).enc.ids == [31373, 995]
    # offline now: the dialog lists the model as cached
    hub_env.setenv("HF_HUB_OFFLINE", "1")
    dialog = window.show_hub_dialog()
    wait_jobs(qtbot, dialog.jobs)
    dialog.search.setText("openai-community/gpt2")
    assert dialog.list.topLevelItem(0).text(4) == "✓ cached"
    dialog.reject()


def test_a_repository_in_the_cache_but_not_in_the_catalog_is_listed(qtbot, window, hub_env):
    with FakeHub(repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        hub.fetch("hf:acme/my-gpt2")
    dialog = window.show_hub_dialog()
    wait_jobs(qtbot, dialog.jobs)
    assert dialog.rows()[0] == "hf:acme/my-gpt2"
    assert dialog.list.topLevelItem(0).text(1) == "(in the cache)"
    dialog.reject()


def test_a_failure_is_shown_in_the_dialog_in_one_line(qtbot, window, hub_env):
    with FakeHub({}) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        dialog = window.show_hub_dialog()
        dialog.start("hf:nobody/no-such-model")
        wait_jobs(qtbot, dialog.jobs)
    assert dialog.isVisible() and dialog.status.property("error")
    assert "hf:nobody/no-such-model: no such repository" in dialog.status.text()
    assert "\n" not in dialog.status.text() and len(window.registry) == 0
    assert dialog.list.isEnabled()  # ready for another choice
    dialog.reject()


def test_cancel_stops_the_download_and_opens_nothing(qtbot, window, hub_env):
    big = {"acme/big": Repo({"tokenizer.json": (SHARED / "vocabs/gpt2/tokenizer.json").read_bytes() * 2})}
    with FakeHub(big, slow=0.05) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        dialog = window.show_hub_dialog()
        dialog.start("hf:acme/big")
        qtbot.waitUntil(lambda: dialog.progress.maximum() > 0 and dialog.progress.value() > 0, timeout=30000)
        assert dialog.cancel_button.isVisible()
        dialog.cancel_button.click()
        assert "Cancelled" in dialog.status.text() and dialog.list.isEnabled()
        wait_jobs(qtbot, dialog.jobs)
    assert len(window.registry) == 0 and not hub.is_cached("acme/big")
    dialog.reject()
