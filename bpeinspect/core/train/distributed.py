"""Counting pre-tokens on a Dask cluster, for corpora beyond one machine.

Training reads the corpus once, to count its pre-tokens; the merges then run on the table
alone (:meth:`TrainingRun.from_counts`). :func:`count_with_dask` spreads the counting over a
Dask cluster: the files, in order, go out in partitions; each partition is counted exactly as
local counting counts it (:func:`~bpeinspect.core.train.corpus.iter_corpus`, then
:func:`~bpeinspect.core.train.counts.counting_splitter`), and the partitions' tables come back
in order and are added up here. So the table equals the local one, first-seen order included,
and both tie-breaks train on it exactly as on the corpus itself.

Dask is optional (``pip install "dask[bag]" distributed``) and imported only when used.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable

from bpeinspect.core.split.rules import PRESETS, SplitRule, resolve_rule
from bpeinspect.core.train.corpus import corpus_files, iter_corpus
from bpeinspect.core.train.counts import check_counting_pattern, counting_splitter

__all__ = ["LOCAL_SCHEDULERS", "count_with_dask"]

LOCAL_SCHEDULERS = ("processes", "threads", "synchronous")
CONNECT_TIMEOUT = 5.0  # seconds to reach a scheduler (distributed's own default is 30)


def count_with_dask(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    pattern: str | SplitRule | None = "gpt4",
    *,
    tie_break: str = "first-seen",
    scheduler: str | None = None,
    files_per_partition: int = 64,
) -> dict[bytes, int]:
    """The pre-token count table of the corpus files, counted on Dask.

    ``scheduler`` is a Dask scheduler's address (``tcp://host:8786``), one of Dask's local
    schedulers (``processes``, ``threads``, ``synchronous``), or ``None`` for the address in
    ``DASK_SCHEDULER_ADDRESS`` if set, else local processes. Files are read by the workers, so
    on a cluster they must see the same paths (a shared file system).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"; _ = p.write_text("to be or not to be")
    >>> count_with_dask([p], "gpt4", scheduler="synchronous")
    {b'to': 1, b' be': 2, b' or': 1, b' not': 1, b' to': 1}
    """
    try:
        import dask.bag as db
    except ImportError:
        raise ImportError('counting on Dask needs dask: pip install "dask[bag]" distributed') from None
    rule = resolve_rule(pattern)
    check_counting_pattern(rule, tie_break)
    spec = rule.name if rule.name in PRESETS and PRESETS[rule.name] == rule else rule
    files = [str(f) for f in corpus_files(paths)]
    if not files:
        return {}
    n = max(1, -(-len(files) // max(1, files_per_partition)))
    bag = db.from_sequence(files, npartitions=n).map_partitions(_count_files, spec, tie_break)
    scheduler = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or "processes"
    if scheduler in LOCAL_SCHEDULERS:
        tables = bag.compute(scheduler=scheduler)
    else:
        try:
            from distributed import Client
        except ImportError:
            raise ImportError("a Dask cluster needs distributed: pip install distributed") from None
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:  # distributed's own timeout is 30 s
            raise OSError(
                f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT:g} s ({exc})"
            ) from None
        with client:
            tables = client.compute(bag, sync=True)
    total: dict[bytes, int] = {}
    get = total.get
    for table in tables:  # in partition order, so the first-seen order is the corpus's
        for key, count in table.items():
            total[key] = get(key, 0) + count
    return total


def _count_files(files: Iterable[str], spec: str | SplitRule | None, tie_break: str) -> list[dict[bytes, int]]:
    """Dask task: one partition's files counted in order, as one table (in a list: a partition
    of the bag)."""
    findall = counting_splitter(spec, tie_break)
    counts: Counter[str] = Counter()
    for text in iter_corpus(list(files), spec):
        counts.update(findall(text))
    return [{k.encode("utf-8"): v for k, v in counts.items()}]
