"""Every model keeps the one contract: rank BPE, merge-list BPE and score BPE have all its members."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer, train_tokenizer
from bpeinspect.core.models import ScoreBPE
from bpeinspect.core.models.contract import Model
from bpeinspect.core.models.pieces import BYTE, CONTROL, NORMAL, UNKNOWN
from tests.core.corpus import PROSE


def contract_members() -> set[str]:
    names = set(Model.__annotations__)
    names |= {n for n in vars(Model) if not n.startswith("_")}
    return names


def score_model() -> ScoreBPE:
    pieces = ["<unk>", "<s>", "▁", "a", "b", "ab", "▁ab", *(f"<0x{b:02X}>" for b in range(256))]
    kinds = [UNKNOWN, CONTROL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL] + [BYTE] * 256
    return ScoreBPE(pieces, kinds, scores=[0, 0, -5, -6, -6, -1, -2] + [0] * 256, unk_id=0, special_ids={1})


MODELS = {
    "rank": lambda: load_tokenizer("cl100k_base").model,
    "merge list": lambda: train_tokenizer(PROSE, 300, pattern="gpt4").model,
    "score": score_model,
}


def test_the_contract_names_the_hot_path_and_the_merge_questions():
    assert {"encode_piece", "merge_rank", "merge_result", "merge_graph", "byte_level", "ranks"} <= contract_members()


@pytest.mark.parametrize("kind", MODELS)
def test_each_model_has_every_member_of_the_contract(kind):
    model = MODELS[kind]()
    missing = sorted(n for n in contract_members() if not hasattr(model, n))
    assert missing == []

