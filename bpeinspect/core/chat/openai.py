"""The ChatML forms OpenAI's chat models read, for the built-in OpenAI vocabularies.

OpenAI publishes no template file. These are the forms the tiktokenizer playground shows:
gpt-3.5-turbo and gpt-4 read cl100k_base with three control tokens added
(``<|im_start|>`` 100264, ``<|im_end|>`` 100265, ``<|im_sep|>`` 100266), gpt-4o reads
o200k_base with the same three at 200264-200266.

* gpt-4 and gpt-4o: ``<|im_start|>ROLE<|im_sep|>CONTENT<|im_end|>`` per message, nothing
  between messages, then ``<|im_start|>assistant<|im_sep|>`` for the reply;
* gpt-3.5-turbo: ``<|im_start|>ROLE\\nCONTENT<|im_end|>``, messages joined by a newline, then
  ``\\n<|im_start|>assistant\\n``.

A message's ``name``, when set, stands in for its role.

>>> from bpeinspect.core.chat.template import ChatTemplate
>>> t = ChatTemplate(GPT4_FORM)
>>> t.render([{"role": "user", "content": "hi"}])
'<|im_start|>user<|im_sep|>hi<|im_end|><|im_start|>assistant<|im_sep|>'
>>> ChatTemplate(GPT35_FORM).render([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
'<|im_start|>system\\nbe brief<|im_end|>\\n<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

from bpeinspect.core.chat.template import ChatTemplate
from bpeinspect.core.tokenizer import Tokenizer

# a message's text: its content, or the text of its parts (OpenAI's [{"type": "text", "text": ...}])
_CONTENT = (
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% elif message['content'] %}{% for part in message['content'] %}"
    "{% if part['text'] is string %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
)
_ROLE = "{{ message['name'] or message['role'] }}"

GPT4_FORM = (
    "{% for message in messages %}<|im_start|>" + _ROLE + "<|im_sep|>" + _CONTENT + "<|im_end|>{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant<|im_sep|>{% endif %}"
)
GPT35_FORM = (
    "{% for message in messages %}{% if not loop.first %}{{ '\\n' }}{% endif %}"
    "<|im_start|>" + _ROLE + "{{ '\\n' }}" + _CONTENT + "<|im_end|>{% endfor %}"
    "{% if add_generation_prompt %}{% if messages %}{{ '\\n' }}{% endif %}<|im_start|>assistant{{ '\\n' }}{% endif %}"
)


def _chatml_tokens(base: int) -> dict[str, int]:
    return {"<|im_start|>": base, "<|im_end|>": base + 1, "<|im_sep|>": base + 2}


CL100K_CHAT = _chatml_tokens(100264)
O200K_CHAT = _chatml_tokens(200264)


def _form(name: str, source: str, adds: dict[str, int]) -> ChatTemplate:
    return ChatTemplate(source, {}, f"built in: ChatML as {name} reads it", f"ChatML ({name})", adds)


# vocabulary name -> its chat forms, the usual one first
BUILTIN_FORMS: dict[str, tuple[ChatTemplate, ...]] = {
    "cl100k_base": (_form("gpt-4", GPT4_FORM, CL100K_CHAT), _form("gpt-3.5-turbo", GPT35_FORM, CL100K_CHAT)),
    "o200k_base": (_form("gpt-4o", GPT4_FORM, O200K_CHAT),),
}


def builtin_templates(tok: Tokenizer) -> list[ChatTemplate]:
    """The ChatML forms for one of OpenAI's vocabularies (by its name), else none."""
    return list(BUILTIN_FORMS.get(tok.name, ()))


__all__ = ["BUILTIN_FORMS", "CL100K_CHAT", "GPT35_FORM", "GPT4_FORM", "O200K_CHAT", "builtin_templates"]
