"""The window's docked panels, made from the :class:`~bpeinspect.gui.panels.specs.PanelSpec` registry.

>>> host = PanelHost(window, PANELS); host.show("languages")   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Sequence
from typing import Protocol, cast

from PySide6.QtCore import QChildEvent, QEvent, QObject, QSize, Qt, QThreadPool, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QMainWindow,
    QProxyStyle,
    QScrollArea,
    QStyle,
    QTabBar,
    QToolButton,
    QWidget,
)

from bpeinspect.gui.concurrency import Worker
from bpeinspect.gui.panels.context import PanelWindow
from bpeinspect.gui.panels.specs import Inspector, PanelSpec
from bpeinspect.gui.turns import painted_in_parts
from bpeinspect.gui.window.actions import ActionRegistry, ActionSpec

DOCK_WIDTH = 460  # the side docks' width at first, in a window wide enough
DOCK_SHARE = 0.33  # at most this share of a narrower window's width (the text keeps two thirds)
DOCK_MIN = 300
TABS_SHARE = 0.40  # of the window's width, at most, for the side docks to show all their tabs
_SIDES = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
BESIDE_MIN = 480  # px of free screen a big panel needs to open beside the window rather than docked
FRAME = 8  # px a floating dock's frame may add to its size
BOTTOM_SHARE = 0.36  # of the window's height, at least, for a big panel docked below the text
BOTTOM_WANTED = 560  # px a big panel docked below the text wants for its form and plots
TEXT_KEEPS = 640  # px of height the text keeps above it before the panel gets what it wants
DOCK_TAB_SPACE = 12  # px beside the title of a dock's tab, both sides together (the style's: about 24)


def dock_width(window_width: int) -> int:
    """The side docks' first width in a window ``window_width`` wide.

    >>> dock_width(1400), dock_width(1024), dock_width(700)
    (460, 337, 300)
    """
    return max(DOCK_MIN, min(DOCK_WIDTH, int(window_width * DOCK_SHARE)))


def bottom_height(window_height: int) -> int:
    """The first height of a big panel docked below the text in a window ``window_height`` high:
    what it wants where the text keeps enough, else its share.

    >>> bottom_height(1200), bottom_height(1000), bottom_height(700)
    (560, 360, 252)
    """
    return max(int(window_height * BOTTOM_SHARE), min(BOTTOM_WANTED, window_height - TEXT_KEEPS))


def tab_leaves_tables(view: QWidget) -> None:
    """Tab leaves every table of ``view`` for the next widget (a table's own Tab moves from cell
    to cell, through every row: the arrows do that)."""
    for table in view.findChildren(QAbstractItemView):
        table.setTabKeyNavigation(False)


def in_sight(widget: QWidget) -> bool:
    """False for a widget of a dock tabbed behind another (Qt keeps such a dock "visible" and
    in the focus chain, with nothing of it on screen)."""
    at: QWidget | None = widget
    while at is not None and not isinstance(at, QDockWidget):
        at = at.parentWidget()
    return at is None or at.isFloating() or not at.visibleRegion().isEmpty()


IMPORTS_AFTER_SHOW_MS = 300  # the lazy panels' modules are imported from this long after the first show


def _import_all(modules: list[str]) -> None:
    """Import each module, and run its ``warm_up()`` if it has one (what its panel's own worker
    would otherwise import at the panel's first open, next to the GUI thread's work)."""
    for name in modules:
        try:
            warm_up = getattr(importlib.import_module(name), "warm_up", None)
            if callable(warm_up):
                warm_up()
        except Exception:  # noqa: BLE001 (reported when the panel is made, on the GUI thread)
            return


class DockingWindow(PanelWindow, Protocol):
    """A main window the panels dock in: what they use of it, its menus and its docks."""

    @property
    def commands(self) -> ActionRegistry: ...

    def add_panel(self, title: str, widget: QWidget, area: Qt.DockWidgetArea = ...) -> QDockWidget: ...

    def tabifyDockWidget(self, first: QDockWidget, second: QDockWidget, /) -> None: ...

    def resizeDocks(
        self, docks: Sequence[QDockWidget], sizes: Sequence[int], orientation: Qt.Orientation, /
    ) -> None: ...

    def installEventFilter(self, filter: QObject, /) -> None: ...

    def dockWidgetArea(self, dock: QDockWidget, /) -> Qt.DockWidgetArea: ...

    def width(self) -> int: ...

    def height(self) -> int: ...

    def removeEventFilter(self, filter: QObject, /) -> None: ...


class CompactTabs(QProxyStyle):
    """The application's style (its platform one) with less room beside the title of each tab."""

    def __init__(self) -> None:
        app = QApplication.style()
        base = app.baseStyle() if isinstance(app, QProxyStyle) else app
        super().__init__(base.name())  # a style of its own: a proxy owns its base

    def pixelMetric(self, metric: QStyle.PixelMetric, option=None, widget=None) -> int:  # noqa: N802
        value = super().pixelMetric(metric, option, widget)
        return min(value, DOCK_TAB_SPACE) if metric == QStyle.PixelMetric.PM_TabBarTabHSpace else value


class WholeTabTitles(QObject):
    """The tab bars of docks tabbed together show whole titles, with less padding than the
    style's, where the dock is wide enough (the side docks are widened to it: see
    :meth:`PanelHost.fit_side_tabs`). In a dock narrower still they shorten the titles to keep
    every tab in sight (each tab's tooltip is its whole title), and scroll only past that."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._style: CompactTabs | None = None

    def _compact(self) -> CompactTabs:
        if self._style is None:
            self._style = CompactTabs()
            self._style.setParent(self)
        return self._style

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if isinstance(event, QChildEvent) and event.type() == QEvent.Type.ChildPolished:
            bar = event.child()
            if isinstance(bar, QTabBar):
                bar.setElideMode(Qt.TextElideMode.ElideRight)
                bar.setUsesScrollButtons(True)
                bar.setStyle(self._compact())
                for arrow in bar.findChildren(QToolButton):  # the scroll arrows: mouse only
                    arrow.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        return False


class PanelHost(QObject):
    """The docked panels of one main window (``window``: what :class:`DockingWindow` names of
    it); it is the :class:`~bpeinspect.gui.panels.context.PanelContext` each panel is made with."""

    def __init__(self, window: DockingWindow, specs: Sequence[PanelSpec]) -> None:
        super().__init__(cast(QObject, window))  # a QMainWindow: the host goes with it
        self.window = window
        self.specs = {spec.key: spec for spec in specs}
        self.views: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self.inspector = Inspector(window, self.docks)
        self._fit_later = QTimer(self, singleShot=True, interval=0)  # once the window has laid out its tab bars
        self._fit_later.timeout.connect(self.fit_side_tabs)
        self._tab_titles = WholeTabTitles(self)
        window.installEventFilter(self._tab_titles)
        for spec in specs:
            if spec.menu is not None:
                window.commands.separator(spec.menu)
                window.commands.add(
                    ActionSpec(f"panels.{spec.key}", spec.menu, spec.action, spec.shortcut),
                    lambda k=spec.key: self.bring(k),
                )
            if not spec.lazy:
                self._make(spec)
        # imported while the user looks at the window, not when a panel is first opened: from a
        # moment after the window is first shown (imports next to its first paint held the
        # interpreter away from it in long stretches, ~100 ms of stall)
        self._modules = [spec.module for spec in specs if spec.lazy and spec.module]
        self._imports: Worker | None = None
        self._import_later = QTimer(self, singleShot=True, interval=IMPORTS_AFTER_SHOW_MS)
        self._import_later.timeout.connect(self._start_imports)
        self._first = next((self.docks[s.key] for s in specs if s.key in self.docks), None)
        if self._first is not None:  # the first panel is in front (the token list)
            self._first.raise_()
        self._shown = False
        self._size_at = QSize()  # the window's size when the docks were last fitted to it
        self._shrink = QTimer(self, singleShot=True, interval=0)  # once the window is laid out anew
        self._shrink.timeout.connect(self._shrink_docks)
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is not self.window:
            return False
        if event.type() == QEvent.Type.Show and not self._shown:
            self._shown = True
            if self._modules:
                self._import_later.start()
            self._size_at = QSize(self.window.width(), self.window.height())
            first = self._first
            if first is not None and not getattr(self.window, "restored_docks", False):  # else the user's widths
                # once the window is laid out at its size (before, Qt shares the width out anew)
                QTimer.singleShot(0, lambda: self._size_side(first))
        elif event.type() == QEvent.Type.Resize and self._shown:
            self._shrink.start()
        return False

    def _shrink_docks(self) -> None:
        """A window made smaller (1920x1200 to 1024x700) shrinks its docks with it, down to
        what a new window of its size gives them: Qt takes it all from the text, which kept
        two lines a pane beside docks of the big window's size. Never grows them."""
        win = self.window
        old, new = self._size_at, QSize(win.width(), cast(QWidget, win).height())
        self._size_at = new
        for dock in self.docks.values():
            if dock.isFloating() or not dock.isVisible() or dock.visibleRegion().isEmpty():
                continue  # a dock tabbed behind another: the one in front sizes them
            bar = self._bar_of(dock)
            if win.dockWidgetArea(dock) in _SIDES:
                if new.width() < old.width():
                    least = dock_width(new.width())
                    if bar is not None:
                        least = max(least, self._tabs_need(bar, new.width()))
                    width = max(least, dock.width() * new.width() // old.width())
                    if width < dock.width():
                        win.resizeDocks([dock], [width], Qt.Orientation.Horizontal)
            elif new.height() < old.height():
                height = max(bottom_height(new.height()), dock.height() * new.height() // old.height())
                if height < dock.height():  # the size asked is the area's, with its tab bar
                    tab_bar = bar.height() if bar is not None else 0
                    win.resizeDocks([dock], [height + tab_bar], Qt.Orientation.Vertical)

    def _size_side(self, first: QDockWidget) -> None:
        """Give the side docks their first width: :func:`dock_width`, or what their tabs need
        to be all in sight (:meth:`fit_side_tabs`)."""
        win = self.window
        width = dock_width(win.width())
        bar = self._bar_of(first)
        if bar is not None:
            width = max(width, self._tabs_need(bar, win.width()))
        win.resizeDocks([first], [width], Qt.Orientation.Horizontal)

    @staticmethod
    def _titles(bar: QTabBar) -> list[str]:
        return [bar.tabText(i) for i in range(bar.count())]

    @staticmethod
    def _tabs_width(bar: QTabBar) -> int:
        """The width a dock needs for every tab of ``bar`` in sight, whole titles (measured
        with none shortened)."""
        mode = bar.elideMode()
        bar.setElideMode(Qt.TextElideMode.ElideNone)
        width = sum(bar.tabRect(i).width() for i in range(bar.count())) + FRAME
        bar.setElideMode(mode)
        return width

    @classmethod
    def _tabs_need(cls, bar: QTabBar, window_width: int) -> int:
        """The width a side dock is given for the tabs of ``bar``: all in sight, whole titles,
        up to :data:`TABS_SHARE` of a window ``window_width`` wide."""
        return min(cls._tabs_width(bar), int(window_width * TABS_SHARE))

    def _bar_of(self, dock: QDockWidget) -> QTabBar | None:
        """The tab bar ``dock`` is tabbed in, if it is tabbed with others."""
        return next((b for b in self._bars() if dock.windowTitle() in self._titles(b)), None)

    def _bars(self) -> list[QTabBar]:
        """The tab bars of the docks tabbed together."""
        win = cast(QWidget, self.window)
        return [b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible() and b.count() > 1]

    def _side_bars(self) -> list[tuple[QTabBar, QDockWidget]]:
        """The tab bars of the docks tabbed together beside the text, each with the dock in
        front of it."""
        win = self.window
        docked = {d.windowTitle(): d for d in self.docks.values() if not d.isFloating()}
        found = []
        for bar in self._bars():
            front = docked.get(bar.tabText(bar.currentIndex()))
            if front is not None and win.dockWidgetArea(front) in _SIDES:
                found.append((bar, front))
        return found

    def fit_side_tabs(self) -> None:
        """Widen the side docks to what their tabs need to be all in sight, whole titles, up to
        :data:`TABS_SHARE` of the window (a panel that joins them, Chat in a 1024 px window,
        made the bar scroll its first tabs out of sight). Never narrows them."""
        win = self.window
        for bar, front in self._side_bars():
            want = self._tabs_need(bar, win.width())
            if front.width() < want:
                win.resizeDocks([front], [want], Qt.Orientation.Horizontal)

    def _start_imports(self) -> None:
        if self._imports is None:  # (a pool of its own: the loading workers keep the shared pool's threads)
            self._imports = Worker(_import_all, self._modules).start(QThreadPool(self))

    def importing(self) -> bool:
        """True once the window is shown while the lazy panels' modules are still to be
        imported (on a worker)."""
        if self._import_later.isActive():
            return True
        return self._imports is not None and self._imports.is_running

    def view(self, key: str) -> QWidget | None:
        return self.views.get(key)

    def show(self, key: str) -> QWidget:
        """Make the panel if it is not made yet, show it and bring it to the front; returns its view."""
        spec = self.specs[key]
        made = key not in self.views
        with painted_in_parts(cast(QMainWindow, self.window)) if made else contextlib.nullcontext() as parts:
            view = self.views.get(key) or self._make(spec)
            tab_leaves_tables(view)  # with the tables it made since
            dock = self.docks[key]
            dock.show()
            dock.raise_()
            if parts is not None and not dock.isFloating():
                parts.hold(dock, first=True)
        if made and not dock.isFloating():  # a dock put back where the saved state had it joins
            QTimer.singleShot(0, dock, dock.raise_)  # its tab bar only once the window is laid out
        if not dock.isFloating():
            self._fit_later.start()
        if spec.shown is not None:
            spec.shown(view, self)
        return view

    def bring(self, key: str) -> QWidget:
        """Show the panel as :meth:`show` does, and give it the keyboard focus (what its menu
        entry and shortcut do: a panel beside the window is a window of its own, out of the
        reach of the main window's Tab)."""
        view = self.show(key)
        dock = self.docks[key]
        if dock.isFloating():
            dock.activateWindow()
        first: QWidget | None = view.nextInFocusChain()
        while first is not None and first is not view and view.isAncestorOf(first):
            takes = first.focusPolicy() & Qt.FocusPolicy.TabFocus and not isinstance(first, QScrollArea)  # a frame
            if takes and first.isVisible() and first.isEnabled():
                first.setFocus(Qt.FocusReason.ShortcutFocusReason)
                break
            first = first.nextInFocusChain()
        return view

    def _make(self, spec: PanelSpec) -> QWidget:
        view = spec.make(self)
        tab_leaves_tables(view)
        dock = self.window.add_panel(spec.title, view, spec.area)
        self.views[spec.key], self.docks[spec.key] = view, dock
        self.inspector.docked(spec.key, dock)
        # docked back or moved by the user: the side it joins shows all its tabs
        dock.topLevelChanged.connect(self._fit_later.start)
        dock.dockLocationChanged.connect(self._fit_later.start)
        if spec.tab_with in self.docks:
            self.window.tabifyDockWidget(self.docks[spec.tab_with], dock)
        if spec.docked is not None:
            spec.docked(view, dock)
        if spec.floating_size is not None and not dock.property("restored"):
            self._place(spec, dock)
        return view

    def _place(self, spec: PanelSpec, dock: QDockWidget) -> None:
        """A big panel opens beside the window where the screen has room for it, never over
        it; without that room it is docked, a tab beside the other panels of its side."""
        assert spec.floating_size is not None
        width, height = spec.floating_size
        win = cast(QWidget, self.window)
        screen = win.screen()
        if screen is not None:
            free, frame = screen.availableGeometry(), win.frameGeometry()
            right, left = free.right() - frame.right(), frame.left() - free.left()
            room = max(right, left)
            if room >= BESIDE_MIN:
                w = min(width, room - FRAME)  # the floating dock's frame is a little bigger
                x = frame.right() + 1 if right >= left else frame.left() - w - FRAME
                dock.setFloating(True)
                dock.resize(w, min(height, free.bottom() - frame.top() - FRAME))
                dock.move(x, frame.top())  # of its frame
                return
        side = [
            d
            for d in self.docks.values()
            if d is not dock and not d.isFloating() and self.window.dockWidgetArea(d) == spec.area
        ]
        if side:
            self.window.tabifyDockWidget(side[-1], dock)
        if spec.area == Qt.DockWidgetArea.BottomDockWidgetArea:  # the text keeps most of the height
            share = bottom_height(win.height())
            QTimer.singleShot(0, lambda: self._size_bottom(dock, share, tabbed=bool(side)))

    def _size_bottom(self, dock: QDockWidget, share: int, *, tabbed: bool) -> None:
        """Give a big panel docked below the text ``share`` of the window's height: the panel
        itself, not with the tab bar of the docks it is tabbed with (which took a tab's height
        from it: three rows of the languages summary in a 700 px window). A tabbed panel only
        grows to it, from the height the user may have given the others."""
        if not tabbed:
            self.window.resizeDocks([dock], [share], Qt.Orientation.Vertical)
        elif dock.height() < share:  # the size asked is the area's, its tab bar in it
            bar = self._bar_of(dock)
            tab_bar = bar.height() if bar is not None else 0
            self.window.resizeDocks([dock], [share + tab_bar], Qt.Orientation.Vertical)
