"""Template variables as typed in the chat panel: NAME=VALUE pairs or one JSON object."""

from __future__ import annotations

import pytest

from bpeinspect.core.chat.variables import parse_variables, variable_value


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("", {}),
        ("enable_thinking=false", {"enable_thinking": False}),
        ("a=1 b=2.5,c=null", {"a": 1, "b": 2.5, "c": None}),
        ('date_string="26 Jul 2024", x=y', {"date_string": "26 Jul 2024", "x": "y"}),
        ("a=1x b=[1, 2]", {"a": "1x", "b": [1, 2]}),
        ('tools=[{"name": "f", "parameters": {}}]', {"tools": [{"name": "f", "parameters": {}}]}),
        ('{"enable_thinking": true, "k": [1]}', {"enable_thinking": True, "k": [1]}),
        ("  spaced =  word  ", {"spaced": "word"}),
    ],
)
def test_pairs_and_objects(text, want):
    assert parse_variables(text) == want


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("enable_thinking", "give NAME=VALUE"),
        ("a=1 b", "give NAME=VALUE"),
        ("a=", "give a value"),
        ("1a=2", "not a variable name"),
        ("messages=[]", "set by the renderer"),
        ("add_generation_prompt=false", "set by the renderer"),
        ('{"a": 1', "not a JSON object"),
        ('{"bad name": 1}', "not a variable name"),
    ],
)
def test_bad_input_says_what_is_wrong(text, said):
    with pytest.raises(ValueError, match=said):
        parse_variables(text)


def test_a_value_is_json_or_the_text_itself():
    assert variable_value("[1]") == [1] and variable_value("26 Jul 2024") == "26 Jul 2024" and variable_value("") == ""
