"""Chat templates rendered the way Hugging Face ``transformers`` renders them.

A chat template is a Jinja program shipped with a model (``chat_template`` in
``tokenizer_config.json``, a ``chat_template.jinja`` file, GGUF ``tokenizer.chat_template``)
that turns a list of messages into the one string the model reads. Templates come from the
internet, so they run in Jinja's :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`, set up
as ``transformers.utils.chat_template_utils`` sets it up: ``trim_blocks`` and
``lstrip_blocks``, the ``loopcontrols`` extension, ``{% generation %}`` blocks, a ``tojson``
filter that keeps non-ASCII characters, and the globals ``raise_exception``,
``strftime_now``, ``dict`` and a ``namespace`` that refuses underscore names.

>>> t = ChatTemplate("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
...                  "{% if add_generation_prompt %}<assistant>{% endif %}")
>>> t.render([{"role": "user", "content": "hi"}])
'<user>hi<assistant>'
>>> t.render([{"role": "user", "content": "hi"}], add_generation_prompt=False)
'<user>hi'
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bpeinspect.core.chat import bounds
from bpeinspect.core.errors import ChatTemplateError

Message = Mapping[str, Any]

# A message's reasoning goes by several names; templates read ``reasoning_content`` (and
# gpt-oss's ``thinking``), so each is filled from the others, as transformers does.
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def prepare_engine() -> None:
    """Import the template engine and build its sandbox ahead of the first render (an app
    does it at start on a worker: imported at the first render, beside the first paint of the
    chat, it held the interpreter for tens of milliseconds)."""
    _environment()


@functools.lru_cache(maxsize=4)
def _environment(max_text: int = bounds.MAX_TEXT) -> Any:
    """The sandbox whose bounds let a value reach ``max_text`` characters or items (see
    :func:`~bpeinspect.core.chat.bounds.text_limit`): one per limit, as its checks are its own."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.utils
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}``: marks what the assistant writes; renders its body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return caller()

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
    ) -> str:
        # Jinja's own tojson escapes HTML characters; transformers' does not, nor non-ASCII text
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        if not isinstance(fmt, str) or len(fmt) > bounds.MAX_FORMAT:
            raise jinja2.exceptions.SecurityError(
                f"a chat template's date format is limited to {bounds.MAX_FORMAT} characters"
            )
        return datetime.now().strftime(fmt)

    class TemplateDict:
        # ``dict(...)`` without the dict type itself, so no attribute leads out of the sandbox
        def __call__(self, *args: Any, **kwargs: Any) -> dict:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        # no dunder (or any underscore) attributes: they lead to CPython's internals
        def __init__(*args: Any, **kwargs: Any) -> None:
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            TemplateNamespace._check_name(name)
            bounds.check_size(value, max_text)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"a chat template cannot set {name!r} on a namespace")

    class BoundedEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, with what could run for ever or fill the memory refused before it runs:
        huge powers and products, repeats and concatenations past a size, wide formats."""

        intercepted_binops = frozenset({"**", "*", "+", "%", "//"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            bounds.check_binop(operator, left, right, max_text)
            return super().call_binop(context, operator, left, right)

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            bounds.check_call(__obj, args, kwargs, max_text)
            result = ImmutableSandboxedEnvironment.call(__self, __context, __obj, *args, **kwargs)
            bounds.check_size(result, max_text)
            return result

        def wrap_str_format(self, value: Any) -> Any:
            if isinstance(getattr(value, "__self__", None), str):
                bounds.check_format(value.__self__)
            return super().wrap_str_format(value)

    env = BoundedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    for name in ("center", "indent", "wordwrap", "format", "join", "replace", "truncate"):
        env.filters[name] = bounds.bounded_filter(env.filters[name], max_text)
    env.globals["lipsum"] = bounds.lipsum
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


@functools.lru_cache(maxsize=64)
def _compile(source: str, max_text: int = bounds.MAX_TEXT) -> Any:
    import jinja2

    try:
        return _environment(max_text).from_string(source)
    except jinja2.TemplateError as exc:
        raise ChatTemplateError(f"the chat template does not compile: {exc}") from None


def plain_data(value: Any) -> Any:
    """``value`` rebuilt from JSON types only (what the sandbox may see); anything else becomes
    a placeholder naming its type, as transformers does.

    >>> plain_data({"a": (1, 2.5, None), "b": object})
    {'a': (1, 2.5, None), 'b': '<type>'}
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_data(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_data(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return f"<{type(value).__name__}>"


def _alias_reasoning(messages: list[Any]) -> list[Any]:
    out = []
    for m in messages:
        if isinstance(m, dict):
            reasoning = next((m[k] for k in _REASONING_FIELDS if m.get(k) is not None), None)
            if reasoning is not None:
                m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
        out.append(m)
    return out


@dataclasses.dataclass(frozen=True)
class ChatTemplate:
    """One chat template: its Jinja source, the special tokens it is given (``bos_token``,
    ``eos_token``... by name, as transformers passes ``special_tokens_map``), and where it came from."""

    source: str
    special_tokens: Mapping[str, str] = dataclasses.field(default_factory=dict)
    origin: str = ""  # e.g. "tokenizer_config.json beside the file", "built in: ChatML (gpt-4o)"
    name: str = ""  # a short label for menus
    # control tokens the template writes that the vocabulary file does not list (OpenAI's ChatML)
    adds: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def compile(self) -> None:
        """Compile now (raises :class:`ChatTemplateError` for a template Jinja cannot parse)."""
        _compile(self.source)

    def render(
        self,
        messages: Sequence[Message],
        *,
        add_generation_prompt: bool = True,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        plain: bool = False,
        **kwargs: Any,
    ) -> str:
        """The text the model reads for ``messages``; ``kwargs`` reach the template as variables
        (``enable_thinking=False``...) and override the special tokens of the same name.

        ``plain=True`` says the messages are plain JSON data already (parsed from a file), so
        they are not copied; anything else is rebuilt from JSON types first (:func:`plain_data`).

        A template that refuses the messages (``raise_exception``, a sandbox violation, a
        runtime error) raises :class:`ChatTemplateError` with its message.
        """
        import jinja2

        where = f"the chat template ({self.origin})" if self.origin else "the chat template"
        chat = _alias_reasoning(list(messages) if plain else plain_data(list(messages)))
        for m in chat:
            if not isinstance(m, dict):
                raise ChatTemplateError(f"a chat message must be an object, not {m!r}")
        variables = {**self.special_tokens, **kwargs}
        # a value may grow to twice what the template is given (past the usual bound)
        template = self._compiled(where, bounds.text_limit(_characters(chat) + _characters(variables)))
        try:
            with bounds.time_limit():
                return template.render(
                    messages=chat,
                    tools=plain_data(None if tools is None else list(tools)),
                    documents=plain_data(None if documents is None else list(documents)),
                    add_generation_prompt=add_generation_prompt,
                    **plain_data(variables),
                )
        except bounds.TooLong:
            raise ChatTemplateError(f"{where} ran longer than {bounds.TIME_LIMIT:g} s and was stopped") from None
        except MemoryError:
            raise ChatTemplateError(f"{where} ran out of memory and was stopped") from None
        except jinja2.exceptions.SecurityError as exc:
            raise ChatTemplateError(f"{where} was refused: {_one_line(exc)}") from None
        except jinja2.TemplateError as exc:
            raise ChatTemplateError(f"{where} refused the messages: {_one_line(exc)}") from None
        except _FAILURES as exc:
            raise ChatTemplateError(f"{where} failed: {type(exc).__name__}: {_one_line(exc)}") from None

    def _compiled(self, where: str, max_text: int = bounds.MAX_TEXT) -> Any:
        try:
            with bounds.time_limit():
                return _compile(self.source, max_text)
        except bounds.TooLong:
            raise ChatTemplateError(f"{where} took longer than {bounds.TIME_LIMIT:g} s to compile") from None
        except (RecursionError, MemoryError):
            raise ChatTemplateError(f"{where} does not compile: nested too deeply or too large") from None


def _characters(value: Any) -> int:
    """The characters of the texts in plain data (its keys and values)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return sum(_characters(k) + _characters(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(_characters(v) for v in value)
    return 0


_FAILURES = (
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
    ZeroDivisionError,
    RecursionError,
    OverflowError,
)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["ChatTemplate", "Message", "plain_data"]
