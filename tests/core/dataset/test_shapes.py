"""Shapes of dataset records: chat conversations or known text fields, guessed from a sample."""

from __future__ import annotations

import pytest

from bpeinspect.core.dataset.shapes import (
    CHAT,
    CLEAR_SHARE,
    conversation,
    field_texts,
    fields_shape,
    guess_shape,
    record_shape,
    text_fields,
)

CHAT_RECORD = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def test_a_trl_prompt_and_completion_of_messages_is_one_conversation():
    record = {
        "prompt": [{"role": "user", "content": "2+2?"}],
        "completion": [{"role": "assistant", "content": "4"}],
    }
    assert record_shape(record) == CHAT
    assert [m["content"] for m in conversation(record)] == ["2+2?", "4"]


@pytest.mark.parametrize(
    ("record", "fields"),
    [
        ({"prompt": "p", "completion": "c"}, ("prompt", "completion")),
        ({"question": "q", "answer": "a", "id": 3}, ("question", "answer")),
        ({"instruction": "i", "context": "", "response": "r"}, ("instruction", "context", "response")),
        ({"text": "t"}, ("text",)),
    ],
)
def test_known_text_fields_are_recognised(record, fields):
    assert record_shape(record) == fields_shape(*fields)


@pytest.mark.parametrize("record", [{"prompt": "p"}, {"text": 5}, ["text"], "text", None])
def test_a_record_of_no_known_shape_has_none(record):
    assert record_shape(record) is None


def test_a_clear_majority_names_the_shape_and_the_text_fields_are_listed():
    records = [CHAT_RECORD] * 9 + [{"body": "x", "n": 1}]
    guess = guess_shape(records)
    assert (guess.shape, guess.fitting, guess.looked_at) == (CHAT, 9, 10)
    assert guess.fields == ("body",)


def test_a_mixed_sample_names_no_shape():
    records = [CHAT_RECORD] * 5 + [{"text": "x"}] * 5
    assert 5 < CLEAR_SHARE * 10
    guess = guess_shape(records)
    assert guess.shape is None and guess.looked_at == 10
    assert guess.fields == ("text",)


def test_field_texts_are_empty_where_a_record_has_no_text():
    shape = fields_shape("prompt", "completion")
    assert field_texts(shape, {"prompt": "p", "completion": None}) == ["p", ""]
    assert field_texts(shape, ["not", "a", "record"]) == ["", ""]
    assert text_fields({"a": "x", "b": 1, "c": ""}) == ["a", "c"]
    assert fields_shape("a", "b").label == "a / b" and CHAT.label == "chat messages"
