"""Counting pre-tokens in other processes: both ends of the pipe.

:class:`Worker` (in the training process) starts ``python -m bpeinspect.core.train.count_worker``,
whose :func:`main` reads pickled ``(pattern, texts)`` batches from stdin and writes each
batch's counts, pickled, to stdout. Plain subprocesses rather than ``multiprocessing``: they
need no ``if __name__ == "__main__"`` guard in the caller's script and are safe to start
from a thread (the GUI trains in one).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

from bpeinspect.core.train.counts import count_batch


class Worker:
    """A counting subprocess with at most one batch in flight. A thread writes the batch and
    reads the counts back, so this process keeps counting meanwhile (and pipes never deadlock)."""

    def __init__(self, spec: str | None) -> None:
        package_root = str(Path(__file__).resolve().parents[3])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bpeinspect.core.train.count_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        self.spec = spec
        self.alive = True
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def send(self, batch: list[str], slot: list) -> None:
        """Count ``batch``; the counts land in ``slot[1]`` (see :meth:`wait`)."""
        self._thread = threading.Thread(target=self._run, args=(batch, slot), daemon=True)
        self._thread.start()

    def _run(self, batch: list[str], slot: list) -> None:
        counts = None
        if self.alive:
            try:
                pickle.dump((self.spec, batch), self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self.proc.stdin.flush()
                counts = pickle.load(self.proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self.alive = False
        slot[1] = counts if counts is not None else batch  # the batch itself: count it here

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self, abandoned: bool) -> None:
        if abandoned and self.busy:
            self.proc.kill()  # busy with a batch nobody will read
        self.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
            self.proc.wait()



def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            pattern, texts = pickle.load(stdin)
        except EOFError:
            return
        pickle.dump(count_batch(pattern, texts), stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    main()
