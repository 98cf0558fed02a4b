"""The command line's shared helpers: argument checks, tables, widths and the progress bar."""

from __future__ import annotations

import argparse
import io
import types

import pytest

from bpeinspect.cli.common import ProgressBar, align_table, display_width, pattern_arg, whole_number


def test_progress_bar_draws_on_a_terminal():
    buf = io.StringIO()
    bar = ProgressBar("training", stream=buf, force=True)
    for i in range(0, 11):
        bar(i, 10)
    bar.close()
    assert "100%" in buf.getvalue() and buf.getvalue().endswith("\n") and "\r" in buf.getvalue()
    buf = io.StringIO()
    bar = ProgressBar("training", stream=buf, force=True)
    bar(types.SimpleNamespace(phase="counting", fraction=1.0, merges_done=0, merges_total=8))
    bar(types.SimpleNamespace(phase="merging", fraction=0.5, merges_done=4, merges_total=8))
    bar.close()
    assert "training (counting)" in buf.getvalue() and " 50% 4/8 merges" in buf.getvalue()


def test_whole_numbers_below_the_least_are_refused_with_the_bound():
    assert whole_number("0") == 0
    assert whole_number("5", least=5) == 5
    with pytest.raises(argparse.ArgumentTypeError, match="must be at least 1, not 0"):
        whole_number("0", least=1)
    with pytest.raises(argparse.ArgumentTypeError, match="not a whole number: '1.5'"):
        whole_number("1.5")


def test_a_plain_word_must_name_a_preset_while_a_regex_passes():
    assert pattern_arg("gpt2") == "gpt2"
    assert pattern_arg(r"\w+|\s+") == r"\w+|\s+"
    with pytest.raises(argparse.ArgumentTypeError, match="no preset is called 'gpt99'"):
        pattern_arg("gpt99")


def test_wide_and_zero_width_characters_take_their_columns():
    assert display_width("abc") == 3
    assert display_width("日本語") == 6
    assert display_width("a\u200db") == 2  # a zero-width joiner takes no column
    assert display_width("") == 0


def test_table_columns_line_up_by_display_width_not_by_characters():
    lines = align_table(["name", "n"], [["日本", "1"], ["abcdef", "22"]], left=1).splitlines()
    ends = {display_width(line) for line in lines}
    assert len(ends) == 1  # right-aligned numbers end in one column
    assert lines[1].startswith("日本  ") and lines[2].startswith("abcdef")
