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


def _stdlib_like(tmp_path):
    """A small folder shaped like a source tree: text, caches, a VCS folder, a bad file."""
    (tmp_path / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"\x00\x01print")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (tmp_path / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    (tmp_path / "data.bin").write_bytes(b"\x00\x00\x01")
    # bad UTF-8 only after the sniffed head: found when the file is read, not when listed
    (tmp_path / "late.txt").write_bytes(b"x" * (20_000) + b"\xff tail")
    (tmp_path / "b.txt").write_text("b b b\n", encoding="utf-8")


def test_a_folder_scan_counts_the_binary_files_it_skips_and_does_not_enter_hidden_folders(tmp_path):
    from bpeinspect.core.train.corpus import BINARY, FILTERED, FileFilter, scan_corpus, skipped_note

    _stdlib_like(tmp_path)
    scan = scan_corpus(tmp_path, FileFilter.everything())
    assert [p.name for p in scan.files] == ["a.py", "b.txt", "late.txt"]
    # __pycache__ and .git are not entered
    assert sorted((p.name, why) for p, why in scan.skipped) == [("data.bin", BINARY), ("icon.png", BINARY)]
    assert skipped_note(scan.skipped).startswith("Skipped 2 files: ") and "(binary)" in skipped_note(scan.skipped)
    # by default .bin and .png are not text by name: left out without being read
    default = scan_corpus(tmp_path)
    assert default.files == scan.files
    assert sorted((p.name, why) for p, why in default.skipped) == [("data.bin", FILTERED), ("icon.png", FILTERED)]


def test_a_file_that_is_not_utf8_past_its_head_is_skipped_and_named_when_asked(tmp_path):
    import pytest

    from bpeinspect.core.errors import CorpusError

    _stdlib_like(tmp_path)
    with pytest.raises(CorpusError, match="late.txt"):
        list(iter_corpus(tmp_path))
    from bpeinspect.core.train.corpus import FileFilter

    skipped = []
    texts = list(iter_corpus(tmp_path, "gpt4", skipped=skipped, file_filter=FileFilter.everything()))
    assert texts == ["def a():\n    return 1\n", "b b b\n"]  # nothing of late.txt was read
    reasons = {p.name: why for p, why in skipped}
    assert reasons["late.txt"] == "not UTF-8 text (byte 0xff at offset 20000)"
    assert reasons["icon.png"] == "binary"


def test_training_on_a_folder_with_a_bad_file_finishes_and_reports_it(tmp_path):
    from bpeinspect.core.train import TrainingJob, TrainingPlan

    _stdlib_like(tmp_path)
    for in_process in (True, False):
        plan = TrainingPlan([tmp_path], [270], pattern="gpt4", name="src")
        job = TrainingJob(plan, plan.make_run(in_process=in_process))
        outcome = job.run()
        assert outcome.tokenizers[-1].n_vocab > 256
        assert ("late.txt", "not UTF-8 text (byte 0xff at offset 20000)") in [
            (p.name, why) for p, why in outcome.skipped
        ], in_process
        assert len(outcome.skipped) == 3  # data.bin, icon.png, late.txt


def test_a_latin1_text_file_in_a_folder_is_skipped_as_not_utf8_text_not_as_binary(tmp_path):
    from bpeinspect.core.train.corpus import BINARY, FileFilter, scan_corpus, skipped_counts

    (tmp_path / "good.txt").write_text("plain text\n", encoding="utf-8")
    (tmp_path / "latin.txt").write_bytes("Caf\u00e9 cr\u00e8me\n".encode("latin-1"))
    (tmp_path / "blob.dat").write_bytes(b"\x00\x01\x02")
    scan = scan_corpus(tmp_path, FileFilter.everything())
    assert [p.name for p in scan.files] == ["good.txt"]
    reasons = dict((p.name, why) for p, why in scan.skipped)
    assert reasons == {"blob.dat": BINARY, "latin.txt": "not UTF-8 text (byte 0xe9 at offset 3)"}
    assert skipped_counts(scan.skipped) == {"binary": 1, "not UTF-8 text": 1}
