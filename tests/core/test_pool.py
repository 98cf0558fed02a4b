"""The process pool: order, fallbacks, a safe import path, its users, and its one child protocol."""

from __future__ import annotations

import os
import pickle
import sys
import time
from itertools import accumulate
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer, pool
from bpeinspect.core.analysis import shipping
from bpeinspect.core.analysis import stats as analysis_stats
from bpeinspect.core.analysis.samples import Sample
from bpeinspect.core.analysis.stats import compute_stats
from bpeinspect.core.encoding import Cancelled
from bpeinspect.core.pool import ProcessPool
from bpeinspect.core.split.cuts import can_cut
from bpeinspect.core.train import counts as pretoken_counts
from bpeinspect.core.train.counts import count_pretokens
from tests.core.corpus import PROSE, code_samples, taylorswift


def _pid(context: object, item: int) -> tuple[int, int]:
    return item, os.getpid()


def _slow_pid(context: object, item: int) -> tuple[int, int]:
    time.sleep(0.01)
    return item, os.getpid()


def _fails_in_children(parent: int, item: int) -> int:
    if os.getpid() != parent:
        raise RuntimeError("only the parent can do this")
    return -item


def _bad_item(context: object, item: int) -> int:
    if item == 3:
        raise KeyError("three")
    return item


def _sys_path(context: object, item: int) -> list[str]:
    return list(sys.path)


@pytest.fixture(autouse=True)
def small_texts_use_the_pool_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis_stats, "POOL_MIN_BYTES", 0)


@pytest.fixture
def children_used(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many items children were given (the pool's own accounting, spied on)."""
    given: list[int] = []
    real = pool.Child.submit

    def submit(self, *args):
        given.append(1)
        return real(self, *args)

    monkeypatch.setattr(pool.Child, "submit", submit)
    return given


def test_results_come_in_order_from_this_process_and_children() -> None:
    with ProcessPool(3) as p:
        out = list(p.imap(_pid, range(200)))
    assert [i for i, _ in out] == list(range(200))
    assert os.getpid() in {pid for _, pid in out}
    assert len({pid for _, pid in out}) > 1


def test_a_child_that_fails_hands_its_item_back() -> None:
    with ProcessPool(2) as p:
        assert list(p.imap(_fails_in_children, range(50), context=os.getpid())) == [-i for i in range(50)]
        with pytest.raises(KeyError, match="three"):  # done here again, so it raises with its own type
            list(p.imap(_bad_item, range(10)))


def _dies_in_children(parent: int, item: int) -> int:
    if os.getpid() != parent and item % 7 == 3:
        os._exit(1)  # the child dies with items in flight
    return item * 2


def test_a_child_has_its_next_item_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    # with one item at a time a child sat idle until this process finished an item of its own
    most: list[int] = []
    real = pool.Child.submit

    def submit(self, *args):
        real(self, *args)
        most.append(len(self.tasks))

    monkeypatch.setattr(pool.Child, "submit", submit)
    with ProcessPool(2) as p:
        assert [i for i, _ in p.imap(_pid, range(300))] == list(range(300))
    assert max(most) == pool.Child.DEPTH == 2


def test_a_child_that_dies_hands_its_items_back() -> None:
    with ProcessPool(3) as p:
        assert list(p.imap(_dies_in_children, range(100), context=os.getpid())) == [2 * i for i in range(100)]
        assert list(p.imap(_pid, range(20)))[-1][0] == 19  # and the pool goes on


def test_a_pool_kept_for_its_own_work_leaves_every_item_to_its_children() -> None:
    with ProcessPool(3) as p:
        out = list(p.imap(_slow_pid, range(60), here=False))
    assert [i for i, _ in out] == list(range(60))
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and len(pids) == 2


def test_a_pool_kept_for_its_own_work_still_does_what_a_dead_child_hands_back() -> None:
    with ProcessPool(2) as p:  # its one child dies: the rest is done here
        out = list(p.imap(_dies_in_children, range(40), context=os.getpid(), here=False))
    assert out == [2 * i for i in range(40)]


def test_one_item_or_one_process_stays_here(children_used: list[int]) -> None:
    with ProcessPool(4) as p:
        assert list(p.imap(_pid, [7])) == [(7, os.getpid())]
    with ProcessPool(1) as p:
        assert {pid for _, pid in p.imap(_pid, range(20))} == {os.getpid()}
    assert children_used == []


def test_stopping_early_ends_busy_children() -> None:
    p = ProcessPool(2)
    it = p.imap(_pid, range(1000))
    next(it)
    procs = [c.proc for c in p._children]
    it.close()
    assert all(proc.poll() is not None for proc in procs)
    assert list(p.imap(_pid, range(5)))[-1][0] == 4  # the pool starts new children when used again
    p.close()


@pytest.fixture
def shadowing_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder holds a regex.py (and a bpeinspect/ package) that record their import."""
    marker = tmp_path / "imported.txt"
    (tmp_path / "regex.py").write_text(
        f"open({str(marker)!r}, 'a').write('regex.py imported\\n')\nraise ImportError('the shadow regex.py')\n"
    )
    (tmp_path / "bpeinspect").mkdir()
    (tmp_path / "bpeinspect" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('bpeinspect/ imported\\n')\n")
    monkeypatch.chdir(tmp_path)
    return marker


def test_children_never_import_from_the_current_folder(shadowing_folder: Path, children_used: list[int]) -> None:
    with ProcessPool(2) as p:
        paths = [path for path in p.imap(_sys_path, range(20)) if path != sys.path]
    assert paths, "no child ran"
    assert all(os.getcwd() not in path and "" not in path for path in paths)
    assert not shadowing_folder.exists()


def test_training_counts_never_import_from_the_current_folder(
    shadowing_folder: Path, children_used: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pretoken_counts, "BATCH_CHARS", 20_000)
    texts = [taylorswift()] * 2 + PROSE
    assert count_pretokens(texts, "gpt4", processes=2) == count_pretokens(texts, "gpt4", processes=1)
    assert children_used
    assert not shadowing_folder.exists()


def test_stats_never_import_from_the_current_folder(shadowing_folder: Path, children_used: list[int]) -> None:
    toks = {"o200k_base": load_tokenizer("o200k_base")}
    sample = Sample("taylor", text=taylorswift() * 2)
    here = compute_stats(toks, [sample], chunk_bytes=40_000)
    parallel = compute_stats(toks, [sample], chunk_bytes=40_000, processes=2)
    assert parallel.rows == here.rows
    assert children_used
    assert not shadowing_folder.exists()


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_stats_in_a_pool_equal_stats_here(name: str, tmp_path: Path) -> None:
    path = tmp_path / "code.py"
    path.write_text("\n".join(code_samples(300_000)) + "\nend\u058b\nword", encoding="utf-8")
    samples = [Sample("code", path), Sample("taylor", text=taylorswift()), Sample("tiny", text="x")]
    toks = {name: load_tokenizer(name), "gpt4-trained": _trained()}
    for chunk in (7_000, 1 << 20):
        here = compute_stats(toks, samples, baseline="taylor", chunk_bytes=chunk)
        assert compute_stats(toks, samples, baseline="taylor", chunk_bytes=chunk, processes=3).rows == here.rows


def test_stats_in_a_pool_can_be_cancelled(tmp_path: Path) -> None:
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        compute_stats({"r": load_tokenizer("r50k_base")}, [Sample("t", text=taylorswift() * 3)], chunk_bytes=20_000,
                      processes=2, should_stop=stop)  # fmt: skip


def _trained():
    from bpeinspect.core import train_tokenizer

    return train_tokenizer(PROSE, 400, pattern="gpt4", special_tokens=["<|x|>"])


def test_small_corpora_are_counted_here(monkeypatch: pytest.MonkeyPatch, children_used: list[int]) -> None:
    monkeypatch.setattr(analysis_stats, "POOL_MIN_BYTES", 1 << 20)
    compute_stats({"r": load_tokenizer("r50k_base")}, [Sample("t", text=taylorswift())], chunk_bytes=20_000, processes=2)
    assert children_used == []


def test_the_training_process_never_imports_from_the_current_folder(shadowing_folder: Path, tmp_path: Path) -> None:
    from bpeinspect.core.train.process import ProcessTrainingRun

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(PROSE), encoding="utf-8")
    run = ProcessTrainingRun([corpus], 300, pattern="gpt4")
    list(run.reports())
    run.close()
    assert len(run.merges) == 300 - 256
    assert not shadowing_folder.exists()


QWEN_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def _qwen_like():
    """What Qwen's tokenizer.json makes: its own split regex (no preset), NFC, explicit merges."""
    from bpeinspect.core.normalize import Unicode
    from bpeinspect.core.tokenizer import Tokenizer

    t = _trained()
    return Tokenizer(t.mergeable_ranks, pattern=QWEN_PATTERN, normalizer=Unicode("NFC"), merges=t.merges, name="qwen-like")


def test_a_tokenizer_with_its_own_split_rule_shares_whole_samples_out(children_used: list[int]) -> None:
    tok = _qwen_like()
    assert not can_cut(tok)  # its own split rule: samples cannot be cut, they go out whole
    decomposed = "Cafe\u0301 cre\u0300me bru\u0302le\u0301e 12345\n"  # NFC composes these
    samples = [Sample(f"s{i}", text=(decomposed + PROSE[i % len(PROSE)]) * 30) for i in range(8)]
    samples.append(Sample("long", text=taylorswift()))  # over chunk_bytes: counted here, whole
    here = compute_stats({"q": tok}, samples, baseline="s0", chunk_bytes=60_000)
    assert compute_stats({"q": tok}, samples, baseline="s0", chunk_bytes=60_000, processes=2).rows == here.rows
    assert children_used
    assert here.rows[0].tokens == len(tok.encode_ordinary(samples[0].text))


def test_a_tokenizer_travels_to_children_as_data_in_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    from bpeinspect.core import tables

    monkeypatch.setattr(tables, "_STEP", 50)
    tok = _qwen_like()
    asked = []
    shipped = shipping.Shipped(tok, should_stop=lambda: asked.append(1) and False)
    assert len(asked) > 2 * len(tok.merges) // 50  # merges and the ids they make, 50 at a time
    assert tables.build(tables.loads(shipped.data)).merges == tok.merges  # the data alone makes it
    back = pickle.loads(pickle.dumps(shipped))
    assert back.mergeable_ranks == tok.mergeable_ranks and back.normalizer == tok.normalizer
    assert back.split_rule == tok.split_rule and back.name == tok.name
    text = "Cafe\u0301 " + " ".join(PROSE[:3])
    assert back.encode_ordinary(text) == tok.encode_ordinary(text)
    with pytest.raises(Cancelled):
        shipping.Shipped(tok, should_stop=lambda: True)


def test_a_built_in_travels_packed_and_is_built_again_the_same() -> None:
    import pickle

    tok = load_tokenizer("o200k_base")
    back = pickle.loads(pickle.dumps(shipping.Shipped(tok)))
    assert back is not tok and back.ranks == tok.ranks and back.special_tokens == tok.special_tokens
    assert back.split_rule is tok.split_rule and (back.name, back.source) == (tok.name, tok.source)
    text = taylorswift()[:20_000] + " 🙂 héllo"
    assert back.encode_ordinary(text) == tok.encode_ordinary(text)


def test_the_last_parts_shared_out_are_smaller(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = []
    real = analysis_stats._count_tokens

    def spy(shipped, item):
        sizes.append(len(item[1]))
        return real(shipped, item)

    monkeypatch.setattr(analysis_stats, "_count_tokens", spy)
    monkeypatch.setattr(analysis_stats, "POOL_MIN_BYTES", 0)
    text = "\n".join(code_samples(400_000))
    toks = {"r": load_tokenizer("r50k_base")}
    with ProcessPool(2) as pool:
        pool.start = lambda: []  # no children: every part is counted here, through the spy
        got = compute_stats(toks, [Sample("code", text=text)], chunk_bytes=16_000, processes=2, pool=pool)
    assert got.rows == compute_stats(toks, [Sample("code", text=text)], chunk_bytes=16_000).rows
    assert max(sizes) < 24_000 and sum(sizes) == len(text)
    tail, step = analysis_stats._TAIL_CHUNKS * 2 * 16_000, 16_000 // analysis_stats._TAIL_SPLIT
    starts = [0, *accumulate(sizes)][:-1]
    in_tail = [n for a, n in zip(starts, sizes) if a >= len(text) - tail + step]
    before = [n for a, n in zip(starts, sizes) if a + n <= len(text) - tail - 16_000]
    assert len(in_tail) >= tail // (3 * step) and max(in_tail) <= 3 * step
    assert sum(n > 8_000 for n in before) >= 0.9 * len(before)


def _niceness(context: object, item: int) -> tuple[int, bool]:
    return os.nice(0), "numpy" in sys.modules


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no process priorities here")
def test_children_are_niced_before_they_import_anything() -> None:
    """A background pool's children lower their priority as the interpreter starts, before the
    third of a second of importing that competes with the window for the cores."""
    import subprocess

    base = os.nice(0)
    cmd, env = pool.python_command("import os, sys; print(os.nice(0), 'numpy' in sys.modules)", niceness=7)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(min(base + 7, 19)), "False"]
    with ProcessPool(2, niceness=7) as niced:
        got = list(niced.imap(_niceness, range(6)))
    assert {n for n, _ in got} == {base, min(base + 7, 19)}  # this process's items, and the child's


def test_a_pool_asked_for_a_hundred_thousand_processes_starts_a_few_per_cpu() -> None:
    from bpeinspect.core.pool import PROCESSES_PER_CPU, ProcessPool, max_processes

    with ProcessPool(100_000) as pool:
        assert pool.processes == max_processes() <= PROCESSES_PER_CPU * (os.cpu_count() or 1)
    with ProcessPool(0) as pool:
        assert pool.processes == 1


def test_a_loaded_sentencepiece_tokenizer_is_counted_by_children_the_same(children_used: list[int], tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    from bpeinspect.core.io.formats import load_path
    from tests.core.sentencepiece.test_model import GEMMA, _hf_sp_json

    path, _ = _hf_sp_json(tmp_path, *GEMMA)
    tok = load_path(path)
    assert not tok.byte_level and shipping.can_ship(tok)
    samples = [Sample(f"s{i}", text=PROSE[i % len(PROSE)] * 40) for i in range(6)]
    here = compute_stats({"sp": tok}, samples, baseline="s0")
    assert compute_stats({"sp": tok}, samples, baseline="s0", processes=2).rows == here.rows
    assert children_used


# -- the one protocol: tasks, results, progress, errors, cancels -------------------------------------


def _raises(context: object, item: str) -> None:
    raise KeyError(f"no {item} here")


def _counts_up(context: object, item: int, channel: pool.Channel) -> str:
    """A live task: ``item`` progress messages, then its context."""
    for i in range(item):
        channel.progress(i)
    return f"{context} after {item}"


def _until_cancelled(context: object, item: object, channel: pool.Channel) -> int:
    """A live task that runs until it is told to stop; answers how many rounds it made."""
    rounds = 0
    while not channel.cancelled():
        rounds += 1
        if rounds == 1:
            channel.progress("started")
        time.sleep(0.001)
    return rounds


def _sleeps(context: object, seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _unpicklable(context: object, item: object) -> object:
    return lambda: item


def _replies_of(p: ProcessPool, task: int) -> list[pool.Reply]:
    """The replies to ``task``, up to the one that ends it."""
    got = []
    while True:
        reply = p.reply(timeout=60)
        assert reply is not None, "no reply in a minute"
        if reply.task == task or reply.kind == "lost":
            got.append(reply)
        if reply.kind != "progress":
            return got


def test_an_error_in_a_child_task_comes_back_with_its_type_names_and_message() -> None:
    with ProcessPool(2) as p:
        (child,) = p.start()
        (reply,) = _replies_of(p, p.submit(child, _raises, "spoon"))
    assert reply.kind == "error"
    assert reply.kinds[:2] == ("KeyError", "LookupError") and reply.value == "'no spoon here'"


def test_progress_messages_arrive_in_order_before_the_result_with_the_childs_context() -> None:
    with ProcessPool(2) as p:
        (child,) = p.start()
        key = p.new_key()
        child.put(key, pickle.dumps("the context"))
        replies = _replies_of(p, p.submit(child, _counts_up, 5, key=key, live=True))
    assert [r.kind for r in replies] == ["progress"] * 5 + ["result"]
    assert [r.value for r in replies] == [0, 1, 2, 3, 4, "the context after 5"]


def test_cancel_stops_a_long_live_task_which_answers() -> None:
    with ProcessPool(2) as p:
        (child,) = p.start()
        task = p.submit(child, _until_cancelled, None, live=True)
        first = p.reply(timeout=60)
        assert first is not None and (first.kind, first.value) == ("progress", "started")
        p.cancel(task)
        (reply,) = _replies_of(p, task)
        assert reply.kind == "result" and reply.value >= 1
        (again,) = _replies_of(p, p.submit(child, _sleeps, 0.0))  # the child goes on with the next task
        assert again.kind == "result"


def test_a_plain_task_cancelled_before_it_begins_is_not_run() -> None:
    with ProcessPool(2) as p:
        (child,) = p.start()
        busy = p.submit(child, _sleeps, 0.5)
        waiting = p.submit(child, _sleeps, 30.0)
        p.cancel(waiting)
        assert _replies_of(p, busy)[0].kind == "result"
        (reply,) = _replies_of(p, waiting)
    assert (reply.kind, reply.kinds) == ("error", ("Cancelled",))


def test_a_result_that_cannot_be_pickled_comes_back_as_an_error() -> None:
    with ProcessPool(2) as p:
        (child,) = p.start()
        (reply,) = _replies_of(p, p.submit(child, _unpicklable, 1))
    assert reply.kind == "error" and "pickle" in reply.value.lower()


def test_a_child_leaves_when_the_pool_closes_even_in_a_live_task() -> None:
    p = ProcessPool(2)
    (child,) = p.start()
    p.submit(child, _until_cancelled, None, live=True)
    first = p.reply(timeout=60)
    assert first is not None and first.value == "started"
    p.close(wait=False)  # its stdin ends: the task is told to stop, and the child leaves
    assert child.proc.wait(timeout=30) == 0


def test_a_dead_child_is_a_lost_reply_with_its_tasks_and_exit_code() -> None:
    with ProcessPool(2) as p:
        (child,) = p.start()
        task = p.submit(child, _sleeps, 30.0)
        child.proc.kill()
        (reply,) = _replies_of(p, task)
    assert reply.kind == "lost" and reply.tasks == (task,) and reply.child is child
    assert reply.value.startswith("exit code -") or reply.value.startswith("exit code ")


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="no /proc to watch processes in")
def test_children_leave_when_their_parent_dies() -> None:
    import subprocess

    code = (
        "import os\n"
        "from bpeinspect.core.pool import ProcessPool\n"
        "from tests.core.test_pool import _until_cancelled\n"
        "p = ProcessPool(2)\n"
        "(c,) = p.start()\n"
        "p.submit(c, _until_cancelled, None, live=True)\n"
        "assert p.reply(timeout=60).value == 'started'\n"
        "print(c.proc.pid, flush=True)\n"
        "os._exit(0)  # dies without closing the pool\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    command = [sys.executable, "-c", code]
    done = subprocess.run(command, check=False, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout)
    for _ in range(600):
        if _gone(pid):
            break
        time.sleep(0.05)
    assert _gone(pid), "the child outlived its parent by 30 seconds"


def _reports(context: object, item: int, channel: pool.Channel) -> str:
    """A live task: ``item`` progress messages of 1 kB."""
    for _ in range(item):
        channel.progress(b"x" * 1000)
    return "done"


def test_a_live_task_waits_for_its_progress_to_be_taken() -> None:
    """A child never runs far ahead of the consumer that may ask it to stop (a training run
    stopped after its 300th merge must not have made all of them meanwhile)."""
    with ProcessPool(2) as p:
        (child,) = p.start()
        task = p.submit(child, _reports, 2000, live=True)  # 2 MB: far more than a pipe holds
        first = p.reply(timeout=60)
        assert first is not None and first.kind == "progress"
        time.sleep(1.0)  # nothing taken meanwhile: the child waits, its task unanswered
        assert task in child.tasks
        replies = _replies_of(p, task)
    assert len(replies) == 2000 and (replies[-1].kind, replies[-1].value) == ("result", "done")


def test_answers_put_back_come_again_before_newer_ones():
    if not pool.can_spawn():
        pytest.skip("no child process can start here")
    with pool.ProcessPool(2) as p:
        (child,) = p.start()
        key = p.new_key()
        child.put(key, pickle.dumps(0))
        first = p.submit(child, pool._demo_square, 3, key=key)
        a = p.reply(30)
        second = p.submit(child, pool._demo_square, 4, key=key)
        time.sleep(0.5)  # its answer is in the queue by now
        p.put_back([a])
        got = [p.reply(30), p.reply(30)]
    assert [(r.kind, r.task) for r in got] == [("result", first), ("result", second)]
    assert [r.value for r in got] == [9, 16]
