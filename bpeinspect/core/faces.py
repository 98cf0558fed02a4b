"""Package faces that load a module only when one of its names is first asked for.

A package such as :mod:`bpeinspect.core.analysis` imports what it offers under
``if TYPE_CHECKING:`` (so type checkers and readers see every name and where it lives), lists it
in ``__all__``, and sets ``__getattr__ = lazy_names(__name__, {module: "name name ..."})``.
``from bpeinspect.core.analysis import compare_boundaries`` then imports the one module that
defines it: the app's first screen does not pay for the Languages view, nor the command line's
start for the Hub's catalog.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: ``homes`` maps each of its modules (relative
    to the package) to the names it offers, separated by spaces (``alias=name`` offers ``name``
    as ``alias``). A name is imported from its module when first asked for, then kept in the
    package.

    >>> import json
    >>> getter = lazy_names("json", {"decoder": "JSONDecoder"})
    >>> getter("JSONDecoder") is json.decoder.JSONDecoder
    True
    >>> lazy_names("json", {"decoder": "Decoder=JSONDecoder"})("Decoder").__name__
    'JSONDecoder'
    >>> getter("nothing")
    Traceback (most recent call last):
    AttributeError: module 'json' has no attribute 'nothing'
    """
    namespace = sys.modules[package].__dict__
    home: dict[str, tuple[str, str]] = {}
    for module, names in homes.items():
        for name in names.split():
            alias, _, original = name.rpartition("=")
            home[alias or original] = (f"{package}.{module}", original)

    def __getattr__(name: str) -> object:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = home[name]
        value = getattr(importlib.import_module(module), original)
        namespace[name] = value
        return value

    return __getattr__
