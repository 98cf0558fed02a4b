"""``bpeinspect-cli count``: the pre-token table, counted here and on a local Dask cluster."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from bpeinspect.cli import commands as cli
from bpeinspect.core import TrainingRun, train_tokenizer
from bpeinspect.core.train.corpus import iter_corpus
from bpeinspect.core.train.counts import count_pretokens, read_counts_tsv
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples, taylorswift

CASES = [("gpt4", "first-seen"), ("o200k", "hf"), (r"\p{L}+", "first-seen"), (r"\p{L}+", "hf")]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "taylor.txt").write_text(taylorswift(), encoding="utf-8")
    (folder / "big.py").write_text("\n".join(code_samples(1_200_000)), encoding="utf-8")  # read in blocks
    for i, text in enumerate(PROSE + ADVERSARIAL + ["a\u058bb \u0295x\n"]):
        (folder / "docs" / f"{i:03}.txt").parent.mkdir(exist_ok=True)
        (folder / "docs" / f"{i:03}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def local_count(corpus: Path) -> Callable[[str, str], dict[bytes, int]]:
    """The corpus's table counted here, once for each pattern and tie-break (the tests only read it)."""

    @functools.cache
    def count(pattern: str, tie_break: str) -> dict[bytes, int]:
        return count_pretokens(iter_corpus(corpus, pattern), pattern, tie_break=tie_break)

    return count


@pytest.mark.parametrize(("pattern", "tie_break"), CASES)
def test_count_here_writes_the_local_table(
    corpus: Path, local_count, tmp_path: Path, pattern: str, tie_break: str
) -> None:
    out = tmp_path / "counts.tsv"
    assert (
        cli.main(["count", "--pattern", pattern, "--tie-break", tie_break, "-j", "2", "-o", str(out), str(corpus)]) == 0
    )
    assert list(read_counts_tsv(out).items()) == list(local_count(pattern, tie_break).items())


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="1GiB"
    ) as cluster:
        yield cluster


@pytest.mark.parametrize("case", CASES, ids=[f"{p}-{t}" for p, t in CASES])
def test_count_on_a_dask_cluster_is_exactly_the_local_count(
    dask_cluster, corpus: Path, local_count, tmp_path: Path, case: tuple[str, str]
) -> None:
    pattern, tie_break = case
    out = tmp_path / "counts.tsv"
    args = ["count", "--dask", dask_cluster.scheduler_address, "--pattern", pattern, "--tie-break", tie_break]
    assert cli.main([*args, "-o", str(out), str(corpus)]) == 0
    table = read_counts_tsv(out)
    local = local_count(pattern, tie_break)
    assert list(table.items()) == list(local.items())  # first-seen order too
    # and training on the table is training on the corpus
    run = TrainingRun.from_counts(table, 700, pattern=pattern, tie_break=tie_break)
    list(run.reports())
    direct = train_tokenizer(iter_corpus(corpus, pattern), 700, pattern=pattern, tie_break=tie_break)
    assert run.tokenizer().merges == direct.merges


def test_count_with_small_partitions_and_local_schedulers(corpus: Path, local_count) -> None:
    pytest.importorskip("dask.bag")
    from bpeinspect.core.train.distributed import count_with_dask

    local = local_count("gpt4", "first-seen")
    for scheduler in ("synchronous", "threads"):
        table = count_with_dask([corpus], "gpt4", scheduler=scheduler, files_per_partition=3)
        assert list(table.items()) == list(local.items())


def test_count_on_a_folder_reads_the_files_its_patterns_and_gitignore_choose(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "proj"
    (folder / "gen").mkdir(parents=True)
    (folder / "a.md").write_text("alpha alpha\n", encoding="utf-8")
    (folder / "b.txt").write_text("beta\n", encoding="utf-8")
    (folder / "gen" / "c.md").write_text("gamma\n", encoding="utf-8")
    (folder / ".gitignore").write_text("gen/\n", encoding="utf-8")
    out = tmp_path / "counts.tsv"
    assert cli.main(["count", "-j", "1", "--include", "*.md", "-o", str(out), str(folder)]) == 0
    assert read_counts_tsv(out) == {b"alpha": 1, b" alpha": 1, b"\n": 1}
    assert "Skipped 2 files (1 ignored by .gitignore, 1 left out by the file filter)" in capsys.readouterr().err
    assert cli.main(["count", "-j", "1", "--include", "*.md", "--no-gitignore", "-o", str(out), str(folder)]) == 0
    assert b"gamma" in read_counts_tsv(out) and b"beta" not in read_counts_tsv(out)
