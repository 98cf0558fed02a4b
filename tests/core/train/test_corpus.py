"""Corpus files for training: folders walked in order (hidden ones skipped), files streamed in
blocks that train as the whole files do, and a clear error for text that is not UTF-8."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpeinspect.core import train_tokenizer
from bpeinspect.core.train.corpus import CorpusError, corpus_files, iter_corpus
from tests.core.corpus import code_samples, taylorswift


def test_corpus_folder_streams_files_in_blocks(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    texts = {"a.txt": taylorswift(), "sub/b.py": code_samples(50_000)[0], "c.txt": "x\r\ny\r\n"}
    for name, text in texts.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
    (tmp_path / ".hidden" / "skip.txt").write_text("never read")
    assert [p.relative_to(tmp_path).as_posix() for p in corpus_files(tmp_path)] == ["a.txt", "c.txt", "sub/b.py"]
    blocks = list(iter_corpus(tmp_path, "gpt4", block_bytes=4096))
    assert len(blocks) > 10
    assert "".join(blocks) == texts["a.txt"] + texts["c.txt"] + texts["sub/b.py"]
    by_file = [texts["a.txt"], texts["c.txt"], texts["sub/b.py"]]
    streamed = train_tokenizer(iter_corpus(tmp_path, "gpt4", block_bytes=4096), 600, pattern="gpt4")
    assert streamed.merges == train_tokenizer(by_file, 600, pattern="gpt4").merges
    # without a preset pattern a file is read whole, however big
    assert list(iter_corpus(tmp_path / "c.txt")) == ["x\r\ny\r\n"]
    assert list(iter_corpus(tmp_path / "a.txt", block_bytes=4096)) == [texts["a.txt"]]
    assert len(list(iter_corpus(tmp_path / "a.txt", r"\w+|\W+", block_bytes=4096))) == 1


def test_corpus_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(("é" * 3000).encode("utf-8") + b"\xff tail")
    with pytest.raises(CorpusError, match=r"bad\.txt.*0xff at offset 6000") as info:
        train_tokenizer(iter_corpus(path, "gpt4", block_bytes=1000), 300)
    assert isinstance(info.value, ValueError)
    with pytest.raises(CorpusError, match="no such file"):
        list(iter_corpus(tmp_path / "missing"))
