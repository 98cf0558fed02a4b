"""A flow of controls wraps whole groups: a label never leaves its box."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from bpeinspect.gui.panels.languages.flow import FlowLayout


def test_a_narrow_flow_wraps_groups_whole_onto_more_rows(qtbot):
    bar = QWidget()
    qtbot.addWidget(bar)
    flow = FlowLayout(bar)
    pairs = [(QLabel(f"label {i}"), QComboBox()) for i in range(3)]
    groups = [flow.add_group(*pair) for pair in pairs]
    widest = max(g.sizeHint().width() for g in groups)
    bar.resize(widest + 20, flow.heightForWidth(widest + 20))
    bar.show()
    qtbot.waitExposed(bar)
    tops = [g.geometry().top() for g in groups]
    assert len(set(tops)) == 3  # a row each: the bar is too narrow for two
    for group, (label, box) in zip(groups, pairs):
        assert label.parent() is group and box.parent() is group
        assert label.geometry().right() < box.geometry().left()  # side by side within the group
