"""The action registry: menus by key in a fixed order, checkable groups, entries added later."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow

from bpeinspect.gui.window.actions import MENUS, ActionRegistry, ActionSpec


def test_menus_come_in_their_order_and_entries_by_key(qtbot):
    win = QMainWindow()
    qtbot.addWidget(win)
    actions = ActionRegistry(win)
    calls = []
    actions.add(ActionSpec("view.zoom_in", "view", "Zoom in", "Ctrl++"), lambda: calls.append("zoom"))
    actions.add(ActionSpec("file.quit", "file", "Quit"), lambda: calls.append("quit"))
    actions.menu("view/panels")
    assert [a.text() for a in win.menuBar().actions()] == [MENUS["view"], MENUS["file"]]
    actions["view.zoom_in"].trigger()
    assert calls == ["zoom"] and actions["view.zoom_in"].shortcut().toString() == "Ctrl++"
    assert "file.quit" in actions and "file.open" not in actions
    assert actions.menu("view/panels").title() == "Panels"
    assert actions.menu("view/panels").menuAction() in actions.menu("view").actions()


def test_a_group_is_exclusive_and_set_checked_calls_no_slot(qtbot):
    win = QMainWindow()
    qtbot.addWidget(win)
    actions = ActionRegistry(win)
    picked = []
    for name in ("system", "light", "dark"):
        actions.add(ActionSpec(f"theme.{name}", "view/theme", name, checkable=True, group="theme"),
                    lambda on, n=name: on and picked.append(n))  # fmt: skip
    actions["theme.dark"].trigger()
    assert picked == ["dark"]
    actions.set_checked("theme.light", True)  # following a change made elsewhere
    assert picked == ["dark"]
    assert [n for n in ("system", "light", "dark") if actions[f"theme.{n}"].isChecked()] == ["light"]
