"""How the main window looks: layers, palette, dark theme, text size (a MainWindow mixin).

>>> win.set_palette("colour-blind safe"); win.set_dark(True); win.zoom(1)  # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QApplication

from bpeinspect.gui.overlay.palette import TokenPalette

IDS_SCALE = 1.5  # see Appearance._apply_font
IDS_RAISE = 40.0  # percent of the font height the text is raised by when ids are shown


class Appearance:
    """Layer toggles, token palette, light/dark theme and zoom (mixed into MainWindow)."""

    def set_palette(self, name: str) -> None:
        self.palette_name = name
        self._apply_palette()

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        app = QApplication.instance()
        if dark:
            pal = QPalette()
            for role, color in (
                (QPalette.ColorRole.Window, "#2b2b2b"),
                (QPalette.ColorRole.WindowText, "#e6e6e6"),
                (QPalette.ColorRole.Base, "#1e1e1e"),
                (QPalette.ColorRole.AlternateBase, "#2b2b2b"),
                (QPalette.ColorRole.Text, "#e6e6e6"),
                (QPalette.ColorRole.Button, "#353535"),
                (QPalette.ColorRole.ButtonText, "#e6e6e6"),
                (QPalette.ColorRole.Highlight, "#3d7bd9"),
                (QPalette.ColorRole.HighlightedText, "#ffffff"),
                (QPalette.ColorRole.ToolTipBase, "#353535"),
                (QPalette.ColorRole.ToolTipText, "#e6e6e6"),
            ):
                pal.setColor(role, QColor(color))
            app.setPalette(pal)
        else:
            app.setPalette(app.style().standardPalette())
        self._apply_palette()

    def zoom(self, step: int) -> None:
        """Text size one point up (1), down (-1) or back to the default (0), in every pane."""
        base = QApplication.font().pointSizeF() + 2
        self.text_size = base if step == 0 else max(6.0, min(48.0, self.text_size + step))
        self._apply_font()

    def _apply_font(self) -> None:
        """Set the text size; with inline ids the lines get room below the text for them.

        QPlainTextEdit has no line spacing setting, but a superscript line is taller: so the
        document font is made ``IDS_SCALE`` times larger and all text set as superscript,
        which Qt draws at 2/3 size, i.e. at the normal size, raised above free room."""
        font = self.document.defaultFont()
        ids = self.layers.ids
        font.setPointSizeF(self.text_size * (IDS_SCALE if ids else 1.0))
        self.document.setDefaultFont(font)
        fmt = QTextCharFormat()
        fmt.setVerticalAlignment(
            QTextCharFormat.VerticalAlignment.AlignSuperScript if ids else QTextCharFormat.VerticalAlignment.AlignNormal
        )
        if ids:
            fmt.setSuperScriptBaseline(IDS_RAISE)
        if ids or self._ids_font_applied:
            cur = QTextCursor(self.document)
            cur.select(QTextCursor.SelectionType.Document)
            cur.mergeCharFormat(fmt)
            self._ids_font_applied = ids
        for pane in self.panes.values():
            pane.view.setFont(font)
            pane.view.mergeCurrentCharFormat(fmt)
            pane.view.text_scale = 2 / 3 if ids else 1.0
            pane.view.viewport().update()

    def _set_layer(self, name: str, on: bool) -> None:
        setattr(self.layers, name, on)
        for pane in self.panes.values():
            pane.view.set_layers(self.layers)
        if name == "ids":
            self._apply_font()

    def _apply_palette(self) -> None:
        self.token_palette = TokenPalette(self.palette_name, dark=self.dark)
        for pane in self.panes.values():
            pane.view.set_token_palette(self.token_palette)
        self.ids_view.palette_ = self.token_palette
        self.ids_view.viewport().update()
