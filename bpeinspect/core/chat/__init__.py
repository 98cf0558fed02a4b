"""Chat mode: conversations rendered by a model's chat template into the exact token sequence
it reads, counted per message and for the template's own tokens.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("o200k_base")
>>> fmt = chat_format(tok, templates_for(tok)[0])
>>> c = count_chat(fmt, render_chat(fmt, [{"role": "system", "content": "Be brief."},
...                                       {"role": "user", "content": "Hi!"}]))
>>> (c.per_message, c.overhead, c.total)
((3, 2), 11, 16)
"""

from bpeinspect.core.chat.bounds import stop_all
from bpeinspect.core.chat.messages import conversation_of, message_texts
from bpeinspect.core.chat.render import (
    ChatCount,
    ChatFormat,
    EncodedChat,
    RenderedChat,
    chat_format,
    count_chat,
    encode_chat,
    render_chat,
)
from bpeinspect.core.chat.sources import template_from_file, templates_for
from bpeinspect.core.chat.template import ChatTemplate, prepare_engine
from bpeinspect.core.chat.variables import check_name, parse_variables, variable_value
from bpeinspect.core.errors import ChatTemplateError

__all__ = [
    "ChatCount",
    "ChatFormat",
    "ChatTemplate",
    "ChatTemplateError",
    "EncodedChat",
    "RenderedChat",
    "chat_format",
    "check_name",
    "conversation_of",
    "count_chat",
    "encode_chat",
    "message_texts",
    "parse_variables",
    "prepare_engine",
    "render_chat",
    "stop_all",
    "template_from_file",
    "templates_for",
    "variable_value",
]
