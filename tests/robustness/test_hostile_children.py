"""No child process imports from the current folder.

The pool's children (counting for training, statistics) are covered in
``tests/core/test_pool.py``; here the other children: the GUI's training process (a
:class:`ProcessTrainingRun`, started by :meth:`TrainingPlan.make_run`) and the command line's
``train`` and ``count`` on a corpus large enough for several processes, run as a user runs them,
the languages view's :class:`CountingPool` and the dataset counting pool (``stats --jsonl -j``).
The old children started with ``python -m``, which puts the current folder first on the
import path, so a ``regex.py`` there ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpeinspect.core.train.process import ProcessTrainingRun, can_spawn
from tests.core.corpus import PROSE

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.timeout(180), pytest.mark.skipif(not can_spawn(), reason="no child Pythons here")]


@pytest.fixture
def shadowing_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder holds a regex.py, a numpy.py and a bpeinspect/ package that record
    their import (and break it)."""
    here = tmp_path / "here"
    here.mkdir()
    marker = tmp_path / "imported.txt"
    for name in ("regex.py", "numpy.py"):
        (here / name).write_text(f"open({str(marker)!r}, 'a').write('{name}\\n')\nraise ImportError('shadow')\n")
    (here / "bpeinspect").mkdir()
    (here / "bpeinspect" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('bpeinspect/\\n')\n")
    monkeypatch.chdir(here)
    return marker


def corpus(folder: Path, n_bytes: int) -> Path:
    text = "\n".join(PROSE) + "\n"
    path = folder / "corpus.txt"
    path.write_text(text * (n_bytes // len(text.encode()) + 1), encoding="utf-8")
    return path


def test_the_training_process_never_imports_from_the_current_folder(shadowing_folder, tmp_path):
    from bpeinspect.core.train.plan import TrainingPlan

    plan = TrainingPlan([corpus(tmp_path, 200_000)], [300], pattern="gpt4", processes=1)
    run = plan.make_run()  # what the GUI's training panel starts
    assert isinstance(run, ProcessTrainingRun)
    try:
        reports = list(run.reports())
    finally:
        run.close()
    assert reports[-1].phase == "done" and len(run.tokenizer().merges) == 300 - 256
    assert not shadowing_folder.exists(), shadowing_folder.read_text()


@pytest.mark.parametrize("command", ["train", "count"])  # stats' pool: tests/core/test_pool.py
def test_cli_commands_on_a_large_corpus_never_import_from_the_current_folder(shadowing_folder, tmp_path, command):
    big = corpus(tmp_path, 1_500_000)  # over 2 x BATCH_CHARS: counted in several processes
    out = tmp_path / "out.tsv"
    args = {
        "train": ["train", str(big), "--vocab-size", "300", "-o", str(tmp_path / "out.json")],
        "count": ["count", str(big), "-j", "2", "-o", str(out)],
    }[command]
    # as the installed bpeinspect-cli script runs: its own folder, not the current one, on the path
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    env.pop("PYTHONSAFEPATH", None)
    code = "import sys; from bpeinspect.cli.commands import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); {code}", *args],
        check=False, capture_output=True, text=True, env=env, timeout=150,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not shadowing_folder.exists(), shadowing_folder.read_text()


def test_the_languages_counting_pool_never_imports_from_the_current_folder(shadowing_folder):
    from bpeinspect.core import load_tokenizer
    from bpeinspect.core.analysis.corpus_count import CountingPool

    toks = [load_tokenizer("r50k_base"), load_tokenizer("cl100k_base")]
    texts = ["\n".join(PROSE)] * 6 + ["hello wörld 日本"]
    with CountingPool(2) as pool:
        counted = dict(pool.count(toks, texts))
        # children that imported the folder's bpeinspect/ died at start, and this process counted
        assert len(pool._children) == 2 and all(c.proc.poll() is None for c in pool._children)
    assert counted == {k: [len(t.encode_ordinary(s)) for s in texts] for k, t in enumerate(toks)}
    assert not shadowing_folder.exists(), shadowing_folder.read_text()


def test_the_dataset_pool_never_imports_from_the_current_folder(shadowing_folder, tmp_path, monkeypatch):
    import json

    from bpeinspect.core import load_tokenizer, pool
    from bpeinspect.core.dataset import Target, count_dataset

    given: list[int] = []
    real = pool.Child.submit

    def submit(self, *args):
        given.append(1)
        return real(self, *args)

    monkeypatch.setattr(pool.Child, "submit", submit)
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"text": f"{i} " + PROSE[i % len(PROSE)]}) + "\n" for i in range(2000)), "utf-8")
    targets = [Target("gpt2", load_tokenizer("gpt2"), spec="gpt2")]
    two = count_dataset(path, targets, processes=2)
    assert given, "no batch went to a child"
    assert two.as_dict()["tokenizers"] == count_dataset(path, targets, processes=1).as_dict()["tokenizers"]
    assert not shadowing_folder.exists(), shadowing_folder.read_text()
