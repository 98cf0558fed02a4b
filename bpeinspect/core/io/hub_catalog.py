"""The catalog of popular models on the Hugging Face Hub: ``resources/hub_models.tsv``.

One model a line (repository, family, gate, licence, note; tab-separated; ``#`` starts a
comment), so adding a model is adding a line. The GUI's "Open from Hugging Face" lists and
searches it; any other repository can still be typed in.

>>> models = hub_models()
>>> len(models) >= 30, all(m.gate in GATES for m in models)
(True, True)
>>> [m.repo for m in search("qwen3 0.6", models)]
['Qwen/Qwen3-0.6B']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.builtins import resources_dir
from bpeinspect.core.io.hub import PREFIX

CATALOG_FILE = "hub_models.tsv"
GATES = ("open", "gated")


@dataclass(frozen=True)
class HubModel:
    """One model of the catalog."""

    repo: str  # OWNER/NAME on the Hub
    family: str  # "Llama 3.1", "Qwen 3"...
    gate: str  # "open", or "gated": its licence is accepted on the Hub before a download
    licence: str
    note: str = ""

    @property
    def spec(self) -> str:
        return PREFIX + self.repo

    @property
    def gated(self) -> bool:
        return self.gate == "gated"

    def words(self) -> str:
        """What a search looks in."""
        return f"{self.repo} {self.family} {self.licence} {self.note} {self.gate}".lower()


def parse_catalog(text: str, source: str = CATALOG_FILE) -> list[HubModel]:
    """The models in the catalog's text; a malformed line is an error naming it.

    >>> parse_catalog("# a comment\\nQwen/Qwen3-8B\\tQwen 3\\topen\\tapache-2.0\\t151k\\n")[0].family
    'Qwen 3'
    """
    models: list[HubModel] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) not in (4, 5) or not all(fields[:4]):
            raise VocabularyError(
                f"{source}: line {lineno} is not 'repository, family, gate, licence[, note]' (tab-separated)"
            )
        repo, family, gate, licence, *note = fields
        if gate not in GATES:
            raise VocabularyError(f"{source}: line {lineno}: gate {gate!r} is not one of {', '.join(GATES)}")
        if repo.count("/") != 1 or repo in seen:
            raise VocabularyError(f"{source}: line {lineno}: {repo!r} is not a new OWNER/NAME repository")
        seen.add(repo)
        models.append(HubModel(repo, family, gate, licence, note[0] if note else ""))
    return models


@functools.cache
def hub_models() -> tuple[HubModel, ...]:
    """The shipped catalog, read once."""
    path = resources_dir() / CATALOG_FILE
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise VocabularyError(f"{path}: cannot read the catalog of Hub models: {exc.strerror or exc}") from None
    return tuple(parse_catalog(text, str(path)))


def search(query: str, models: tuple[HubModel, ...] | list[HubModel]) -> list[HubModel]:
    """The models every word of ``query`` is found in (repository, family, licence, note), in
    catalog order; all of them for an empty query."""
    words = query.lower().split()
    return [m for m in models if all(w in m.words() for w in words)]
