"""Keep pastes and texts within what the window can hold.

The window puts a big paste into its document a slice per event-loop turn (Qt inserts text
slowly, on the GUI thread), so pasting does not freeze it; but every megabyte of text
also costs memory (Qt's copy, the window's, and each tokenizer's encoding: 50-60 MB per MB of
text and tokenizer). Pastes over :data:`PASTE_LIMIT`, or that would take the text past
:data:`TEXT_LIMIT`, are refused with a message in the window that says what to do instead;
nothing is inserted.

"""

from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtWidgets import QWidget

from bpeinspect.core import human_size

TEXT_LIMIT = 64 << 20  # UTF-8 bytes (roughly) the whole text may reach, by opening or pasting
PASTE_LIMIT = TEXT_LIMIT  # UTF-8 bytes in one paste or drop


def paste_size(source: QMimeData) -> int:
    """Bytes of the text a paste would insert, read without converting it to a Python string."""
    if source.hasFormat("text/plain"):
        return source.data("text/plain").size()
    return len(source.text().encode("utf-8", "surrogatepass")) if source.hasText() else 0


def file_too_big(path: str) -> str | None:
    """Why the text file at ``path`` is too big to open in the window, or None if it is not."""
    import os

    try:
        size = os.path.getsize(path)
    except OSError:
        return None  # the reader reports missing or unreadable files
    if size <= TEXT_LIMIT:
        return None
    return (
        f"{path} holds {human_size(size)} of text, more than the {human_size(TEXT_LIMIT)} the window "
        "can show without freezing; count its tokens with 'bpeinspect-cli encode -t NAME FILE'."
    )


def allow_paste(view: QWidget, source: QMimeData, size: int | None = None) -> bool:
    """True if ``source`` (``size`` bytes, if known) may be inserted into ``view``; otherwise
    the window says why."""
    if size is None:
        size = paste_size(source)
    if size <= PASTE_LIMIT:
        doc = getattr(view, "document", None)
        # characterCount() is UTF-16 units, near enough to bytes for a limit
        current = doc().characterCount() if doc is not None else 0
        if current + size <= TEXT_LIMIT:
            return True
        why = f"the text would grow to about {human_size(current + size)} (the editor's limit is {human_size(TEXT_LIMIT)})"
    else:
        why = f"{human_size(size)} is more than the {human_size(PASTE_LIMIT)} one paste may hold"
    message = (
        f"Nothing was pasted: {why}. "
        f"Open texts up to {human_size(TEXT_LIMIT)} with File ▸ Open text…; count the tokens of bigger "
        "ones with 'bpeinspect-cli encode -t NAME FILE'."
    )
    show_error = getattr(view.window(), "show_error", None)
    if callable(show_error):
        show_error(message)
    return False
