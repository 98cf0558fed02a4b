"""The Vocabularies view's figures: combination labels, and the composition by script or length
that loses no token however many scripts there are."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.vocab_diff import compare_vocabularies
from bpeinspect.gui.panels.vocabs.plots import (
    MAX_CATEGORIES,
    OTHER_SCRIPTS,
    category_colors,
    combo_label,
    composition_series,
)


@pytest.fixture(scope="module")
def diff():
    return compare_vocabularies([("r50k", load_tokenizer("r50k_base")), ("o200k", load_tokenizer("o200k_base"))])


def test_a_combination_is_named_by_its_sides(diff):
    assert combo_label(diff, 0b01) == "only r50k"
    assert combo_label(diff, 0b10) == "only o200k"
    assert combo_label(diff, 0b11) == "r50k ∩ o200k"


@pytest.mark.parametrize("by", ["script", "length"])
def test_every_token_of_each_side_is_in_one_category(diff, by):
    labels, values = composition_series(diff, by)
    assert len(labels) == len(values) and len(set(labels)) == len(labels)
    totals = [sum(row[k] for row in values) for k in range(len(diff.sides))]
    counted = [side.composition if by == "script" else side.lengths for side in diff.sides]
    assert totals == [sum(c.values()) for c in counted]
    assert totals[0] > 50_000 and totals[1] > 190_000


def test_scripts_past_the_limit_are_drawn_together(diff):
    labels, _ = composition_series(diff, "script")
    assert len(labels) <= MAX_CATEGORIES
    if len(diff.category_order()) > MAX_CATEGORIES:
        assert OTHER_SCRIPTS in labels


def test_each_category_has_its_own_colour_up_to_sixteen():
    colors = [c.name() for c in category_colors(16)]
    assert len(set(colors)) == 16
    assert category_colors(17)[16].name() == colors[0]
