"""Token colours: the same id always gets the same colour, in light and dark themes.

Colours come from a fixed list of well-separated hues picked by a hash of the token id, so a
token keeps its colour in every view and every run. Neighbours that happen to share a colour
are still told apart: the overlay leaves a gap and draws an edge between every two tokens.

>>> p = TokenPalette("default", dark=False)
>>> p.background(42) == p.background(42)
True
"""

from __future__ import annotations

from PySide6.QtGui import QColor

# Tints for light backgrounds (text stays black on them)
_DEFAULT_LIGHT = [
    "#ffd6a5",
    "#caffbf",
    "#9bf6ff",
    "#bdb2ff",
    "#ffc6ff",
    "#fdffb6",
    "#a0c4ff",
    "#ffadad",
    "#d0f4de",
    "#e4c1f9",
    "#f1c0e8",
    "#b9fbc0",
    "#fbc4ab",
    "#cfbaf0",
    "#98f5e1",
    "#f9dcc4",
]
# Okabe & Ito's colour-blind-safe set, lightened so black text stays readable
_OKABE_ITO = ["#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#999999"]

PALETTES = ("default", "colour-blind safe")


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(
        a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t, a.blueF() * (1 - t) + b.blueF() * t
    )


def _spread(token_id: int) -> int:
    # Knuth's multiplicative hash: consecutive ids (often similar tokens) land far apart
    return (token_id * 2654435761) & 0xFFFFFFFF


class TokenPalette:
    """Background colours for token ids; ``dark`` picks deep tints for a dark theme."""

    def __init__(self, name: str = "default", *, dark: bool = False) -> None:
        if name not in PALETTES:
            raise ValueError(f"unknown palette {name!r}; expected one of {', '.join(PALETTES)}")
        self.name = name
        self.dark = dark
        base = [QColor(c) for c in (_DEFAULT_LIGHT if name == "default" else _OKABE_ITO)]
        if name != "default":
            # two lightness steps per hue doubles the colours without losing the safe hues
            base = [_mix(c, QColor("white"), 0.68) for c in base] + [_mix(c, QColor("white"), 0.42) for c in base]
        if dark:
            base = [_mix(c, QColor("#1e1e1e"), 0.55) for c in base]
        self.colors = base
        self.edge = QColor(0, 0, 0, 70) if not dark else QColor(255, 255, 255, 70)
        self.special = QColor("#ff4d4d") if not dark else QColor("#ff7070")
        self.split_char = QColor("#7a7a7a")
        self.selection = QColor("#e8175d") if not dark else QColor("#ffd400")
        self.glyph = QColor(0, 0, 0, 110) if not dark else QColor(255, 255, 255, 110)
        self.boundary = QColor("#3050c0") if not dark else QColor("#8fb0ff")

    def background(self, token_id: int) -> QColor:
        """The colour of ``token_id``."""
        return self.colors[_spread(token_id) % len(self.colors)]

    def text_color(self) -> QColor:
        return QColor("#111111") if not self.dark else QColor("#eeeeee")
