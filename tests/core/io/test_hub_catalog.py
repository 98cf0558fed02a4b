"""The catalog of popular Hub models (resources/hub_models.tsv)."""

from __future__ import annotations

import pytest

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.hub import parse_spec
from bpeinspect.core.io.hub_catalog import hub_models, parse_catalog, search

# the families the catalog promises, as its "family" column names them
FAMILIES = [
    "Llama 3.1",
    "Llama 4",
    "Qwen 2.5",
    "Qwen 3",
    "Gemma 2",
    "Gemma 3",
    "Mistral 7B",
    "Mistral NeMo",
    "Mixtral",
    "Phi-3",
    "Phi-4",
    "DeepSeek V3",
    "DeepSeek R1",
    "OLMo 2",
    "Falcon",
    "StarCoder2",
    "GPT-NeoX",
    "BLOOM",
    "SmolLM",
    "CLIP",
    "Command-R",
    "gpt-oss",
]


def test_the_catalog_holds_at_least_30_models_of_every_promised_family():
    models = hub_models()
    assert len(models) >= 30
    families = {m.family for m in models}
    assert [f for f in FAMILIES if f not in families] == []
    for m in models:
        assert parse_spec(m.spec).repo == m.repo
        assert m.licence and m.gate in ("open", "gated")


def test_gated_models_are_marked():
    by_repo = {m.repo: m for m in hub_models()}
    assert by_repo["meta-llama/Llama-3.1-8B-Instruct"].gated
    assert not by_repo["Qwen/Qwen3-8B"].gated


def test_search_matches_every_word_anywhere_in_a_line():
    models = hub_models()
    assert {m.repo for m in search("llama gated 3.1 8b", models)} == {"meta-llama/Llama-3.1-8B-Instruct"}
    assert [m.family for m in search("TEKKEN", models)] == ["Mistral NeMo"]
    assert search("", models) == list(models)
    assert search("no such model anywhere", models) == []


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("a/b\tFam\topen", "line 1 is not"),
        ("a/b\tFam\tmaybe\tmit", "gate 'maybe'"),
        ("ab\tFam\topen\tmit", "not a new OWNER/NAME"),
        ("a/b\tFam\topen\tmit\na/b\tFam\topen\tmit", "line 2"),
    ],
)
def test_a_malformed_catalog_line_is_named(line, says):
    with pytest.raises(VocabularyError, match=says):
        parse_catalog(line)
