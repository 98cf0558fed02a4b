"""The stall checks run on the unit tests' windows and workspaces: the same fixtures."""

from tests.gui.conftest import cl100k, own_config, panel_window, settings, window  # noqa: F401  (fixtures)
from tests.gui.training.test_workspace import big_corpus, registry, ws  # noqa: F401  (fixtures)
