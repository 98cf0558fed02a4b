"""Finding a tokenizer's chat template beside its file, inside it, or in a file the user names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.chat import ChatTemplateError, template_from_file, templates_for
from bpeinspect.core.chat.sources import source_path
from bpeinspect.core.io.formats import save


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    tok = Tokenizer.from_merges([(104, 105)], pattern="r50k", special_tokens={"<s>": 257, "</s>": 258})
    save(tok, tmp_path / "tokenizer.json")
    return tmp_path


def _config(folder: Path, **fields) -> None:
    (folder / "tokenizer_config.json").write_text(json.dumps(fields), "utf-8")


def test_tokenizer_config_beside_the_file(folder: Path) -> None:
    _config(folder, chat_template="{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
            bos_token={"__type": "AddedToken", "content": "<s>"}, eos_token="</s>", pad_token=None)  # fmt: skip
    tok = load_tokenizer(str(folder / "tokenizer.json"))
    (t,) = templates_for(tok)
    assert t.origin == "tokenizer_config.json beside the file"
    assert t.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}
    assert t.render([{"role": "user", "content": "hi"}]) == "<s>hi"
    assert templates_for(tok, spec=str(folder)) == [t]  # opened as a folder


def test_named_templates_default_first(folder: Path) -> None:
    _config(folder, chat_template=[{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}])
    found = templates_for(load_tokenizer(str(folder / "tokenizer.json")))
    assert [(t.name, t.source) for t in found] == [("chat template: default", "D"), ("chat template: tool_use", "T")]


def test_chat_template_jinja_comes_first_and_special_tokens_map_fills_in(folder: Path) -> None:
    _config(folder, chat_template="from config")
    (folder / "chat_template.jinja").write_text("from jinja {{ eos_token }}", "utf-8")
    (folder / "special_tokens_map.json").write_text(json.dumps({"eos_token": "</s>"}), "utf-8")
    found = templates_for(load_tokenizer(str(folder / "tokenizer.json")))
    assert [t.source for t in found] == ["from jinja {{ eos_token }}", "from config"]
    assert found[0].render([]) == "from jinja </s>"


def test_a_template_inside_tokenizer_json(folder: Path) -> None:
    path = folder / "tokenizer.json"
    obj = json.loads(path.read_text("utf-8"))
    obj["chat_template"] = "inside"
    path.write_text(json.dumps(obj), "utf-8")
    found = templates_for(load_tokenizer(str(path)))
    assert [(t.source, t.origin) for t in found] == [("inside", "inside tokenizer.json")]


def test_no_template(folder: Path) -> None:
    assert templates_for(load_tokenizer(str(folder / "tokenizer.json"))) == []


def test_template_from_a_file_the_user_names(folder: Path, tmp_path: Path) -> None:
    _config(folder, bos_token="<s>")
    jinja = folder / "mine.jinja"
    jinja.write_text("{{ bos_token }}!", "utf-8")
    (t,) = template_from_file(jinja)
    assert t.render([]) == "<s>!" and t.name == "mine"
    cfg = tmp_path / "other_config.json"
    cfg.write_text(json.dumps({"chat_template": "X", "eos_token": "</s>"}), "utf-8")
    assert template_from_file(cfg)[0].special_tokens == {"eos_token": "</s>"}
    with pytest.raises(ChatTemplateError, match="no chat template"):
        (tmp_path / "empty.json").write_text("{}", "utf-8")
        template_from_file(tmp_path / "empty.json")
    with pytest.raises(ChatTemplateError, match="no such file"):
        template_from_file(tmp_path / "absent.jinja")
    with pytest.raises(ChatTemplateError, match="not valid JSON"):
        (tmp_path / "bad.json").write_text("{", "utf-8")
        template_from_file(tmp_path / "bad.json")


def test_source_path_reads_the_path_out_of_source(folder: Path) -> None:
    tok = load_tokenizer(str(folder / "tokenizer.json"))
    assert source_path(tok) == (folder / "tokenizer.json").resolve()
    assert source_path(load_tokenizer("r50k_base")) is None
