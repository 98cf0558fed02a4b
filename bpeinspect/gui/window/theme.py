"""How the text looks: overlay layers, token palette, light/dark theme and text size.

One :class:`Appearance` per window holds these and says ``changed`` when any of them
changes; the panes and the ids view restyle themselves from it (:meth:`Appearance.style_view`).
The theme is ``"system"`` (follow the desktop), ``"light"`` or ``"dark"``; a dark theme sets
the application palette, which every widget hears as a palette change.

>>> look = Appearance(document); look.set_palette("colour-blind safe"); look.zoom(1)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import fields

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QProxyStyle, QStyle

from bpeinspect.gui.overlay.glyphs import CodePointSpacer
from bpeinspect.gui.overlay.palette import PALETTES, TokenPalette, dark_window_palette, is_dark
from bpeinspect.gui.overlay.token_view import Layers, TokenView
from bpeinspect.gui.turns import painted_in_parts

THEMES = ("system", "light", "dark")
LAYERS = tuple(f.name for f in fields(Layers))
FONT_RANGE = (6.0, 48.0)  # points
IDS_SCALE = 1.5  # see Appearance._line_format
IDS_RAISE = 40.0  # percent of the font height the text is raised by when ids are shown


class ThemedStyle(QProxyStyle):
    """The platform's style, with the title-bar buttons of docks (close, float) drawn in the
    theme's text colour: the style's own are dark grey, invisible on a dark theme."""

    BUTTONS = (
        QStyle.StandardPixmap.SP_TitleBarCloseButton,
        QStyle.StandardPixmap.SP_DockWidgetCloseButton,
        QStyle.StandardPixmap.SP_TitleBarNormalButton,
    )

    INDICATORS = (
        QStyle.PrimitiveElement.PE_IndicatorCheckBox,
        QStyle.PrimitiveElement.PE_IndicatorRadioButton,
        QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck,
    )

    def standardIcon(self, standardIcon: QStyle.StandardPixmap, option=None, widget=None) -> QIcon:  # noqa: N802, N803
        if standardIcon in self.BUTTONS:
            return button_icon(standardIcon, QGuiApplication.palette().color(QPalette.ColorRole.WindowText))
        return super().standardIcon(standardIcon, option, widget)

    def drawPrimitive(self, element, option, painter, widget=None) -> None:  # noqa: N802
        """The style's check and radio boxes, with a border that shows on a dark theme (the
        style draws it a shade darker than the window: invisible on a dark one)."""
        super().drawPrimitive(element, option, painter, widget)
        if element not in self.INDICATORS or not is_dark(option.palette):
            return
        pal = option.palette
        edge = blend(pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.WindowText), 0.55)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(edge, 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        box = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        if element == QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            painter.drawEllipse(box)
        else:
            painter.drawRoundedRect(box, 1.5, 1.5)
        painter.restore()


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """The colour ``t`` of the way from ``a`` to ``b``."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
    )


def button_icon(kind: QStyle.StandardPixmap, color: QColor, size: int = 16) -> QIcon:
    """A close (✕) or float (two windows) button's icon drawn in ``color`` (drawn once per
    kind, colour and size: a dock's title bar asks again at every layout, and the window's
    docks asked dozens of times when a tokenizer came in)."""
    return _button_icon(kind, color.rgba(), size)


@functools.lru_cache(maxsize=64)
def _button_icon(kind: QStyle.StandardPixmap, rgba: int, size: int) -> QIcon:
    color = QColor.fromRgba(rgba)
    icon = QIcon()
    for scale in (1, 2):
        pix = QPixmap(size * scale, size * scale)
        pix.setDevicePixelRatio(scale)
        pix.fill(Qt.GlobalColor.transparent)
        p = QPainter(pix)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(color, 1.6))
        if kind == QStyle.StandardPixmap.SP_TitleBarNormalButton:
            p.drawRect(QRectF(3.5, 6.5, 7, 6))
            p.drawPolyline(
                [QPointF(6.5, 6.5), QPointF(6.5, 3.5), QPointF(12.5, 3.5), QPointF(12.5, 9.5), QPointF(10.5, 9.5)]
            )
        else:
            p.drawLine(QPointF(4.5, 4.5), QPointF(11.5, 11.5))
            p.drawLine(QPointF(11.5, 4.5), QPointF(4.5, 11.5))
        p.end()
        icon.addPixmap(pix)
    return icon


def use_themed_style(app: QApplication) -> None:
    """Give ``app`` a :class:`ThemedStyle` (once: a new style polishes every widget again)."""
    style = app.style()
    base = style.baseStyle().name() if isinstance(style, ThemedStyle) else style.name()
    app.setStyle(ThemedStyle(base))


def recolour_dock_buttons(app: QApplication) -> None:
    """Have every dock ask its style for its buttons' icons again, in the palette's new colours
    (a style change told to the docks alone: setting the style anew would polish every widget
    of the window again, which took 30-60 ms on the GUI thread)."""
    change = QEvent(QEvent.Type.StyleChange)
    for top in app.topLevelWidgets():
        docks = top.findChildren(QDockWidget)
        if isinstance(top, QDockWidget):
            docks.append(top)
        for dock in docks:
            QApplication.sendEvent(dock, change)


def system_is_dark() -> bool:
    """True if the desktop asks for a dark colour scheme (Qt 6.5+ knows; otherwise light)."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return scheme is not None and scheme() == Qt.ColorScheme.Dark


def default_text_size() -> float:
    return QApplication.font().pointSizeF() + 2


class Appearance(QObject):
    """The look of one window's text views."""

    changed = Signal()  # layers, palette, theme or text size
    themeChanged = Signal(str)  # "system", "light" or "dark"

    def __init__(
        self,
        document: QTextDocument,
        parent: QObject | None = None,
        format_lines: Callable[[QTextCharFormat | None], None] | None = None,
    ) -> None:
        """``format_lines(fmt)``: lays every line of the document out with ``fmt`` (``None``:
        without), in slices (``LiveDocument.set_line_format``); without it, all at once."""
        super().__init__(parent)
        self.document = document
        self.format_lines = format_lines
        self.layers = Layers()
        self.palette_name = PALETTES[0]
        self.theme = "system"
        self.dark = is_dark(QGuiApplication.palette())  # another window may have set a theme
        self.token_palette = TokenPalette(dark=self.dark)
        self.text_size = default_text_size()
        self._line_size_applied: float | None = None  # the line format's font size (None: none)
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self.follow_system)
        self._apply_font()

    # -- changes ----------------------------------------------------------------------------------

    def set_layer(self, name: str, on: bool) -> None:
        if getattr(self.layers, name) != on:
            setattr(self.layers, name, on)
            if name == "ids":
                self._apply_font()
            self.changed.emit()

    def set_palette(self, name: str) -> None:
        if name not in PALETTES:
            raise ValueError(f"unknown palette {name!r}; expected one of {', '.join(PALETTES)}")
        self.palette_name = name
        self.token_palette = TokenPalette(name, dark=self.dark)
        self.changed.emit()

    def set_theme(self, theme: str) -> None:
        """``"system"``, ``"light"`` or ``"dark"``."""
        if theme not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)}, not {theme!r}")
        self.theme = theme
        self._set_dark(system_is_dark() if theme == "system" else theme == "dark")
        self.themeChanged.emit(theme)

    def follow_system(self, *_args: object) -> None:
        """The desktop's colour scheme changed: follow it unless the theme is set."""
        if self.theme == "system":
            self._set_dark(system_is_dark())
            self.themeChanged.emit(self.theme)

    def zoom(self, step: int) -> None:
        """Text size one point up (1), down (-1) or back to the default (0)."""
        self.set_text_size(default_text_size() if step == 0 else self.text_size + step)

    def set_text_size(self, size: float) -> None:
        self.text_size = min(max(size, FONT_RANGE[0]), FONT_RANGE[1])
        self._apply_font()
        self.changed.emit()

    # -- applying ---------------------------------------------------------------------------------

    def style_view(self, view: TokenView) -> None:
        """Give ``view`` the layers, token colours and font."""
        view.set_layers(self.layers)
        view.set_token_palette(self.token_palette)
        view.setFont(self.document.defaultFont())
        view.viewport().update()

    def _set_dark(self, dark: bool) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication) and not isinstance(app.style(), ThemedStyle):
            use_themed_style(app)  # first: a new style resets the palette to its own
            app.setPalette(dark_window_palette() if dark else app.style().standardPalette())
        elif isinstance(app, QApplication) and dark != self.dark:
            with contextlib.ExitStack() as parts:
                for top in app.topLevelWidgets():
                    if isinstance(top, QMainWindow):
                        parts.enter_context(painted_in_parts(top))  # the text, then each dock
                app.setPalette(dark_window_palette() if dark else app.style().standardPalette())
                recolour_dock_buttons(app)
                self._recolour(dark)  # (the views recolour in the parts' turns)
            return
        self._recolour(dark)

    def _recolour(self, dark: bool) -> None:
        """The token colours for ``dark``, told to the views."""
        self.dark = dark
        self.token_palette = TokenPalette(self.palette_name, dark=dark)
        self.changed.emit()

    def _line_format(self) -> QTextCharFormat | None:
        """What every line is laid out with: with inline ids, room below the text for them;
        without, nothing.

        QPlainTextEdit has no line spacing setting, but a superscript line is taller: so each line
        is laid out ``IDS_SCALE`` times larger and as superscript, which Qt draws at 2/3 size, i.e.
        at the normal size, raised above free room. This is a format of the layout, not of the text
        (see ``LiveDocument.set_line_format``), and the document's own font stays as it is: a new
        default font would make Qt lay out every line of a long text again at once."""
        if not self.layers.ids:
            return None
        fmt = QTextCharFormat()
        fmt.setFontPointSize(self.text_size * IDS_SCALE)
        fmt.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
        fmt.setSuperScriptBaseline(IDS_RAISE)
        return fmt

    def _apply_font(self) -> None:
        """Set the document's font to the text size, and the lines' format for inline ids."""
        font = self.document.defaultFont()
        if font.pointSizeF() != self.text_size:
            font.setPointSizeF(self.text_size)
            self.document.setDefaultFont(font)
        line = self._line_format()
        size = None if line is None else line.fontPointSize()
        if size != self._line_size_applied:
            if self.format_lines is not None:
                self.format_lines(line)
            else:
                CodePointSpacer.ensure(self.document).format_lines(line)
        self._line_size_applied = size
