"""``train --sizes``: one run, a tokenizer per size beside OUT in OUT's format, each the one a
training to that size alone gives."""

from __future__ import annotations

import pytest

from bpeinspect.cli import commands as cli
from bpeinspect.cli.train import sized_path
from bpeinspect.core.io.formats import format_for_path, load_path
from bpeinspect.core.train.run import train_tokenizer
from tests.paths import SHARED

SPECIAL = "<|endoftext|>"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    src = tmp_path_factory.mktemp("corpus") / "ts.txt"
    src.write_text((SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8"), encoding="utf-8")
    return src


@pytest.mark.parametrize(("out_name", "tie_break"), [("tokenizer.json", "hf"), ("bpe.json", "first-seen")])
def test_each_size_is_written_in_outs_format_and_equals_training_to_it_alone(tmp_path, capsys, corpus, out_name,
                                                                              tie_break):
    out = tmp_path / out_name
    args = ["train", str(corpus), "--sizes", "2000, 300,1k", "--special-token", SPECIAL, "--tie-break", tie_break]
    assert cli.main([*args, "-o", str(out)]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    text = corpus.read_text(encoding="utf-8")
    for size in (300, 1000, 2000):
        path = sized_path(out, size)
        assert f"wrote {path}" in err
        tok = load_path(path)
        assert ('"model"' in path.read_text(encoding="utf-8")) == (format_for_path(out) == "huggingface")
        ref = train_tokenizer(text, size, special_tokens=[SPECIAL], tie_break=tie_break)
        assert tok.n_vocab == size and tok.merges == ref.merges and tok.special_tokens == ref.special_tokens
        sample = f"Taylor Swift {SPECIAL} folklore"
        assert tok.encode(sample, allowed_special="all") == ref.encode(sample, allowed_special="all")
    assert not out.exists() and "ran out of pairs" not in err


def test_sizes_past_what_the_corpus_holds_say_so_and_keep_what_was_reached(tmp_path, capsys):
    src = tmp_path / "small.txt"
    src.write_text("abab cdcd abab", encoding="utf-8")
    out = tmp_path / "small.json"
    assert cli.main(["train", str(src), "--sizes", "258,1000", "--pattern", "gpt2", "-o", str(out)]) == 0
    assert load_path(tmp_path / "small-258.json").n_vocab == 258
    full = train_tokenizer("abab cdcd abab", 1000, pattern="gpt2")
    assert load_path(sized_path(out, full.n_vocab)).merges == full.merges
    assert f"the corpus ran out of pairs: {full.n_vocab} tokens, fewer than the 1000 asked for" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("sizes", "message"),
    [("1k, lots", "--sizes: 'lots' is not a vocabulary size"), ("257,1k", "--sizes: Vocabulary size 257 is too small")],
)
def test_a_bad_size_is_one_line_and_writes_nothing(tmp_path, capsys, corpus, sizes, message):
    out = tmp_path / "bpe.tiktoken"
    assert cli.main(["train", str(corpus), "--sizes", sizes, "--special-token", SPECIAL, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_sizes_need_a_file_name_not_a_folder_nor_a_vocab_size_too(tmp_path, capsys, corpus):
    assert cli.main(["train", str(corpus), "--sizes", "300,400", "-o", str(tmp_path)]) == 2
    assert "--sizes writes one file per size" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["train", str(corpus), "--sizes", "300", "--vocab-size", "300", "-o", str(tmp_path / "a.json")])
    assert list(tmp_path.iterdir()) == []


def _source_tree(top):
    """A folder as a project holds it: text, a binary file, an image, a .gitignore'd file."""
    files = {
        "a.txt": "the cat sat on the mat\n",
        "b.md": "# the mat\nthe cat again\n",
        "sub/c.py": "def the_cat():\n    return 'mat'\n",
        "secret.txt": "zzqq zzqq zzqq zzqq zzqq\n",
        ".gitignore": "secret.txt\n",
    }
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text, encoding="utf-8")
    (top / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    (top / "blob.txt").write_bytes(b"zzqq\x00zzqq")
    return files


def test_train_on_a_folder_reads_its_text_files_and_says_what_it_left_out(tmp_path, capsys):
    src = tmp_path / "src"
    files = _source_tree(src)
    out = tmp_path / "f.json"
    assert cli.main(["train", str(src), "--vocab-size", "270", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    texts = [files["a.txt"], files["b.md"], files["sub/c.py"]]  # in the scan's order
    assert load_path(out).merges == train_tokenizer(texts, 270).merges
    assert "Skipped 3 files (1 binary, 1 ignored by .gitignore, 1 left out by the file filter)" in err
    assert len(err.strip().splitlines()) == 2  # wrote ..., Skipped ...


def test_train_on_a_folder_with_include_exclude_and_no_gitignore(tmp_path, capsys):
    src = tmp_path / "src"
    files = _source_tree(src)
    out = tmp_path / "f.json"
    args = ["train", str(src), "--vocab-size", "262", "--include", "*.txt,*.py", "--exclude", "sub/"]
    assert cli.main([*args, "--no-gitignore", "-o", str(out)]) == 0
    assert load_path(out).merges == train_tokenizer([files["a.txt"], files["secret.txt"]], 262).merges
    err = capsys.readouterr().err
    assert "Skipped 4 files" in err and "ignored" not in err
    # the same with --sizes, and a file given by name beside the folder
    extra = tmp_path / "extra.text"
    extra.write_text("named file\n", encoding="utf-8")
    out = tmp_path / "s.json"
    assert cli.main(["train", str(src), str(extra), "--sizes", "258,262", "--include", "*.md", "-o", str(out)]) == 0
    want = train_tokenizer([files["b.md"], "named file\n"], 262).merges
    assert load_path(sized_path(out, 262)).merges == want
    assert load_path(sized_path(out, 258)).merges == want[:2]


def test_a_folder_with_nothing_to_train_on_is_one_line(tmp_path, capsys):
    src = tmp_path / "src"
    _source_tree(src)
    out = tmp_path / "f.json"
    assert cli.main(["train", str(src), "--vocab-size", "262", "--include", "*.rst", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no files to train on in this folder" in err
    assert "left out by the file filter" in err and not out.exists()


def test_the_saved_settings_record_the_file_filter_alike_from_train_and_the_training_window(tmp_path, capsys):
    from bpeinspect.core.io import save_noted
    from bpeinspect.core.train import FileFilter, TrainingJob, TrainingPlan

    src = tmp_path / "src"
    _source_tree(src)
    wanted = {"include": ["*.txt", "*.py"], "exclude": ["sub/"], "gitignore": False}
    filter_args = ["--include", "*.txt,*.py", "--exclude", "sub/", "--no-gitignore"]
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    assert cli.main(["train", str(src), "--vocab-size", "262", *filter_args, "-o", str(one)]) == 0
    assert cli.main(["train", str(src), "--sizes", "258,262", *filter_args, "-o", str(many)]) == 0
    capsys.readouterr()
    # the training window's plan with the same filter, saved as the window saves
    plan = TrainingPlan([src], [262], "gpt4", name="src", file_filter=FileFilter.from_settings(wanted))
    window = TrainingJob(plan, plan.make_run(in_process=True)).run().tokenizers[-1]
    save_noted(window, tmp_path / "window.json", "native")
    saved = {
        "train": load_path(one),
        "train --sizes 258": load_path(sized_path(many, 258)),
        "train --sizes 262": load_path(sized_path(many, 262)),
        "window": load_path(tmp_path / "window.json"),
    }
    for how, tok in saved.items():
        assert tok.training is not None, how
        assert tok.training.settings["file_filter"] == wanted, how
        assert tok.training.settings["corpus"] == [str(src)], how
    assert saved["train"].merges == saved["window"].merges == saved["train --sizes 262"].merges
    # the recorded filter repeats the run: the same files, the same merges
    again = FileFilter.from_settings(saved["window"].training.settings["file_filter"])
    plan = TrainingPlan([src], [262], "gpt4", file_filter=again)
    assert TrainingJob(plan, plan.make_run(in_process=True)).run().tokenizers[-1].merges == saved["window"].merges
    # the default filter (the .gitignore honoured) is recorded as it was
    plan = TrainingPlan([src], [262], "gpt4")
    settings = TrainingJob(plan, plan.make_run(in_process=True)).run().tokenizers[-1].training.settings
    assert settings["file_filter"]["gitignore"] is True
    assert FileFilter.from_settings(settings["file_filter"]) == FileFilter()
