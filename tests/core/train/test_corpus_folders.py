"""A folder given as a training corpus takes its text files only."""

from bpeinspect.core.train.corpus import corpus_files, iter_corpus


def test_folder_skips_pycache_and_binary_files(tmp_path):
    (tmp_path / "a.py").write_text("print('hi')\n", encoding="utf-8")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"\x00\x01print")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.bin").write_bytes(b"text then a NUL \x00 byte")
    (tmp_path / "sub" / "b.txt").write_text("h\u00e9llo\n", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in corpus_files(tmp_path)] == ["a.py", "sub/b.txt"]
    assert list(iter_corpus(tmp_path)) == ["print('hi')\n", "h\u00e9llo\n"]


def test_folder_keeps_a_text_file_whose_sniffed_head_cuts_a_character(tmp_path):
    from bpeinspect.core.train import corpus

    text = "a" * (corpus.SNIFF_BYTES - 1) + "\u00e9"  # the 2-byte character straddles the sniff
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    assert corpus_files(tmp_path) == [tmp_path / "t.txt"]


def test_a_file_given_by_name_is_kept_even_if_binary(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"\x00")
    assert corpus_files(f) == [f]
