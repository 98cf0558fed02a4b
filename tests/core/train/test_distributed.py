"""Counting pre-tokens on Dask: the table equals the local count, first-seen order included."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpeinspect.core.train.corpus import iter_corpus
from bpeinspect.core.train.counts import count_pretokens
from tests.core.corpus import ADVERSARIAL, PROSE

pytest.importorskip("dask.bag")

from bpeinspect.core.train.distributed import count_with_dask  # noqa: E402  (needs dask)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for i, text in enumerate(PROSE + ADVERSARIAL):
        (folder / f"{i:03}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(("pattern", "tie_break"), [("gpt4", "first-seen"), ("o200k", "hf"), (r"\p{L}+", "first-seen")])
@pytest.mark.parametrize("per_partition", [1, 3, 1000])
def test_partitions_add_up_to_the_local_table_in_order(corpus, pattern, tie_break, per_partition):
    local = count_pretokens(iter_corpus(corpus, pattern), pattern, tie_break=tie_break)
    table = count_with_dask(
        [corpus], pattern, tie_break=tie_break, scheduler="synchronous", files_per_partition=per_partition
    )
    assert list(table.items()) == list(local.items())


def test_the_threads_scheduler_counts_the_same(corpus):
    local = count_pretokens(iter_corpus(corpus, "gpt4"), "gpt4")
    assert list(count_with_dask([corpus], "gpt4", scheduler="threads", files_per_partition=2).items()) == list(
        local.items()
    )


def test_no_files_is_an_empty_table(tmp_path):
    (tmp_path / "empty").mkdir()
    assert count_with_dask([tmp_path / "empty"], "gpt4", scheduler="synchronous") == {}
