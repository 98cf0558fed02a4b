"""Split patterns with a time limit: a catastrophic pattern is stopped with a clear error, in the
main thread and in a worker, and a harmless one splits exactly as the regex module does."""

from __future__ import annotations

import threading

import pytest
import regex

from bpeinspect.core import limits
from bpeinspect.core.errors import PatternError
from bpeinspect.core.split.bounded import BoundedPattern, can_backtrack, split_time_limit
from bpeinspect.core.split.rules import PRESETS

TEXT = "Hello world! It's 1234 naïve 日本語 👍🏽 \n\n  end"


@pytest.fixture
def quick_limit(monkeypatch):
    monkeypatch.setattr(limits, "SPLIT_SECONDS", 0.3)
    monkeypatch.setattr(limits, "SPLIT_SECONDS_PER_CHAR", 0.0)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_bounded_preset_finds_what_the_regex_module_finds(name):
    pattern = PRESETS[name].pattern
    bounded = BoundedPattern(pattern)
    assert bounded.findall(TEXT) == regex.findall(pattern, TEXT)
    assert bounded.spans(TEXT, 3, 20) == [m.span() for m in regex.finditer(pattern, TEXT, pos=3, endpos=20)]


@pytest.mark.parametrize(
    ("pattern", "backtracks"),
    [
        (r"(a|a)+$", True),
        (r"(a+)+", True),
        (r"(a*)*b", True),
        (r"(\w)\1", True),
        (r"(?P<x>a)(?P=x)", True),
        (r"(a++)+", True),  # the group, not its inside, repeats without being possessive
        (r"(?:ab)+", False),
        (r"[(+)]+x", False),
        (r"\p{L}+|\s+(?!\S)", False),
        (r"(?:a|b)++", False),
    ],
)
def test_patterns_that_may_backtrack_are_recognised(pattern, backtracks):
    assert can_backtrack(pattern) is backtracks


def test_a_catastrophic_pattern_is_stopped_in_the_main_thread(quick_limit):
    with pytest.raises(PatternError, match="stopped by bpeinspect's time limit") as info:
        BoundedPattern(r"(a|a)+$").findall("a" * 40 + "!")
    assert "backtracks catastrophically" in str(info.value) and "\n" not in str(info.value)


def test_a_catastrophic_pattern_is_stopped_in_a_worker_thread(quick_limit):
    errors: list[BaseException] = []

    def work() -> None:
        try:
            BoundedPattern(r"(a|a)+$").findall("a" * 40 + "!")
        except PatternError as exc:
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    assert len(errors) == 1 and "time limit" in str(errors[0])


def test_an_outer_limit_covers_the_searches_inside_it(quick_limit):
    with pytest.raises(PatternError, match="'outer'"), split_time_limit(10, "outer"):
        regex.findall(r"(a|a)+$", "a" * 40 + "!")


def test_other_attributes_are_the_compiled_patterns():
    bounded = BoundedPattern(r"(\w+)-(\d+)")
    assert bounded.groups == 2
    assert [m.group(2) for m in bounded.finditer("a-1 b-22")] == ["1", "22"]
