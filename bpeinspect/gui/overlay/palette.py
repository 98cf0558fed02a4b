"""Every colour of the app, for the light and the dark theme.

Token colours (:class:`TokenPalette`): the same id always gets the same colour, from a fixed
list of well-separated hues picked by a hash of the token id, so a token keeps its colour in
every view and every run. Neighbours that happen to share a colour are still told apart: the
overlay leaves a gap and draws an edge between every two tokens.

Everything else (:class:`UiColors`): messages, warnings, the compare view, the replay chips,
the plots, and the dark theme's window palette. Widgets ask :func:`app_colors` when they
draw or style themselves, and again when the application palette changes, so a switch of
theme reaches them all.

>>> p = TokenPalette("default", dark=False)
>>> p.background(42) == p.background(42)
True
>>> colors(dark=True).error_text != colors(dark=False).error_text
True
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QGuiApplication, QPalette

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
        # a special token's cell (the ids): a tint the theme's text stays readable on
        self.special_fill = (
            _mix(self.special, QColor("white"), 0.55) if not dark else _mix(self.special, QColor("#1e1e1e"), 0.6)
        )
        self.split_char = QColor("#7a7a7a")
        self.selection = QColor("#e8175d") if not dark else QColor("#ffd400")
        self.glyph = QColor(0, 0, 0, 110) if not dark else QColor(255, 255, 255, 110)
        self.boundary = QColor("#3050c0") if not dark else QColor("#8fb0ff")
        self.dropped = QColor("#d84315") if not dark else QColor("#ff9e66")  # text with a byte no token holds

    def background(self, token_id: int) -> QColor:
        """The colour of ``token_id``."""
        return self.colors[_spread(token_id) % len(self.colors)]

    def text_color(self) -> QColor:
        return QColor("#111111") if not self.dark else QColor("#eeeeee")


@dataclass(frozen=True)
class UiColors:
    """The colours of one theme, as ``#rrggbb`` names (what style sheets, HTML and pyqtgraph take)."""

    dark: bool
    error_text: str  # error messages, failed patterns, problem files
    error_bg: str
    info_text: str  # the message bar's notes
    info_bg: str
    note_text: str  # a remark beside a result (the replay's notes)
    tip_label: str  # the quiet labels of a token's tooltip, on the tooltip's own background
    warn_text: str  # vocabulary rows flagged unreachable or unused
    warn_bg: str
    compare_special: str
    compare_diff: str  # a boundary the reference lacks
    # a split-character box holding a differing boundary: red tints the theme's text reads on,
    # two of them, alternated so that neighbouring boxes stay apart
    compare_diff_box: tuple[str, str]
    chips: tuple[str, ...]  # the replay's token chips
    chip_merged: str
    chip_next: str
    chip_border: str
    chip_text: str
    chip_rank: str
    code_bg: str  # inline token text in rich-text labels
    preview: tuple[str, str]  # alternating pre-tokens of the split preview
    plot_bg: str
    plot_text: str
    plot_axis: str
    plot_guide: str  # dashed guide lines (sizes asked for, the premium baseline)
    plot_legend_bg: str
    series: tuple[str, ...]  # one colour per tokenizer in the languages plot
    plot_land: str  # the world map's coastlines
    plot_point_edge: str  # the outline of a language's point on the map
    premium_scale: tuple[str, ...]  # the map's premiums 1x, 2x, 4x, 8x, 16x (and beyond)
    count_curve: str  # the training plots
    bpt_curve: str


def _theme(dark: bool) -> UiColors:
    """The colours of the light or the dark theme: each role's pair reads ``(light, dark)``."""
    i = int(dark)
    return UiColors(
        dark=dark,
        error_text=("#a01414", "#ff8a80")[i],
        error_bg=("#fde2e1", "#4a1c1c")[i],
        info_text=("#0d3b66", "#b3d4f5")[i],
        info_bg=("#e3f1fd", "#1c3147")[i],
        note_text=("#92400e", "#f5b971")[i],
        tip_label=("#5a5a5a", "#b0b0b0")[i],
        warn_text=("#a01414", "#ff8a80")[i],
        warn_bg=("#ffe4e1", "#4a2424")[i],
        compare_special=("#e3c8ff", "#4f2f73")[i],
        compare_diff=("#d00000", "#ff6b6b")[i],
        chip_merged=("#86efac", "#2f7a45")[i],
        chip_next=("#f97316", "#fb923c")[i],
        chip_border=("#94a3b8", "#64748b")[i],
        chip_text=("#111827", "#f1f5f9")[i],
        chip_rank=("#166534", "#86efac")[i],
        code_bg=("#e5e7eb", "#3a3f47")[i],
        plot_bg=("#ffffff", "#1e1e1e")[i],
        plot_text=("#333333", "#dddddd")[i],
        plot_axis=("#888888", "#999999")[i],
        plot_guide=("#999999", "#777777")[i],
        plot_legend_bg=("#ffffff", "#2b2b2b")[i],
        plot_land=("#9aa5b1", "#5c6670")[i],
        plot_point_edge=("#404040", "#101010")[i],
        count_curve=("#3d7bd9", "#6ea4ff")[i],
        bpt_curve=("#d9653d", "#ff9a6e")[i],
        # the sets of colours
        compare_diff_box=(("#ffb8b0", "#ffd6d1"), ("#7a2020", "#5a1818"))[i],
        chips=(
            ("#dbeafe", "#fef3c7", "#dcfce7", "#fce7f3", "#e0e7ff"),
            ("#1e3a5f", "#4d3b12", "#1d4a2c", "#4f1f3a", "#2b3168"),
        )[i],
        preview=(("#d6e6fb", "#fde2cc"), ("#27406a", "#5a3a22"))[i],
        series=(
            ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f"),
            ("#6b9bd1", "#f5a55a", "#7cc26f", "#ef7f81", "#8fd0cb", "#c99bbd", "#f0d86a", "#c19a7f"),
        )[i],
        premium_scale=(
            ("#2c7bb6", "#7fbfdc", "#f2e35c", "#f08a3c", "#c4161c"),
            ("#4a9ad4", "#98d1e8", "#f5e86e", "#f59a4e", "#e8413a"),
        )[i],
    )


_LIGHT, _DARK = _theme(dark=False), _theme(dark=True)

# the dark theme's window palette (the light theme keeps the style's own)
_DARK_WINDOW = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1e1e1e",
    QPalette.ColorRole.AlternateBase: "#2b2b2b",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#353535",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.Highlight: "#3d7bd9",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.ToolTipBase: "#353535",
    QPalette.ColorRole.ToolTipText: "#e6e6e6",
    QPalette.ColorRole.PlaceholderText: "#9a9a9a",
}

_DARK_DISABLED = {
    QPalette.ColorRole.WindowText: "#7f7f7f",
    QPalette.ColorRole.Text: "#7f7f7f",
    QPalette.ColorRole.ButtonText: "#7f7f7f",
    QPalette.ColorRole.Button: "#2f2f2f",
}

# an exported HTML page is read on its own, on a white page, whatever the theme
# sixteen colours told apart in both themes (Tableau's 20, the pale ones left out): the
# categories of a figure (scripts, kinds of token)
CATEGORY_COLORS = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#499894",
    "#d37295",
    "#a0cbe8",
    "#8cd17d",
    "#b6992d",
    "#79706e",
)
EXPORT_SPECIAL = "#ee3333"
EXPORT_SPLIT = "#777777"


def colors(dark: bool) -> UiColors:
    """The colours of the light or the dark theme."""
    return _DARK if dark else _LIGHT


def is_dark(palette: QPalette) -> bool:
    """True if ``palette`` draws light text on a dark window."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def app_colors() -> UiColors:
    """The colours of the theme the application shows now."""
    return colors(is_dark(QGuiApplication.palette()))


def dark_window_palette() -> QPalette:
    """The application palette of the dark theme."""
    pal = QPalette()
    for role, name in _DARK_WINDOW.items():
        pal.setColor(role, QColor(name))
    for role, name in _DARK_DISABLED.items():  # else a disabled button looks as clickable as the others
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(name))
    return pal
