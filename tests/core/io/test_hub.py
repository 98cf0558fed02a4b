"""``hf:OWNER/NAME[@REVISION]``: models from the Hub, against a local stand-in for it (tests/fake_hub.py)
serving real files; nothing here reaches the internet."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat.sources import templates_for
from bpeinspect.core.errors import Cancelled, VocabularyError
from bpeinspect.core.io import hub
from bpeinspect.core.io.formats import load_path
from tests.conformance.conftest import vocab_file
from tests.conformance.corpus import conformance_texts
from tests.conformance.sources import VOCABS
from tests.fake_hub import GOOD_TOKEN, FakeHub, Repo
from tests.paths import SHARED

QWEN3 = next(v for v in VOCABS if v.id == "qwen3")
GPT2_JSON = SHARED / "vocabs" / "gpt2" / "tokenizer.json"
TEXTS = ["Hello world! It's 1234 naïve 中文 👍🏽\n", "  indented\n\tcode()  ", "<|endoftext|> after"]


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """An empty Hugging Face cache, bpeinspect's own cache and config, no token and online."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("BPEINSPECT_CACHE_DIR", str(tmp_path / "bpe-cache"))
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "bpe-config"))
    for var in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def small_repos() -> dict[str, Repo]:
    gpt2 = GPT2_JSON.read_bytes()
    encoder = (SHARED / "vocabs" / "gpt2" / "encoder.json").read_bytes()
    merges = (SHARED / "vocabs" / "gpt2" / "vocab.bpe").read_bytes()
    return {
        "acme/gated-model": Repo({"tokenizer.json": gpt2}, gated=True),
        "acme/private-model": Repo({"tokenizer.json": gpt2}, private=True),
        "acme/weights-only": Repo({"README.md": b"# weights", "model.safetensors": b"\0" * 64}),
        "acme/gpt2-pair": Repo({"vocab.json": encoder, "merges.txt": merges, "config.json": b"{}"}),
        "acme/tagged": Repo({"tokenizer.json": gpt2}, branches={"v1.0": "1" * 40}, commit="1" * 40),
    }


@pytest.fixture
def qwen_repo() -> dict[str, Repo]:
    tj = vocab_file(QWEN3)
    config = vocab_file(QWEN3, "package/models/tokenizer_config.json")
    return {
        "Qwen/Qwen3-0.6B": Repo(
            {
                "tokenizer.json": tj.read_bytes(),
                "tokenizer_config.json": config.read_bytes(),
                "model.safetensors": b"\0" * 128,
                "config.json": b"{}",
            }
        )
    }


def test_hf_spec_opens_the_served_qwen3_exactly_as_hf_tokenizers_online_then_offline(hub_env, qwen_repo):
    import tokenizers

    reference = tokenizers.Tokenizer.from_file(str(vocab_file(QWEN3)))
    texts = conformance_texts()
    expected = [reference.encode(t, add_special_tokens=False).ids for t in texts]
    with FakeHub(qwen_repo) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        loaded = hub.load_resolved("hf:Qwen/Qwen3-0.6B")
        tok = loaded.tokenizer
        assert [tok.encode(t, allowed_special="all") for t in texts] == expected
        # the weights were never asked for; the tokenizer and its config were
        asked = " ".join(server.paths())
        assert "tokenizer.json" in asked and "tokenizer_config.json" in asked and "safetensors" not in asked
        commit = qwen_repo["Qwen/Qwen3-0.6B"].commit
        assert f"Qwen/Qwen3-0.6B at commit {commit}" in tok.source
        assert loaded.files.commit == commit and loaded.files.repo == "Qwen/Qwen3-0.6B"

        hub_env.setenv("HF_HUB_OFFLINE", "1")
        before = len(server.requests)
        again = load_tokenizer("hf:Qwen/Qwen3-0.6B")
        assert len(server.requests) == before  # offline: not one request
    assert [again.encode(t, allowed_special="all") for t in texts] == expected
    assert commit in again.source


def test_the_hub_unreachable_falls_back_to_the_cached_model(hub_env):
    repos = small_repos()
    with FakeHub(repos) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        first = load_tokenizer("hf:acme/tagged")
    # the server is gone (not offline mode): the cached snapshot opens
    again = load_tokenizer("hf:acme/tagged")
    assert again.encode("hello world") == first.encode("hello world") == [31373, 995]


def test_a_commit_in_the_cache_opens_without_asking_the_hub(hub_env):
    with FakeHub(small_repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        load_tokenizer("hf:acme/tagged@v1.0")
        before = len(server.requests)
        tok = load_tokenizer(f"hf:acme/tagged@{'1' * 40}")
        assert len(server.requests) == before
    assert tok.encode("hello world") == [31373, 995]


def test_a_missing_repository_is_one_line_naming_the_repository(hub_env):
    with FakeHub({}) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        with pytest.raises(VocabularyError) as err:
            load_tokenizer("hf:nobody/no-such-model")
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("hf:nobody/no-such-model: no such repository on http://127.0.0.1:")
    assert "HF_TOKEN" in msg


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("hf:acme/gated-model", "gated: accept its licence on"),
        ("hf:acme/private-model", "no such repository"),
        ("hf:acme/weights-only", "holds no tokenizer file bpeinspect reads"),
        ("hf:acme/tagged@v9", "has no revision 'v9'"),
        ("hf:acme/bad name", "not a Hugging Face repository"),
    ],
)
def test_each_failure_of_the_hub_is_one_line(hub_env, spec, expected):
    with FakeHub(small_repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        with pytest.raises(VocabularyError) as err:
            load_tokenizer(spec)
    assert expected in str(err.value) and "\n" not in str(err.value)
    if "gated" in expected:
        assert "HF_TOKEN" in str(err.value) and "hf auth login" in str(err.value)


def test_a_gated_model_opens_with_a_token_that_has_access(hub_env):
    with FakeHub(small_repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        hub_env.setenv("HF_TOKEN", GOOD_TOKEN)
        tok = load_tokenizer("hf:acme/gated-model")
    assert tok.encode("hello world") == [31373, 995]


def test_offline_and_not_cached_says_so_in_one_line(hub_env):
    hub_env.setenv("HF_HUB_OFFLINE", "1")
    hub_env.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(VocabularyError, match="not in the Hugging Face cache.*HF_HUB_OFFLINE"):
        load_tokenizer("hf:Qwen/Qwen3-0.6B")


def test_an_unreachable_hub_and_no_cache_is_one_line(hub_env):
    with FakeHub({}) as server:
        endpoint = server.endpoint
    hub_env.setenv("HF_ENDPOINT", endpoint)  # nothing listens there any more
    with pytest.raises(VocabularyError) as err:
        load_tokenizer("hf:acme/anything")
    assert f"cannot reach {endpoint}" in str(err.value) and "not in the Hugging Face cache" in str(err.value)
    assert "\n" not in str(err.value)


def test_vocab_json_and_merges_txt_open_when_there_is_no_tokenizer_json(hub_env):
    with FakeHub(small_repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        tok = load_tokenizer("hf:acme/gpt2-pair")
        assert "config.json" not in " ".join(p for p in server.paths() if "/resolve/" in p)
    reference = load_path(GPT2_JSON)
    for text in TEXTS:
        assert tok.encode(text, allowed_special="all") == reference.encode(text, allowed_special="all")


def test_a_gguf_model_is_read_for_its_metadata_only(hub_env):
    gguf = (SHARED / "vocabs" / "gpt2.gguf").read_bytes()
    weights = bytes(8 << 20)  # what a model's tensors would be: never downloaded
    repos = {
        "acme/model-GGUF": Repo({"model-Q4_K_M.gguf": gguf + weights, "mmproj-f16.gguf": b"GGUF", "README.md": b"x"})
    }
    with FakeHub(repos) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        tok = load_tokenizer("hf:acme/model-GGUF")
        ranges = [h.get("Range") for m, p, h in server.requests if m == "GET" and "/blobs/" in p]
        hub_env.setenv("HF_HUB_OFFLINE", "1")
        again = load_tokenizer("hf:acme/model-GGUF")
    assert ranges and all(ranges)
    fetched = sum(int(r.split("-")[1]) - int(r.split("=")[1].split("-")[0]) + 1 for r in ranges)
    assert fetched < len(gguf) + len(weights) // 2
    reference = load_path(SHARED / "vocabs" / "gpt2.gguf")
    for text in TEXTS:
        assert (
            tok.encode(text, allowed_special="all")
            == again.encode(text, allowed_special="all")
            == reference.encode(text, allowed_special="all")
        )


def test_the_chat_template_beside_a_hub_tokenizer_is_found(hub_env, qwen_repo):
    with FakeHub(qwen_repo) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        tok = load_tokenizer("hf:Qwen/Qwen3-0.6B")
    found = templates_for(tok, "hf:Qwen/Qwen3-0.6B")
    assert found and found[0].origin.startswith("tokenizer_config.json")


def test_a_split_rule_chosen_by_the_user_applies_to_a_hub_model(hub_env):
    with FakeHub(small_repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        tok = hub.load("hf:acme/tagged", pattern="cl100k")
    assert tok.assumed["pattern"] == "chosen by the user"


def test_a_download_stops_when_asked(hub_env, qwen_repo):
    with FakeHub(qwen_repo) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        seen: list[tuple[int, int]] = []
        with pytest.raises(Cancelled):
            hub.fetch("hf:Qwen/Qwen3-0.6B", progress=lambda d, t: seen.append((d, t)), should_stop=lambda: bool(seen))
        assert not hub.is_cached("Qwen/Qwen3-0.6B")
        got = hub.fetch("hf:Qwen/Qwen3-0.6B", progress=lambda d, t: seen.append((d, t)))
    assert got.path.name == "tokenizer.json" and hub.is_cached("Qwen/Qwen3-0.6B")
    assert seen[-1][0] == seen[-1][1] > 10_000_000


def test_a_whole_gguf_model_in_the_cache_opens_offline(hub_env, tmp_path):
    snapshot = tmp_path / "hf" / "hub" / "models--acme--whole-GGUF" / "snapshots" / ("2" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "model-Q8_0.gguf").write_bytes((SHARED / "vocabs" / "gpt2.gguf").read_bytes())
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("2" * 40)
    hub_env.setenv("HF_HUB_OFFLINE", "1")
    assert load_tokenizer("hf:acme/whole-GGUF").encode("hello world") == [31373, 995]
    loaded = hub.load_resolved("hf:acme/whole-GGUF")
    assert loaded.tokenizer.encode("hello world") == [31373, 995]
    assert loaded.files.files == ("model-Q8_0.gguf",)
    assert not hasattr(hub, "resolved")  # what a spec resolved to comes with its load, not from a table


def test_a_should_stop_given_to_a_hub_load_reaches_the_tokenizers_tables(hub_env):
    with FakeHub(small_repos()) as server:
        hub_env.setenv("HF_ENDPOINT", server.endpoint)
        hub.fetch("hf:acme/tagged")
    hub_env.setenv("HF_HUB_OFFLINE", "1")  # from the cache: the fetch itself asks nothing
    asked: list[bool] = []
    tok = hub.load("hf:acme/tagged", should_stop=lambda: asked.append(True) or False)
    assert tok.n_vocab == 50257 and len(asked) >= 50257 // (1 << 14)
    with pytest.raises(Cancelled):
        hub.load("hf:acme/tagged", should_stop=lambda: True)
