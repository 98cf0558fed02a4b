"""Conversations in the shapes chat data comes in: OpenAI/Hugging Face messages and ShareGPT turns."""

from __future__ import annotations

import pytest

from bpeinspect.core.chat.messages import conversation_of, is_message, message_texts, role_of

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


@pytest.mark.parametrize("key", ["messages", "conversations", "conversation"])
def test_a_record_holds_its_messages_under_any_known_key(key):
    assert conversation_of({key: MESSAGES, "id": 7}) == MESSAGES


def test_a_bare_list_of_messages_is_a_conversation():
    assert conversation_of(MESSAGES) == MESSAGES


@pytest.mark.parametrize(
    ("speaker", "role"),
    [("human", "user"), ("GPT", "assistant"), ("chatgpt", "assistant"), ("function", "tool"), ("narrator", "narrator")],
)
def test_sharegpt_speakers_become_roles_and_unknown_ones_are_kept(speaker, role):
    [message] = conversation_of({"conversations": [{"from": speaker, "value": "x"}]})
    assert message == {"role": role, "content": "x"}


@pytest.mark.parametrize(
    "obj",
    [None, "text", [], {"messages": []}, {"messages": [{"role": "user"}]}, {"text": "hi"}, [MESSAGES[0], "x"]],
)
def test_anything_else_holds_no_conversation(obj):
    assert conversation_of(obj) is None


def test_a_message_with_tool_calls_and_no_content_is_a_message():
    assert is_message({"role": "assistant", "tool_calls": []})
    assert not is_message({"role": "assistant"})
    assert not is_message(["role", "content"])


def test_texts_are_the_content_its_text_parts_and_the_reasoning():
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "look"}, {"type": "image"}, {"type": "text", "text": ""}],
        "reasoning_content": "because",
    }
    assert message_texts(message) == ["look", "because"]
    assert message_texts({"role": "user", "content": None}) == []


def test_a_missing_or_empty_role_shows_as_a_question_mark():
    assert role_of({"role": "user"}) == "user"
    assert role_of({"role": ""}) == "?"
    assert role_of({"content": "x"}) == "?"
