"""The open tokenizers: which are open, which is current, and the recently opened ones.

Other panels (vocabulary browser, merge tree, compare...) follow a :class:`TokenizerRegistry`
instead of the main window's widgets.

>>> reg = TokenizerRegistry()                     # doctest: +SKIP
>>> reg.currentChanged.connect(panel.set_tokenizer)  # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Signal

from bpeinspect.core import Tokenizer

RECENT_LIMIT = 10


class TokenizerRegistry(QObject):
    """Open tokenizers in the order they were opened, and the current one."""

    added = Signal(object)  # Tokenizer
    removed = Signal(object)  # Tokenizer
    currentChanged = Signal(object)  # Tokenizer or None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._toks: list[Tokenizer] = []
        self._current: Tokenizer | None = None
        self._specs: dict[int, str] = {}

    def tokenizers(self) -> list[Tokenizer]:
        return list(self._toks)

    def __len__(self) -> int:
        return len(self._toks)

    def __contains__(self, tok: object) -> bool:
        return any(t is tok for t in self._toks)

    def current(self) -> Tokenizer | None:
        return self._current

    def spec_of(self, tok: Tokenizer) -> str:
        """The name or path ``tok`` was opened from."""
        return self._specs.get(id(tok), tok.name)

    def find(self, spec: str) -> Tokenizer | None:
        for t in self._toks:
            if self.spec_of(t) == spec:
                return t
        return None

    def add(self, tok: Tokenizer, spec: str = "") -> None:
        """Open ``tok``; the first one opened becomes current."""
        if tok in self:
            return
        self._toks.append(tok)
        self._specs[id(tok)] = spec or tok.name
        self.added.emit(tok)
        if self._current is None:
            self.set_current(tok)

    def remove(self, tok: Tokenizer) -> None:
        if tok not in self:
            return
        self._toks = [t for t in self._toks if t is not tok]
        self._specs.pop(id(tok), None)
        self.removed.emit(tok)
        if self._current is tok:
            self.set_current(self._toks[0] if self._toks else None)

    def set_current(self, tok: Tokenizer | None) -> None:
        if tok is not None and tok not in self:
            raise ValueError(f"{tok!r} is not open")
        if tok is not self._current:
            self._current = tok
            self.currentChanged.emit(tok)


def recent_tokenizers(settings: QSettings | None = None) -> list[str]:
    """Paths of recently opened vocabulary files, newest first."""
    s = settings or QSettings("bpeinspect", "bpeinspect")
    value = s.value("recent_tokenizers", [])
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in (value or [])]


def remember_tokenizer(path: str, settings: QSettings | None = None) -> None:
    s = settings or QSettings("bpeinspect", "bpeinspect")
    items = [p for p in recent_tokenizers(s) if p != path]
    s.setValue("recent_tokenizers", [path, *items][:RECENT_LIMIT])
