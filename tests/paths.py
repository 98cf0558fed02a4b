"""Where the project and the shared test data are, for tests and benchmarks at any depth.

The shared data (vocabularies, corpora and reference merges that are not part of the package) is
found through ``BPEINSPECT_SHARED`` when it is set, and otherwise in ``shared/`` beside the
repository's folder.
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BPEINSPECT_SHARED") or ROOT.parent / "shared")
