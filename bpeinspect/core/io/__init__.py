"""Reading and writing vocabularies: formats, the built-ins, the files found on this machine,
the Hub's catalog, the load cache, and the one writer that never leaves a half-written file.
The app and the command line import from this package (the Hub itself is :mod:`bpeinspect.core.io.hub`);
each module loads when one of its names is first asked for (see :mod:`bpeinspect.core.faces`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bpeinspect.core.faces import lazy_names

if TYPE_CHECKING:
    from bpeinspect.core.io.atomic import atomic_open, atomic_path, atomic_write
    from bpeinspect.core.io.builtins import is_builtin, resources_dir
    from bpeinspect.core.io.discover import (
        CatalogEntry,
        add_recent,
        clear_recent,
        recent_files,
    )
    from bpeinspect.core.io.discover import (
        discover as discover_vocabularies,
    )
    from bpeinspect.core.io.formats import (
        FORMATS,
        Saved,
        check_target,
        detect_format,
        first_free_id,
        format_for_path,
        is_vocabulary_name,
        load_with,
        open_patterns,
        save,
        save_noted,
        saveable,
        special_tokens_from,
        with_settings,
    )
    from bpeinspect.core.io.formats.gpt2 import ENCODER as GPT2_ENCODER
    from bpeinspect.core.io.formats.gpt2 import MERGES as GPT2_MERGES
    from bpeinspect.core.io.hub_catalog import HubModel, hub_models
    from bpeinspect.core.io.hub_catalog import search as search_hub_models
    from bpeinspect.core.io.load_cache import turn_on as turn_on_load_cache
    from bpeinspect.core.io.provenance import badges as provenance_badges

__all__ = [
    "CatalogEntry",
    "FORMATS",
    "GPT2_ENCODER",
    "GPT2_MERGES",
    "HubModel",
    "add_recent",
    "atomic_open",
    "atomic_path",
    "atomic_write",
    "check_target",
    "clear_recent",
    "detect_format",
    "discover_vocabularies",
    "first_free_id",
    "format_for_path",
    "hub_models",
    "is_builtin",
    "is_vocabulary_name",
    "load_with",
    "open_patterns",
    "provenance_badges",
    "recent_files",
    "resources_dir",
    "Saved",
    "save",
    "save_noted",
    "saveable",
    "search_hub_models",
    "special_tokens_from",
    "turn_on_load_cache",
    "with_settings",
]

__getattr__ = lazy_names(
    __name__,
    {
        "atomic": "atomic_open atomic_path atomic_write",
        "builtins": "is_builtin resources_dir",
        "discover": "CatalogEntry add_recent clear_recent discover_vocabularies=discover recent_files",
        "formats": "FORMATS check_target detect_format first_free_id format_for_path is_vocabulary_name load_with open_patterns Saved save save_noted saveable special_tokens_from with_settings",
        "formats.gpt2": "GPT2_ENCODER=ENCODER GPT2_MERGES=MERGES",
        "hub_catalog": "HubModel hub_models search_hub_models=search",
        "load_cache": "turn_on_load_cache=turn_on",
        "provenance": "provenance_badges=badges",
    },
)
