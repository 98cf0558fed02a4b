"""A worker process for counting pre-tokens: ``python -m bpeinspect.core._count_worker``.

It reads pickled ``(pattern, texts)`` batches from stdin and writes each batch's counts,
pickled, to stdout. Plain subprocesses rather than ``multiprocessing``: they need no
``if __name__ == "__main__"`` guard in the caller's script and are safe to start from a
thread (the GUI trains in one).
"""

from __future__ import annotations

import pickle
import sys

from .pretoken_counts import count_batch


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
