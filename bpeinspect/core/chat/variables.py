"""Template variables as users type them: ``enable_thinking=false date_string="26 Jul 2024"``.

Each value is read as JSON when it is JSON (``false``, ``3``, ``"a b"``, ``[{"type": ...}]``)
and else taken as the bare word it is. The names a renderer sets itself are refused.

>>> parse_variables('enable_thinking=false, date_string="26 Jul 2024" tools=[{"name": "f"}]')
{'enable_thinking': False, 'date_string': '26 Jul 2024', 'tools': [{'name': 'f'}]}
>>> parse_variables('{"enable_thinking": true}')
{'enable_thinking': True}
>>> variable_value("26 Jul 2024"), variable_value("null")
('26 Jul 2024', None)
"""

from __future__ import annotations

import json
from typing import Any

RESERVED = frozenset({"messages", "add_generation_prompt", "plain"})  # set by the renderer itself
_DECODER = json.JSONDecoder()


def variable_value(raw: str) -> Any:
    """``raw`` read as JSON if it is JSON, else the string itself."""
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return raw


def check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"{name!r} is not a variable name (letters, digits and _)")
    if name in RESERVED:
        raise ValueError(f"{name!r} is set by the renderer itself, not a variable to give")


def _at_separator(text: str, i: int) -> bool:
    return i >= len(text) or text[i].isspace() or text[i] == ","


def parse_variables(text: str) -> dict[str, Any]:
    """``NAME=VALUE`` pairs separated by spaces or commas, or one JSON object (raises ValueError)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON object: {exc}") from None
        except RecursionError:
            raise ValueError("not a JSON object: nested too deeply") from None
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        for name in obj:
            check_name(name)
        return obj
    out: dict[str, Any] = {}
    pos = 0
    while True:
        while pos < len(text) and _at_separator(text, pos):
            pos += 1
        if pos >= len(text):
            return out
        eq = text.find("=", pos)
        if eq < 0:
            raise ValueError(f"{text[pos:]!r}: give NAME=VALUE")
        name = text[pos:eq].strip()
        check_name(name)
        pos = eq + 1
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            end = pos
        if end == pos or not _at_separator(text, end):  # a bare word (or JSON run into more: a=1x)
            end = pos
            while not _at_separator(text, end):
                end += 1
            if end == pos:
                raise ValueError(f"{name}=: give a value")
            value = text[pos:end]
        pos = end
        out[name] = value


__all__ = ["RESERVED", "check_name", "parse_variables", "variable_value"]
