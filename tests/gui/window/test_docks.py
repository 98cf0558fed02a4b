"""The Vocabulary dock opens with the ids in view, its columns fit, and the less useful ones can be shown or hidden."""

from __future__ import annotations

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.panels.vocabulary import COL_BYTES, COL_ID, COL_TOKEN, VocabBrowser
from bpeinspect.gui.window.docks import DOCK_WIDTH


def shown_window(qtbot, settings, width: int, height: int):
    """A main window with every panel, shown at ``width`` x ``height``."""
    from bpeinspect.gui.panels.specs import PANELS
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=settings, panels=PANELS)
    qtbot.addWidget(win)
    win.resize(width, height)
    win.show()
    qtbot.waitExposed(win)
    return win


def stop_panels(win) -> None:
    """Stop the jobs of the window and its panels (a count of the languages view's would answer
    a view deleted with the window)."""
    from bpeinspect.gui.concurrency import Worker

    win.jobs.cancel_all()
    for view in win.panels.views.values():
        jobs = getattr(view, "jobs", None)
        if jobs is not None:
            jobs.cancel_all()
    Worker.shutdown()


def test_fits_a_dock_and_stays_scrolled_left(qtbot):
    w = VocabBrowser()
    qtbot.addWidget(w)
    w.resize(DOCK_WIDTH, 700)
    w.show()
    tok = load_tokenizer("o200k_base")
    w.set_tokenizer(tok)
    w.show_token(tok.encode(" tokenization")[0])
    qtbot.waitUntil(lambda: not w.busy, timeout=20000)
    qtbot.wait(20)
    table = w.table
    shown = [c for c in range(w.model.columnCount()) if not table.isColumnHidden(c)]
    assert sum(table.columnWidth(c) for c in shown[:-1]) < table.viewport().width()  # the last one stretches
    assert table.horizontalScrollBar().value() == 0
    assert table.columnViewportPosition(COL_ID) >= 0 and not table.isColumnHidden(COL_ID)
    assert not table.isColumnHidden(COL_TOKEN) and table.isColumnHidden(COL_BYTES)
    w.columns_menu.actions()[COL_BYTES].trigger()  # the user asks for the bytes
    assert not table.isColumnHidden(COL_BYTES)
    assert not w.columns_menu.actions()[COL_ID].isEnabled()


def test_the_docks_open_at_their_width_and_leave_the_text_the_room(qtbot, panel_window):
    """A new window gives the side docks DOCK_WIDTH; the text panes get the rest (they got
    only half of a 1400 px window)."""
    win = panel_window
    qtbot.waitExposed(win)
    dock = win.panels.docks["tokens"]
    qtbot.waitUntil(lambda: abs(dock.width() - DOCK_WIDTH) < 40, timeout=3000)
    assert win.centralWidget().width() > win.width() - DOCK_WIDTH - 60


def test_a_small_window_gives_the_docks_a_third_of_its_width(qtbot, settings):
    from bpeinspect.gui.window.docks import dock_width

    win = shown_window(qtbot, settings, 1024, 700)
    dock = win.panels.docks["tokens"]
    qtbot.waitUntil(lambda: abs(dock.width() - dock_width(1024)) < 40, timeout=3000)
    assert dock.width() < 1024 * 0.4 and win.centralWidget().width() > 1024 * 0.6  # it kept 510 px before


def test_opening_languages_in_a_small_window_keeps_its_width(qtbot, settings):
    """Its controls needed 1073 px on one row: the window grew wider than the screen's 1024."""

    win = shown_window(qtbot, settings, 1024, 700)
    view = win.panels.show("languages")
    qtbot.wait(100)
    stop_panels(win)
    assert view.minimumSizeHint().width() < 1000
    assert win.width() == 1024
    # the controls wrap onto more rows in the dock, and stay on one row in a wide one
    filters = view.filters
    assert filters.height() >= filters.layout().heightForWidth(filters.width()) > 0
    assert filters.layout().heightForWidth(4000) == filters.layout().sizeHint().height()


def test_the_tabs_of_the_side_docks_show_whole_titles_in_a_small_window(qtbot, settings):
    """They read "Tok…" and "Vocabul…" at 1024x700: whole titles now, and the bar scrolls."""
    from PySide6.QtWidgets import QStyle, QTabBar

    win = shown_window(qtbot, settings, 1024, 700)
    win.panels.show("vocab")
    win.panels.show("tokens")
    qtbot.wait(50)
    bars = [b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible() and b.count() > 1]
    assert bars
    for bar in bars:
        padding = bar.style().pixelMetric(QStyle.PixelMetric.PM_TabBarTabHSpace, None, bar)
        for i in range(bar.count()):
            text = bar.tabText(i)
            assert bar.tabRect(i).width() >= bar.fontMetrics().horizontalAdvance(text) + padding, text


def test_the_toolbar_fits_a_1024_window_with_room_for_longer_counts(qtbot, window):
    """Its toggles took 500 px: a longer count or name pushed the count into the "»" menu."""
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    bar = window.toolbar
    toggle = bar.widgetForAction(window.commands["view.layer.whitespace"])
    assert toggle.text() == "Whitespace" and "Visible whitespace" in toggle.toolTip()
    assert window.commands["view.layer.whitespace"].text() == "Visible whitespace"  # the menu's
    assert bar.sizeHint().width() <= 1024 - 150
    assert window.count_badge.isVisible()


def test_training_docked_below_a_tall_window_gets_room_for_its_form_and_plots(qtbot, settings, monkeypatch):
    """At 1920x1200 it got 36% (432 px): its form scrolled and its plots were squeezed."""
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1920, 1200)
    win.panels.show("training")
    dock = win.panels.docks["training"]
    assert not dock.isFloating()
    qtbot.waitUntil(lambda: dock.height() >= 540, timeout=3000)
    assert win.centralWidget().height() >= 480  # the text keeps most of the rest


def test_the_picker_shows_a_trained_tokenizers_whole_name(qtbot, window):
    """It kept the width of the first name it showed: "json and 2 more ·" was all one read."""
    from PySide6.QtWidgets import QStyle, QStyleOptionComboBox

    from bpeinspect.core import load_tokenizer, tables

    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    tok = tables.build(tables.parts_of(load_tokenizer("gpt2")))  # a copy: the built-in keeps its name
    tok.name = "json and 2 more · 300"
    window.registry.add(tok, "trained:json and 2 more · 300", shown=False)
    window.registry.set_current(tok)
    qtbot.wait(20)
    picker = window.toolbar.picker
    assert picker.currentText() == tok.name
    opt = QStyleOptionComboBox()
    picker.initStyleOption(opt)
    field = picker.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField, picker
    )
    assert picker.fontMetrics().horizontalAdvance(tok.name) <= field.width()
    assert window.toolbar.sizeHint().width() <= 1024 - 100 and window.count_badge.isVisible()


def test_every_tab_of_the_side_docks_is_in_sight_in_a_1024x700_window(qtbot, settings):
    """The fifth tab (Compare) had scrolled out of the side docks' tab bar at 1024x700."""
    from PySide6.QtWidgets import QTabBar

    win = shown_window(qtbot, settings, 1024, 700)

    def bars() -> list[QTabBar]:
        return [b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible() and b.count() > 1]

    def out_of_sight() -> list[str]:
        return [bar.tabText(i) for bar in bars() for i in range(bar.count()) if not bar.rect().contains(bar.tabRect(i))]

    def text_keeps_its_share() -> bool:  # the docks were sized (at first they take 410 px)
        return win.centralWidget().width() > 1024 * 0.6

    qtbot.waitUntil(lambda: text_keeps_its_share() and bool(bars()) and not out_of_sight(), timeout=3000)
    assert "Compare" in [bars()[0].tabText(i) for i in range(bars()[0].count())]
    assert win.width() == 1024


def test_the_languages_summary_shows_several_rows_in_a_1024x700_window(qtbot, settings):
    """Docked below the text of a 1024x700 window, the summary showed one row: the filters and
    buttons took three rows of the dock's 250 px."""
    win = shown_window(qtbot, settings, 1024, 700)
    view = win.panels.show("languages")
    qtbot.waitUntil(lambda: view.page("summary") is not None, timeout=60000)
    qtbot.wait(50)
    table = view.page("summary").table
    try:
        assert win.height() == 700 and view.isVisible()
        assert table.viewport().height() >= 4 * table.verticalHeader().defaultSectionSize()
    finally:
        stop_panels(win)


def test_every_panel_open_keeps_a_1024x700_window_at_its_height(qtbot, settings, monkeypatch):
    """With Chat, Dataset, Training, Vocabularies and Languages docked, the dataset's plot and
    tables asked for so much height that the window grew to 717 px, past a 700 px screen."""
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1024, 700)
    for key in ("chat", "dataset", "training", "vocabs", "languages"):
        win.panels.show(key)
        qtbot.wait(20)
    qtbot.wait(100)
    try:
        assert not any(d.isFloating() for d in win.panels.docks.values())
        assert win.height() == 700
    finally:
        stop_panels(win)


def test_a_big_panel_opens_beside_the_window_only_where_it_fits_on_the_screen(qtbot, settings, monkeypatch):
    """Beside a 1920 px window on a 2560 px screen, Languages grew to 808 px once its table's
    count line was filled in, and ran 176 px off the screen's edge."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    from bpeinspect.gui.concurrency import all_idle

    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, 2560, 1440))
    win = shown_window(qtbot, settings, 1920, 1200)
    win.move(0, 0)
    win.open_tokenizer("o200k_base")
    for key in ("languages", "training", "chat", "dataset"):
        win.panels.show(key)
    qtbot.wait(200)
    qtbot.waitUntil(lambda: all_idle() and not win.jobs.is_busy(), timeout=120_000)
    qtbot.wait(200)
    for key in ("languages", "training", "chat", "dataset"):
        frame = win.panels.docks[key].frameGeometry()
        assert win.panels.docks[key].isFloating(), key
        assert QRect(0, 0, 2560, 1440).contains(frame), (key, frame)
        assert not frame.intersects(win.frameGeometry()), (key, frame)


def _side_bars(win):
    """The visible tab bars of the docks tabbed together beside the text."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    sides = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
    bars = []
    for bar in win.findChildren(QTabBar):
        if bar.parent() is win and bar.isVisible() and bar.count() > 1:
            titles = {bar.tabText(i) for i in range(bar.count())}
            if any(win.dockWidgetArea(d) in sides for d in win.panels.docks.values() if d.windowTitle() in titles):
                bars.append(bar)
    return bars


def _tabs_out_of_sight(win) -> list[str]:
    """The titles of the side docks' tabs not wholly in sight, or reached only by the bar's
    scroll arrows."""
    from PySide6.QtWidgets import QToolButton

    out = []
    for bar in _side_bars(win):
        seen = bar.visibleRegion().boundingRect()
        arrows = any(a.isVisible() for a in bar.findChildren(QToolButton))
        out += [bar.tabText(i) for i in range(bar.count()) if arrows or not seen.contains(bar.tabRect(i))]
    return out


def test_with_chat_docked_every_side_tab_stays_in_sight_in_a_1024x700_window(qtbot, settings, monkeypatch):
    """Chat joined the side docks as a sixth tab and the bar scrolled: Tokens and Merge tree
    went out of sight, behind the scroll arrows."""
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1024, 700)
    qtbot.wait(50)
    win.panels.show("chat")
    dock = win.panels.docks["chat"]
    try:
        assert not dock.isFloating()
        assert dock.windowTitle() in [b.tabText(i) for b in _side_bars(win) for i in range(b.count())]
        qtbot.waitUntil(lambda: not _tabs_out_of_sight(win), timeout=3000)
        assert win.width() == 1024 and win.centralWidget().width() >= 1024 * 0.58  # the text keeps its share
    finally:
        stop_panels(win)


def test_a_panel_docked_last_time_comes_to_the_front_when_it_is_opened_again(qtbot, settings, monkeypatch):
    """Chat, docked as a tab beside the Tokens list when the window was last closed, stayed
    behind the Tokens list when it was opened in the next start: Qt puts a dock restored
    from the saved state back in its tab bar only once the window is laid out again, after
    it was raised."""
    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.concurrency import Worker
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    first = shown_window(qtbot, settings, 1024, 700)
    first.panels.show("chat")
    qtbot.waitUntil(lambda: "Chat" in _side_tab_titles(first), timeout=5000)
    stop_panels(first)
    first.close()  # saves the docks' state
    Worker.shutdown()
    win = shown_window(qtbot, settings, 1024, 700)
    qtbot.wait(50)
    try:
        view = win.panels.bring("chat")  # as its menu entry and shortcut do
        qtbot.waitUntil(lambda: "Chat" in _side_tab_titles(win), timeout=5000)
        qtbot.wait(50)
        assert [b.tabText(b.currentIndex()) for b in _side_bars(win)] == ["Chat"]
        assert not win.panels.docks["chat"].visibleRegion().isEmpty()
        assert view.isAncestorOf(QApplication.focusWidget())  # the keys go to it
    finally:
        stop_panels(win)


def _side_tab_titles(win) -> list[str]:
    return [b.tabText(i) for b in _side_bars(win) for i in range(b.count())]


def _whole_rows(table) -> int:
    """How many rows of ``table`` are wholly in its viewport."""
    height = table.viewport().height()
    whole = 0
    for row in range(table.model().rowCount()):
        top = table.rowViewportPosition(row)
        whole += 0 <= top and top + table.rowHeight(row) <= height
    return whole


def every_panel_docked_with_fable_measured(qtbot, settings, monkeypatch):
    """A 1024x700 window with two tokenizers and every panel docked (no screen room beside
    it), its Languages panel showing the fable's measures: ``(window, languages view)``."""
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1024, 700)
    win.open_tokenizer("o200k_base")
    win.open_tokenizer("cl100k_base")
    qtbot.waitUntil(lambda: len(win.registry.tokenizers()) == 2, timeout=30000)
    for key in ("chat", "dataset", "training", "vocabs", "languages"):
        win.panels.show(key)
        qtbot.wait(20)
    view = win.panels.view("languages")
    try:
        with qtbot.waitSignal(view.statsReady, timeout=60000, check_params_cb=lambda s: len(s.tokenizers) == 2):
            view.set_source("fable")
    except BaseException:
        stop_panels(win)
        raise
    return win, view


def test_with_every_panel_docked_the_languages_summary_shows_four_rows_at_1024x700(qtbot, settings, monkeypatch):
    """With Chat, Dataset, Training and Vocabularies docked too, the summary showed three rows:
    the bottom docks' tab bar took its height from the Languages dock."""
    win, view = every_panel_docked_with_fable_measured(qtbot, settings, monkeypatch)  # (a small corpus)
    try:
        qtbot.waitUntil(lambda: view.page("summary") is not None, timeout=10000)
        qtbot.wait(100)
        table = view.page("summary").table
        assert not any(d.isFloating() for d in win.panels.docks.values())
        assert win.height() == 700 and table.isVisible()
        assert table.model().rowCount() >= 4
        assert _whole_rows(table) >= 4
    finally:
        stop_panels(win)


def test_tab_reaches_the_side_tab_bar_and_the_arrows_every_tab_in_sight_with_chat_docked(qtbot, settings, monkeypatch):
    """Keyboard only at 1024x700: Tab comes to the side docks' tab bar, and Left brings each
    dock in front in turn, with every tab of the bar in sight all the way."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QTabBar

    from bpeinspect.gui.overlay.token_view import TokenView
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1024, 700)
    win.activateWindow()
    win.panels.bring("chat")
    qtbot.wait(50)
    try:
        (bar,) = [b for b in _side_bars(win)]
        seen = []
        for _ in range(120):  # Tab round the window from Chat, until it comes to the bar
            focus = QApplication.focusWidget()
            seen.append(focus)
            if focus is bar:
                break
            ctrl = (
                Qt.KeyboardModifier.ControlModifier if isinstance(focus, TokenView) else Qt.KeyboardModifier.NoModifier
            )
            qtbot.keyClick(focus, Qt.Key.Key_Tab, ctrl)
        assert bar in seen, [type(w).__name__ for w in seen]
        fronts = []
        for _ in range(bar.count()):
            fronts.append(bar.tabText(bar.currentIndex()))
            assert not _tabs_out_of_sight(win), fronts[-1]
            qtbot.keyClick(bar, Qt.Key.Key_Left)
            qtbot.wait(10)
        assert sorted(fronts) == sorted(bar.tabText(i) for i in range(bar.count()))
        assert isinstance(QApplication.focusWidget(), QTabBar)
    finally:
        stop_panels(win)


def test_a_window_made_small_shrinks_its_docks_to_a_small_windows_share(qtbot, settings, monkeypatch):
    """From 1920x1200 to 1024x700, the side docks kept 460 px and Languages below the text
    kept 295 px: the text was left two lines a pane."""
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1920, 1200)
    side = win.panels.docks["tokens"]
    qtbot.waitUntil(lambda: side.width() >= docks.DOCK_WIDTH - 10, timeout=3000)
    win.panels.show("chat")
    win.panels.show("languages")
    below = win.panels.docks["languages"]
    qtbot.waitUntil(lambda: below.height() >= docks.BOTTOM_WANTED - 10, timeout=3000)
    win.resize(1024, 700)
    try:
        qtbot.waitUntil(lambda: win.height() == 700 and below.height() <= docks.bottom_height(700), timeout=3000)
        qtbot.wait(50)
        chat = win.panels.docks["chat"]
        assert chat.width() <= 0.4 * 1024 + 1 and win.centralWidget().width() >= 1024 * 0.59
        assert not _tabs_out_of_sight(win)
        assert below.height() >= docks.bottom_height(700) - 2  # no less than a new window's
        assert win.centralWidget().height() >= 700 - docks.bottom_height(700) - 120
    finally:
        stop_panels(win)


def test_a_panel_docked_back_beside_the_text_keeps_every_side_tab_in_sight(qtbot, settings, monkeypatch):
    """Chat opened beside the window, then docked back by the user (its title bar's float
    button): its tab joined the side docks, and the bar scrolled its first tabs out of sight."""
    from PySide6.QtCore import Qt

    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 0)  # room beside the window: it opens floating
    win = shown_window(qtbot, settings, 1024, 700)
    qtbot.wait(50)
    win.panels.show("chat")
    chat = win.panels.docks["chat"]
    try:
        assert chat.isFloating()
        win.tabifyDockWidget(win.panels.docks["compare"], chat)  # where the user drops it
        chat.setFloating(False)
        qtbot.waitUntil(lambda: win.dockWidgetArea(chat) == Qt.DockWidgetArea.RightDockWidgetArea, timeout=3000)
        qtbot.waitUntil(lambda: bool(_side_bars(win)) and not _tabs_out_of_sight(win), timeout=3000)
        assert chat.windowTitle() in [b.tabText(i) for b in _side_bars(win) for i in range(b.count())]
    finally:
        stop_panels(win)


def test_the_languages_plots_keep_a_readable_height_in_a_small_window(qtbot, settings, monkeypatch):
    """Docked below the text of a 1024x700 window with every panel, the rank plot had 43 px
    for its lines, and its legend (68 px) ran past them: one tokenizer of two was named."""
    win, view = every_panel_docked_with_fable_measured(qtbot, settings, monkeypatch)
    try:
        for key in ("rank", "bars"):
            view.show_page(key)
            qtbot.waitUntil(lambda k=key: view.page(k) is not None and not view.page(k).is_drawing(), timeout=20000)
            qtbot.wait(50)
            page = view.page(key)
            assert win.height() == 700 and page.isVisible()
            lines, legend = page.item.vb.sceneBoundingRect(), page.legend.sceneBoundingRect()
            assert len(page.legend.items) == 2
            assert lines.contains(legend), (key, lines, legend)
    finally:
        stop_panels(win)


def test_with_every_panel_docked_the_languages_table_shows_three_rows_at_1024x700(qtbot, settings, monkeypatch):
    """The table's two-line header, search box and count line left it two rows: the count
    sits beside the search box now."""
    win, view = every_panel_docked_with_fable_measured(qtbot, settings, monkeypatch)
    try:
        view.show_page("table")
        qtbot.waitUntil(lambda: view.page("table") is not None, timeout=10000)
        qtbot.wait(100)
        page = view.page("table")
        assert win.height() == 700 and page.table.isVisible()
        assert page.count_label.text() == "27 languages"
        assert _whole_rows(page.table) >= 3
    finally:
        stop_panels(win)


def test_in_a_window_too_narrow_for_whole_titles_the_side_tabs_shorten_and_stay_in_sight(qtbot, settings, monkeypatch):
    """At 800x600 with Chat docked, six whole titles need half the window: the bar scrolled
    Tokens and Merge tree out of sight. Shortened titles keep every tab in sight, whole in
    their tooltips."""
    from bpeinspect.gui.window import docks

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 800, 600)
    qtbot.wait(50)
    win.panels.show("chat")
    try:
        qtbot.waitUntil(lambda: bool(_side_bars(win)) and not _tabs_out_of_sight(win), timeout=3000)
        (bar,) = _side_bars(win)
        assert bar.count() == 6 and win.centralWidget().width() >= 800 * 0.5
        for i in range(bar.count()):
            assert bar.tabToolTip(i) == bar.tabText(i)
    finally:
        stop_panels(win)


def test_a_panel_docked_for_the_first_time_paints_first_and_the_rest_of_the_window_in_later_turns(
    qtbot, settings, monkeypatch
):
    """Docking Chat had Qt paint it, the text and every other dock in one turn: 60-90 ms on the
    GUI thread with a 10 MB text. The new dock paints first, then the text, then each other dock
    on screen, each in a turn of its own."""
    from bpeinspect.gui.turns import pending
    from bpeinspect.gui.window import docks
    from tests.gui.conftest import PaintTurns

    monkeypatch.setattr(docks, "BESIDE_MIN", 10**6)  # no screen room beside the window: docked
    win = shown_window(qtbot, settings, 1400, 860)
    try:
        win.panels.show("languages")
        qtbot.waitUntil(lambda: not win.panels.importing() and not pending(), timeout=10000)
        qtbot.wait(50)
        others = [d for d in win.panels.docks.values() if not d.visibleRegion().isEmpty() and not d.isFloating()]
        assert win.panels.docks["languages"] in others
        text = win.centralWidget()
        paints = PaintTurns([text, *others])
        paints.start()
        win.panels.show("chat")
        chat = win.panels.docks["chat"]
        assert not chat.isFloating()
        paints.watch(chat)
        qtbot.waitUntil(lambda: not pending() and chat in paints.first and text in paints.first, timeout=5000)
        others = [d for d in others if not d.visibleRegion().isEmpty()]  # (Tokens is now behind Chat)
        assert others
        paints.stop()
        assert paints.first[chat] < paints.first[text]  # the new dock first, the text in a later turn
        qtbot.waitUntil(lambda: all(d in paints.first for d in others), timeout=3000)
        turns = [paints.first[w] for w in [chat, text, *others]]
        assert len(set(turns)) == len(turns)  # each in a turn of its own
        assert turns[1] < min(turns[2:])  # the text before the other docks
    finally:
        stop_panels(win)
