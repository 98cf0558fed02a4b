"""One Format record per format; every table of formats is derived from the records."""

from __future__ import annotations

import pytest

from bpeinspect.cli.commands import build_parser
from bpeinspect.core import Tokenizer, VocabularyError
from bpeinspect.core.io.formats import (
    FORMATS,
    detect_format,
    format_for_path,
    is_vocabulary_name,
    open_patterns,
    save,
    saveable,
)


@pytest.mark.parametrize("fmt", [f for f in saveable() if f.suffix], ids=lambda f: f.name)
def test_each_saveable_format_round_trips_by_its_first_name(fmt, tmp_path):
    name = fmt.patterns[0].replace("*", "out")
    assert format_for_path(tmp_path / name) == fmt.name
    tok = Tokenizer.from_merges([(104, 105), (256, 33)], pattern="gpt2")  # every format can hold it
    written = save(tok, tmp_path / name)
    assert detect_format(written) == fmt.name
    assert is_vocabulary_name(written.name)
    assert written.name.endswith(fmt.suffix)


def test_read_only_formats_are_refused_by_name(tmp_path):
    with pytest.raises(VocabularyError, match="writing a GGUF model file is not supported"):
        format_for_path(tmp_path / "x.gguf")
    with pytest.raises(VocabularyError, match="cannot tell the format"):
        format_for_path(tmp_path / "x.txt")


def test_the_cli_offers_exactly_the_saveable_formats():
    parser = build_parser()
    convert = parser._subparsers._group_actions[0].choices["convert"]  # argparse keeps them here
    choices = next(a.choices for a in convert._actions if a.dest == "format")
    assert list(choices) == [f.name for f in saveable()]


def test_open_patterns_cover_every_format():
    for f in FORMATS.values():
        for pat in f.patterns:
            assert is_vocabulary_name(pat.replace("*", "x"))
    assert not is_vocabulary_name("notes.txt")
    assert set(open_patterns()) >= {"*.tiktoken", "*.json", "*.model", "*.gguf", "*.vocab", "*.bpe"}
