"""A training run in a child process, driven like :class:`~bpeinspect.core.train.run.TrainingRun`.

A GUI that trains in one of its own threads shares the interpreter lock with it: every
redraw of the window then waits on the trainer, and the window stutters. Here the merges
are learned in a child Python (started with a safe import path, see
:func:`~bpeinspect.core.pool.python_command`); this process only reads its reports from a
pipe (which does not hold the lock) and builds the tokenizer at the end.

>>> run = ProcessTrainingRun(["to be or not to be"], 260, pattern="gpt4")  # doctest: +SKIP
>>> reports = list(run.reports()); run.tokenizer().merges               # doctest: +SKIP
[(32, 98), (116, 111), (256, 101), (111, 114)]

The child reads commands (``stop``, ``resume``, ``quit``) from its stdin, one per line,
and writes pickled messages to its stdout: ``("report", TrainingProgress)`` ...,
``("state", dict)`` after each ``done`` report, or ``("error", kind, message)``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from bpeinspect.core.errors import TrainingProcessError
from bpeinspect.core.pool import can_spawn, python_command
from bpeinspect.core.split.rules import PatternError
from bpeinspect.core.tokenizer import Tokenizer
from bpeinspect.core.train.corpus import CorpusError, iter_corpus
from bpeinspect.core.train.filefilter import FileFilter
from bpeinspect.core.train.run import TieBreak, TrainedMerge, TrainingProgress, TrainingRun, merges_tokenizer

__all__ = ["ProcessTrainingRun", "TrainingProcessError", "can_spawn"]

CHILD_NICENESS = 5
_ERRORS: dict[str, type[Exception]] = {
    "CorpusError": CorpusError,
    "PatternError": PatternError,
    "ValueError": ValueError,
}


class ProcessTrainingRun:
    """:class:`TrainingRun` over corpus files, run in a child process.

    The settings are checked here at once (``ValueError``); the corpus is read by the
    child. ``reports`` may be iterated again after a stop to resume; :meth:`close` ends
    the child (also done when the object is collected).
    """

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        vocab_size: int,
        *,
        pattern: str | None = "gpt4",
        special_tokens: Sequence[str] | None = None,
        tie_break: TieBreak = "first-seen",
        processes: int | None = None,
        interval: float = 0.1,
        file_filter: FileFilter | None = None,
    ) -> None:
        check = TrainingRun((), vocab_size, pattern=pattern, special_tokens=special_tokens, tie_break=tie_break)
        self._rule = check._rule  # (with Hugging Face's Unicode for tie_break='hf')
        self.vocab_size = check.vocab_size
        self.special_tokens = list(check.special_tokens)
        self.tie_break = tie_break
        self.merges_total = check.merges_total
        self.merges: list[TrainedMerge] = []
        self.finished = False
        self.state: dict = {}
        self._args = {
            "paths": [str(p) for p in paths],
            "vocab_size": vocab_size,
            "pattern": pattern,
            "special_tokens": self.special_tokens,
            "tie_break": tie_break,
            "processes": processes,
            "interval": interval,
            "file_filter": file_filter,
        }
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._lock = threading.Lock()

    # -- the child ----------------------------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        cmd, env = python_command("from bpeinspect.core.train.process import child_main; child_main()")
        self._stderr = tempfile.TemporaryFile()  # a file, so a chatty child never blocks on it
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        assert proc.stdin is not None and proc.stdout is not None  # both are pipes
        pickle.dump(self._args, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.flush()
        return proc

    def _send(self, command: str) -> None:
        with self._lock:
            proc = self._proc
            if proc is None or proc.stdin is None or proc.stdin.closed:
                return
            try:
                proc.stdin.write(command.encode("ascii") + b"\n")
                proc.stdin.flush()
            except OSError:
                pass

    def stop(self) -> None:
        """Ask the child to stop after the current merge (``reports`` then ends)."""
        self._send("stop")

    def reports(self, should_stop: Callable[[], bool] | None = None) -> Iterator[TrainingProgress]:
        """Run (or resume) the training in the child, yielding its reports as they come.

        ``should_stop`` is checked at each report; when it turns true the child stops after
        the current merge and the last report (``phase == "done"``) says ``stopped``.
        """
        if self.finished:
            return
        if self._proc is None:
            self._proc = self._start()
        else:
            self._send("resume")
        proc = self._proc
        stdout = proc.stdout
        assert stdout is not None  # a pipe (see _start)
        asked = False
        while True:
            if not asked and should_stop is not None and should_stop():
                self.stop()
                asked = True
            try:
                msg = pickle.load(stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                code = proc.wait()
                why = self._last_error_line()
                self.close()
                raise TrainingProcessError(
                    f"the training process ended unexpectedly (exit code {code}){': ' + why if why else ''}"
                ) from None
            kind = msg[0]
            if kind == "report":
                report: TrainingProgress = msg[1]
                self.merges.extend(report.new_merges)
                yield report
            elif kind == "state":
                self.state = msg[1]
                self.finished = self.state["finished"]
                return
            elif kind == "error":
                self.close()
                raise _ERRORS.get(msg[1], TrainingProcessError)(msg[2])

    def _last_error_line(self) -> str:
        err = self._stderr
        if err is None:
            return ""
        try:
            err.seek(0, os.SEEK_END)
            err.seek(max(0, err.tell() - 4096))
            lines = err.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def close(self) -> None:
        """End the child process."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        stdin = proc.stdin
        assert stdin is not None  # a pipe (see _start)
        try:
            stdin.write(b"quit\n")
            stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: S110 (interpreter shutdown)
            pass

    # -- the result -----------------------------------------------------------------------------

    @property
    def skipped(self) -> list[tuple[Path, str]]:
        """The corpus files the child left out (binary, not UTF-8 text), with the reason."""
        return [(Path(f), why) for f, why in self.state.get("skipped", [])]

    def tokenizer(self) -> Tokenizer:
        """The tokenizer learned so far, as :meth:`TrainingRun.tokenizer` makes it."""
        s = self.state
        settings = {
            "trainer": "bpeinspect",
            "vocab_size": self.vocab_size,
            "pattern": self._args["pattern"],
            "pattern_name": self._rule.name,
            "tie_break": self.tie_break,
            "special_tokens": list(self.special_tokens),
            "documents": s.get("documents", 0),
            "corpus_bytes": s.get("corpus_bytes", 0),
            "distinct_pretokens": s.get("distinct_pretokens", 0),
            "merges": len(self.merges),
            "finished": self.finished,
            "ran_out_of_pairs": s.get("ran_out_of_pairs", False),
            "seconds": s.get("seconds", 0.0),
        }
        return merges_tokenizer(
            self.merges,
            pattern=self._rule,
            special_tokens=self.special_tokens,
            settings=settings,
            name=f"trained-{self.vocab_size}",
            tie_break=self.tie_break,
        )


def _child_main() -> None:
    """The child: train, report, and obey ``stop``/``resume``/``quit`` from stdin."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    out_lock = threading.Lock()

    def send(msg: tuple) -> None:
        with out_lock:
            pickle.dump(msg, stdout, protocol=pickle.HIGHEST_PROTOCOL)
            stdout.flush()

    args = pickle.load(stdin)
    if hasattr(os, "nice"):
        # background work: on a busy machine the window that shows it comes first
        try:
            os.nice(CHILD_NICENESS)
        except OSError:
            pass
    stop = threading.Event()
    resume = threading.Event()
    quit_ = threading.Event()

    def read_commands() -> None:
        for line in stdin:
            cmd = line.strip()
            if cmd == b"stop":
                stop.set()
            elif cmd == b"resume":
                resume.set()
            elif cmd == b"quit":
                break
        quit_.set()
        stop.set()
        resume.set()

    threading.Thread(target=read_commands, daemon=True).start()
    skipped: list[tuple[Path, str]] = []
    try:
        run = TrainingRun(
            iter_corpus(args["paths"], args["pattern"], skipped=skipped, file_filter=args["file_filter"]),
            args["vocab_size"],
            pattern=args["pattern"],
            special_tokens=args["special_tokens"],
            tie_break=args["tie_break"],
            processes=args["processes"],
            interval=args["interval"],
        )
        while True:
            for report in run.reports(stop.is_set):
                send(("report", report))
            training = run.tokenizer().training
            assert training is not None  # a trained tokenizer carries its settings
            settings = training.settings
            keep = ("documents", "corpus_bytes", "distinct_pretokens", "ran_out_of_pairs", "seconds")
            left_out = [(str(f), why) for f, why in skipped]
            send(("state", {"finished": run.finished, "skipped": left_out, **{k: settings[k] for k in keep}}))
            if run.finished:
                return
            resume.wait()
            if quit_.is_set():
                return
            resume.clear()
            stop.clear()
    except Exception as exc:
        kind = (
            type(exc).__name__
            if type(exc).__name__ in _ERRORS
            else ("ValueError" if isinstance(exc, ValueError) else "")
        )
        send(("error", kind or "TrainingProcessError", str(exc) or type(exc).__name__))


def child_main() -> None:
    """The child process's entry point."""
    _child_main()
    sys.stdout.flush()
    # Freeing the merge engine's millions of objects one by one takes a second or more and
    # the parent may be waiting: leave without tearing them down.
    os._exit(0)
