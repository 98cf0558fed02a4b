"""The one way in: a tokenizer from a built-in name or from a file or folder of any format.

>>> load_tokenizer("gpt2").n_vocab
50257
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.builtins import ALIASES, BUILTINS, VARIANTS, is_builtin, load_builtin
from bpeinspect.core.io.hub import PREFIX as HUB_PREFIX
from bpeinspect.core.tokenizer import Tokenizer


def load_tokenizer(spec: str | os.PathLike[str], *, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    """A tokenizer from a built-in name (tiktoken's: ``"gpt2"``, ``"r50k_base"``, ``"p50k_base"``,
    ``"p50k_edit"``, ``"cl100k_base"``, ``"o200k_base"``, ``"o200k_harmony"``), a model on the
    Hugging Face Hub (``"hf:OWNER/NAME[@REVISION]"``, see :mod:`bpeinspect.core.io.hub`) or a
    path to a vocabulary file or folder.

    ``should_stop`` is asked in the long loops of the load (reading, parsing, building the
    tables, a download): :class:`~bpeinspect.core.errors.Cancelled` if it says so. A GUI's
    loading worker gives way to the window there."""
    if isinstance(spec, str) and is_builtin(spec):
        return load_builtin(ALIASES.get(spec, spec), should_stop=should_stop)
    if isinstance(spec, str) and spec.startswith(HUB_PREFIX):
        from bpeinspect.core.io import hub

        return hub.load(spec, should_stop=should_stop)
    path = Path(spec)
    if path.exists():
        # imported here: the format modules (and the gguf package) are slow to import,
        # which a start-up that only needs a built-in vocabulary should not pay
        from bpeinspect.core.io.formats import load_path

        return load_path(path, should_stop=should_stop)
    problem = _unreachable(path)
    if problem:
        raise VocabularyError(f"{path}: {problem}")
    known = ", ".join([*BUILTINS, *VARIANTS, *ALIASES])
    raise VocabularyError(
        f"no built-in tokenizer or file named {str(spec)!r} (built-ins: {known}; a Hub model: hf:OWNER/NAME)"
    )


def _unreachable(path: Path) -> str:
    """Why a path that is there (a link, a name in a folder one may not enter) cannot be
    opened; "" if there is nothing by that name at all."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop (the links lead back to themselves)"
        if os.path.islink(path):
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            return f"cannot open it: {exc.strerror or exc}"
    return ""
