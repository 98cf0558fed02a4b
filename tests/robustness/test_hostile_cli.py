"""Hostile input at the command line: terminal escapes, catastrophic split patterns,
unbounded input, a pipe as the vocabulary, ``list``, ``train -o``, and
``cli.main``'s promise: every error is one line and exit status 2, an internal error asks
for a report and shows a traceback only with ``BPEINSPECT_DEBUG=1``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from bpeinspect.cli import commands as cli
from bpeinspect.core import limits
from bpeinspect.core.io.formats import save

from .seeds import small_tokenizer

ROOT = Path(__file__).resolve().parents[2]
ESCAPES = ("\x1b", "\x07", "\x9b", "\x90", "\x7f")  # ESC, BEL, CSI, DCS, DEL

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("BPEINSPECT_DEBUG", raising=False)


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bpeinspect-cli: error: "), err
    assert "Traceback" not in err
    return lines[0]


def no_escapes(text: str) -> None:
    for c in ESCAPES:
        assert c not in text, f"{c!r} reaches the terminal: {text[:300]!r}"


def hostile_native(tmp_path: Path) -> Path:
    """A native file whose name, special token and a token hold terminal escapes."""
    p = tmp_path / "small.json"
    save(small_tokenizer(), p)
    obj = json.loads(p.read_text(encoding="utf-8"))
    obj["name"] = "evil\x1b]0;pwned\x07\x1b[31mRED\x9b2J"
    obj["special_tokens"] = {"<|\x1b[5m|>": 400, "<|\x9b2J|>": 401}
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


# -- terminal escapes ------------------------------------------------------------------------------------


def test_info_escapes_the_name_and_tokens(tmp_path, capsys):
    code, out, err = run(capsys, "info", str(hostile_native(tmp_path)))
    assert code == 0, err
    no_escapes(out + err)
    assert "evil␛]0;pwned␇␛[31mRED⟨U+009B⟩2J" in out


def test_list_escapes_names_from_the_recent_list(tmp_path, capsys):
    vocab = hostile_native(tmp_path)
    (tmp_path / "cfg").mkdir()
    entry = {"name": "x\x1b[2Jy\x9b", "source": "recent", "spec": str(vocab), "vocab_size": 3, "description": "\x07"}
    (tmp_path / "cfg" / "recent.json").write_text(json.dumps([entry]), encoding="utf-8")
    for args in (["list", "--no-caches"], ["list", "--no-caches", "--json"]):
        code, out, err = run(capsys, *args)
        assert code == 0, err
        no_escapes(out + err)
    assert json.loads(out)[-1]["name"] == "x\x1b[2Jy\x9b"  # JSON keeps the text exactly


def test_encode_json_escapes_c1_controls(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("a<|\x9b2J|>b\x1bc\u202ed\n", encoding="utf-8")
    vocab = hostile_native(tmp_path)
    code, out, err = run(capsys, "encode", "-t", str(vocab), "--special", "all", "--output", "json", str(text))
    assert code == 0, err
    no_escapes(out)
    assert "\u202e" not in out
    got = json.loads(out)
    assert got["tokenizer"].startswith("evil\x1b]0;") and "<|\x9b2J|>" in [t["text"] for t in got["tokens"]]
    assert bytes.fromhex("".join(t["bytes"] for t in got["tokens"])) == text.read_bytes()


def test_decode_to_a_terminal_shows_controls_in_the_notation(capsys, monkeypatch):
    from bpeinspect.core import load_tokenizer

    ids = load_tokenizer("gpt2").encode("\x1b[2J\n")  # a clear-screen sequence
    code, out, _ = run(capsys, "decode", "-t", "gpt2", *map(str, ids))
    assert code == 0 and out == "\x1b[2J\n"  # into a pipe: the exact text
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "decode", "-t", "gpt2", *map(str, ids))
    assert code == 0 and out == "␛[2J\n"


def test_errors_and_warnings_are_escaped(tmp_path, capsys):
    bad = tmp_path / "bad\x1b[31m.tiktoken"
    bad.write_bytes(b"not base64 at all\n")
    code, _, err = run(capsys, "info", str(bad))
    no_escapes(one_line_error(code, err))


def test_tables_escape_cells(tmp_path, capsys):
    doc = tmp_path / "doc\x1b[31m.txt"
    doc.write_text("hello", encoding="utf-8")
    code, out, err = run(capsys, "stats", "-t", "gpt2", str(doc))
    assert code == 0, err
    no_escapes(out)


# -- catastrophic split patterns ------------------------------------------------------------------------


@pytest.fixture
def quick_limit(monkeypatch):
    monkeypatch.setattr(limits, "SPLIT_SECONDS", 0.3)
    monkeypatch.setattr(limits, "SPLIT_SECONDS_PER_CHAR", 0.0)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pattern", [r"(a|a)+$", r"(a+)+$"])
def test_catastrophic_pattern_is_stopped_by_the_time_limit(tmp_path, capsys, quick_limit, pattern):
    text = tmp_path / "a.txt"
    text.write_text("a" * 3000 + "!\n", encoding="utf-8")
    code, _, err = run(capsys, "encode", "-t", "gpt2", "--pattern", pattern, str(text))
    line = one_line_error(code, err)
    assert "time limit" in line and "backtracks" in line


@pytest.mark.timeout(30)
@pytest.mark.parametrize("fmt", ["tokenizer.json", "small.model", "small.json"])
def test_catastrophic_pattern_in_a_file(tmp_path, capsys, quick_limit, fmt):
    from bpeinspect.core.io.formats import with_settings

    vocab = save(with_settings(small_tokenizer(), pattern=r"(a|a)+$"), tmp_path / fmt)
    text = tmp_path / "a.txt"
    text.write_text("a" * 40 + "!", encoding="utf-8")
    code, _, err = run(capsys, "encode", "-t", str(vocab), str(text))
    line = one_line_error(code, err)
    assert "time limit" in line
    assert str(vocab) in line and "stored in the file" in line and "--pattern" in line  # the user did not type it: say where it is from


@pytest.mark.timeout(30)
def test_the_limit_holds_in_worker_threads_too(quick_limit):
    import threading

    from bpeinspect.core import Tokenizer
    from bpeinspect.core.errors import PatternError

    tok = Tokenizer(small_tokenizer().mergeable_ranks, pattern=r"(a|a)+$")
    got: list[BaseException] = []

    def work() -> None:
        try:
            tok.encode_ordinary("a" * 40 + "!")
        except BaseException as exc:
            got.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join(20)
    assert got and isinstance(got[0], PatternError) and "time limit" in str(got[0])


def cli_process(*args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", **kw.pop("env", {}))
    return subprocess.Popen(
        [sys.executable, "-P", "-m", "bpeinspect.cli", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw,
    )  # fmt: skip


@pytest.mark.timeout(90)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the CPU time")
def test_ctrl_c_stops_a_catastrophic_pattern(tmp_path):
    text = tmp_path / "a.txt"
    text.write_text("a" * 500_000 + "!", encoding="utf-8")  # a time limit of 12 s of CPU time
    # as from a terminal: a run started in the background of a script (land.sh &) inherits
    # SIGINT ignored, and Python then never sees Ctrl-C
    proc = cli_process("encode", "-t", "gpt2", "--pattern", r"(a|a)+$", str(text),
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    # wait until it is deep in the pattern: 3 s of CPU time (starting and loading take well under 1 s)
    while cpu_seconds(proc.pid) < 3.0 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    # stopped by Ctrl-C, not by the time limit (which would say so) nor by the end of the search
    assert proc.returncode == 130 and err.strip().endswith("interrupted"), err


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux's /proc), 0 if it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- unbounded input, and --output json streams --------------------------------------------------------


@pytest.mark.parametrize("command", ["encode", "train"])
def test_dev_zero_is_refused_with_a_clear_error(tmp_path, capsys, monkeypatch, command):
    monkeypatch.setattr(limits, "MAX_INPUT", 1 << 16)
    args = ["encode", "-t", "gpt2", "/dev/zero"] if command == "encode" else [
        "train", "/dev/zero", "--vocab-size", "260", "-o", str(tmp_path / "x.json")]  # fmt: skip
    code, _, err = run(capsys, *args)
    line = one_line_error(code, err)
    assert "/dev/zero" in line and "more than 64 KB of text" in line  # the limit in force, not the default


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("args", [["stats", "-t", "gpt2", "/dev/zero"], ["stats", "--jsonl", "/dev/zero", "-t", "gpt2"]])
def test_stats_name_a_device_as_one(capsys, args):
    line = one_line_error(*run(capsys, *args)[::2])
    assert "/dev/zero: not a regular file" in line, line


@pytest.mark.parametrize("args", [["encode", "-t", "gpt2"], ["decode", "-t", "gpt2"], ["stats", "-t", "gpt2", "-"]])
def test_standard_input_is_capped_too(capsys, monkeypatch, args):
    import io

    monkeypatch.setattr(limits, "MAX_INPUT", 1000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1 " * 2500)))
    code, _, err = run(capsys, *args)
    assert "standard input: more than 1,000 bytes" in one_line_error(code, err)


def test_json_output_streams(tmp_path, capsys):
    from bpeinspect.core import load_tokenizer

    text = ("Hello wörld, <|endoftext|> 12345 naïve 日本語 👍🏽\n" * 2000)[:80_000]
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    tok = load_tokenizer("gpt2")
    tok.encode_ordinary(text)  # warm the caches: measure the output, not the first encode
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "encode", "-t", "gpt2", "--output", "json", "--special", "all", str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 0, err
    enc = tok.encode_with_offsets(text, allowed_special="all")
    want = {
        "tokenizer": tok.name,
        "ids": list(enc.ids),
        "tokens": [
            {"id": t.id, "text": t.text_bytes.decode("utf-8", errors="replace"), "bytes": t.text_bytes.hex(),
             "chars": list(t.char_span), "special": t.special, "added": tok.is_added(t.id)}
            for t in enc
        ],
    }  # fmt: skip
    assert json.loads(out) == want
    # the old way built every token's dict first: ~190 MB per MB of text; the output is ~8 MB here
    assert peak < 3 * len(out) + (24 << 20), f"{peak >> 20} MB for {len(out) >> 20} MB of JSON"


class _FileOut:
    """A standard output that writes to a file (capsys would hold the whole output in memory)."""

    def __init__(self, path: Path) -> None:
        self.f = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, s: str) -> int:
        return self.f.write(s)

    def flush(self) -> None:
        self.f.flush()

    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize("output", ["json", "ids"])
def test_a_long_text_is_encoded_and_written_a_part_at_a_time(tmp_path, monkeypatch, output):
    from bpeinspect.cli import encode
    from bpeinspect.core import load_tokenizer

    monkeypatch.setattr(encode, "PART_CHARS", 1 << 12, raising=False)
    line = "Hello wörld, <|endoftext|> 12345 naïve 日本語 👍🏽\r\n the  fox\n\n"
    text = "".join(f"{i} {line}" for i in range(2500))  # ~150,000 characters: ~37 parts
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8", newline="")
    tok = load_tokenizer("cl100k_base")
    enc = tok.encode_with_offsets(text, allowed_special="all")
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "stdout", _FileOut(out))
    tracemalloc.start()
    try:
        code = cli.main(["encode", "-t", "cl100k_base", "--output", output, "--special", "all", str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        sys.stdout.f.close()
    assert code == 0
    if output == "ids":
        assert out.read_text(encoding="utf-8") == " ".join(map(str, enc.ids)) + "\n"
    else:
        got = json.loads(out.read_text(encoding="utf-8"))
        assert got["ids"] == list(enc.ids)
        assert [(t["id"], t["chars"], t["special"]) for t in got["tokens"]] == [
            (t.id, list(t.char_span), t.special) for t in enc
        ]
    # here under 2 MB; the whole text encoded at once took 20 MB (JSON) and 5.6 MB (ids)
    assert peak < 4 << 20, f"{peak / 2**20:.2f} MB for {len(text):,} characters"


# -- a pipe as the vocabulary ---------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_process_substitution_at_the_command_line(tmp_path):
    vocab = save(small_tokenizer(), tmp_path / "small.tiktoken")
    script = f'exec {sys.executable} -P -m bpeinspect.cli info <(cat {vocab}; cat {vocab} | head -c 0)'
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    done = subprocess.run(["bash", "-c", script], check=False, capture_output=True, text=True, env=env, timeout=50)
    assert done.returncode == 0, done.stderr
    assert "vocab size:" in done.stdout


# -- list ----------------------------------------------------------------------------------------------


def test_list_with_an_empty_tokenizer_json_in_the_hf_cache(tmp_path, capsys):
    snap = tmp_path / "hub" / "models--x--y" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "tokenizer.json").write_text("{}", encoding="utf-8")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "recent.json").write_text("[" * 50_000, encoding="utf-8")
    code, out, err = run(capsys, "list")
    assert code == 0, err
    assert "cl100k_base" in out


def test_a_dangling_link_is_named_as_one(tmp_path, capsys):
    link = tmp_path / "v.tiktoken"
    link.symlink_to(tmp_path / "gone.tiktoken")
    code, _, err = run(capsys, "info", str(link))
    line = one_line_error(code, err)
    assert "symbolic link" in line and "no built-in" not in line


# -- train -o into a missing folder ---------------------------------------------------------------------


@pytest.mark.parametrize("out", ["/missing/dir/x.json", "{tmp}/file.txt/x.json"])
def test_train_checks_the_output_before_training(tmp_path, capsys, monkeypatch, out):
    from bpeinspect.cli import train

    (tmp_path / "file.txt").write_text("hello", encoding="utf-8")
    monkeypatch.setattr(train, "train_tokenizer", lambda *a, **k: pytest.fail("trained before checking -o"))
    code, _, err = run(capsys, "train", str(tmp_path / "file.txt"), "--vocab-size", "260", "-o", out.format(tmp=tmp_path))
    line = one_line_error(code, err)
    assert "folder" in line


@pytest.mark.parametrize("out", ["/missing/dir/x.tsv", "{tmp}/file.txt/x.tsv"])
def test_count_checks_the_output_before_counting(tmp_path, capsys, monkeypatch, out):
    from bpeinspect.cli import count

    (tmp_path / "file.txt").write_text("hello", encoding="utf-8")
    monkeypatch.setattr(count, "count_pretokens", lambda *a, **k: pytest.fail("counted before checking -o"))
    code, _, err = run(capsys, "count", str(tmp_path / "file.txt"), "-o", out.format(tmp=tmp_path))
    line = one_line_error(code, err)
    assert "folder" in line and ".tmp" not in line


def test_count_names_the_output_it_cannot_write(tmp_path, capsys, monkeypatch):
    from bpeinspect.core.io import atomic

    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    (tmp_path / "file.txt").write_text("hello", encoding="utf-8")
    monkeypatch.setattr(atomic, "_unnamed_beside", full)
    code, _, err = run(capsys, "count", str(tmp_path / "file.txt"), "-o", str(tmp_path / "x.tsv"))
    line = one_line_error(code, err)
    assert f"{tmp_path / 'x.tsv'}: cannot write it: No space left on device" in line, line
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


# -- cli.main: one line, exit status 2, a report for internal errors ------------------------------------------


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyError("k"), RecursionError(), AssertionError()])
def test_main_turns_an_internal_error_into_one_line_asking_for_a_report(capsys, monkeypatch, exc):
    from bpeinspect.cli import tokenizers

    def broken(_args):
        raise exc

    monkeypatch.setattr(tokenizers, "cmd_list", broken)  # main() builds its parser afresh
    code, _, err = run(capsys, "list")
    line = one_line_error(code, err)
    assert "internal error" in line and type(exc).__name__ in line and "report" in line and "BPEINSPECT_DEBUG" in line


def test_main_out_of_memory_is_one_line(capsys, monkeypatch):
    from bpeinspect.cli import tokenizers

    def hungry(_args):
        raise MemoryError

    monkeypatch.setattr(tokenizers, "cmd_list", hungry)
    code, _, err = run(capsys, "list")
    assert "memory" in one_line_error(code, err)


def test_main_debug_shows_the_traceback(capsys, monkeypatch):
    from bpeinspect.cli import tokenizers

    def broken(_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(tokenizers, "cmd_list", broken)
    monkeypatch.setenv("BPEINSPECT_DEBUG", "1")
    code, _, err = run(capsys, "list")
    assert code == 2 and "Traceback" in err and "RuntimeError: boom" in err


# -- -j: at least 1, at most a few per core -------------------------------------------------------------


@pytest.mark.parametrize("command", ["count", "stats"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_fewer_than_one_process_is_refused_in_one_line(capsys, tmp_path, command, value):
    text = tmp_path / "a.txt"
    text.write_text("hello world", encoding="utf-8")
    extra = ["-o", str(tmp_path / "out.tsv")] if command == "count" else ["-t", "gpt2"]
    with pytest.raises(SystemExit) as info:
        cli.main([command, "-j", value, *extra, str(text)])
    err = capsys.readouterr().err
    assert info.value.code == 2
    line = one_line_error(2, err)
    assert "at least 1" in line
    assert not (tmp_path / "out.tsv").exists()


def test_too_many_processes_are_capped_and_the_user_told(capsys, tmp_path, monkeypatch):
    from bpeinspect.core.train import counts

    text = tmp_path / "a.txt"
    text.write_text("hello world " * 100, encoding="utf-8")
    asked: list[object] = []
    real = counts.count_pretokens

    def spy(*a, processes=None, **kw):
        asked.append(processes)
        return real(*a, processes=1, **kw)

    monkeypatch.setattr("bpeinspect.cli.count.count_pretokens", spy)
    from bpeinspect.core.pool import max_processes

    cap = max_processes()
    code, _, err = run(capsys, "count", "-j", "100000", "-o", str(tmp_path / "out.tsv"), str(text))
    assert code == 0, err
    assert asked == [cap]
    assert f"using {cap}" in err and "100000" in err


# -- "wrote PATH" lines escape the path as error lines do -------------------------------------------------


def test_wrote_lines_escape_terminal_codes_in_the_path(capsys, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text("hello world " * 20, encoding="utf-8")
    hostile = "out\x1b]0;owned\x07\x1b[2J\nfake.tsv"
    code, out, err = run(capsys, "count", "-j", "1", "-o", str(tmp_path / hostile), str(text))
    assert code == 0, err
    no_escapes(err)
    assert len(err.strip().splitlines()) == 1
    vocab = tmp_path / ("v\x1b[2J\n.tiktoken")
    code, out, err = run(capsys, "convert", "gpt2", str(vocab))
    assert code == 0, err
    no_escapes(err)
    assert len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "train", str(text), "--vocab-size", "260", "-o", str(vocab))
    assert code == 0, err
    no_escapes(err)
    wrote = [line for line in err.splitlines() if line.startswith("wrote ")]
    assert len(wrote) == 1 and wrote[0].endswith("tokens)"), err


# -- a closed standard output ------------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("args", [["encode", "-t", "gpt2", "-"], ["decode", "-t", "gpt2", "31373"],
                                  ["stats", "-t", "gpt2", "-"], ["info", "gpt2"], ["list", "--no-caches"]])  # fmt: skip
def test_a_closed_standard_output_is_an_error_not_a_bug(args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    done = subprocess.run(
        [sys.executable, "-P", "-m", "bpeinspect.cli", *args], input="hello world", check=False,
        stderr=subprocess.PIPE, text=True, env=env, timeout=100, preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines == ["bpeinspect-cli: error: cannot write to standard output"], done.stderr


def test_ctrl_c_exits_with_130_in_every_command(capsys, monkeypatch):
    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr("bpeinspect.cli.encode.load_spec", interrupted)
    code, _, err = run(capsys, "decode", "-t", "gpt2", "1")
    assert code == 130
    assert err.strip().endswith("interrupted")


# -- options that would give an empty or a wrong result ----------------------------------------------------


def test_a_field_no_record_has_is_an_error_not_an_empty_table(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "a b"}\n{"text": "c"}\n', encoding="utf-8")
    code, out, err = run(capsys, "stats", "--jsonl", str(data), "-t", "gpt2", "--field", "nope")
    assert "nope" in one_line_error(code, err) and out == ""


def test_a_negative_longest_is_refused(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "a b"}\n', encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        cli.main(["stats", "--jsonl", str(data), "-t", "gpt2", "--longest", "-5"])
    assert info.value.code == 2
    assert "--longest: must be at least 0, not -5" in one_line_error(2, capsys.readouterr().err)


@pytest.mark.parametrize("command", [["encode", "-t", "gpt2"], ["count", "-o", "out.tsv"]])
def test_a_pattern_name_that_is_no_preset_is_refused_not_used_as_a_regex(capsys, tmp_path, command):
    text = tmp_path / "a.txt"
    text.write_text("hello gpt99", encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        cli.main([*command, "--pattern", "gpt99", str(text)])
    assert info.value.code == 2
    assert "no preset is called 'gpt99'" in one_line_error(2, capsys.readouterr().err)


def test_gpt2_files_into_a_folder_are_named_and_a_file_name_is_not_made_a_folder(capsys, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = run(capsys, "convert", "gpt2", str(folder))
    assert code == 0, err
    assert err.strip() == f"wrote {folder / 'encoder.json'} and {folder / 'vocab.bpe'}"
    code, _, err = run(capsys, "convert", "--format", "gpt2", "gpt2", str(tmp_path / "x.txt"))
    assert "go into a folder" in one_line_error(code, err)
    assert not (tmp_path / "x.txt").exists()


def test_a_dask_scheduler_is_given_a_short_time_to_answer(monkeypatch, tmp_path):
    pytest.importorskip("distributed")
    import distributed

    from bpeinspect.core.train import distributed as counting

    asked: dict = {}

    def refusing(address, timeout=None, **kw):
        asked.update(address=address, timeout=timeout)
        raise OSError("Timed out trying to connect")

    monkeypatch.setattr(distributed, "Client", refusing)
    text = tmp_path / "a.txt"
    text.write_text("hello", encoding="utf-8")
    with pytest.raises(OSError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:1 within"):
        counting.count_with_dask([text], "gpt4", scheduler="tcp://127.0.0.1:1")
    assert asked["timeout"] is not None and asked["timeout"] <= 10


@pytest.mark.timeout(120)
def test_a_save_to_standard_output_goes_down_a_pipe_and_stops_quietly_when_it_closes(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    head = f"exec {sys.executable} -P -m bpeinspect.cli convert --format huggingface gpt2 /dev/stdout"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {head} | head -c 10"], capture_output=True, text=True, env=env, timeout=100,
        check=False,
    )
    assert done.stdout == '{\n "versio' and done.returncode == 0 and done.stderr == "", done.stderr
    whole = subprocess.run(
        ["bash", "-c", f"{head} | wc -c"], capture_output=True, text=True, env=env, timeout=100, check=False
    )
    assert int(whole.stdout) > 1_000_000 and whole.stderr.strip() == "wrote /dev/stdout", whole.stderr
    assert os.path.islink("/dev/stdout") or not os.path.isfile("/dev/stdout")
