"""Views of a model with word marks (CLIP-style ``</w>``): a token's mark is shown beside its
text (``hello⌋``), never as the characters of the mark."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from bpeinspect.core.io.formats.clip import from_text
from bpeinspect.gui.overlay.glyphs import token_shown
from bpeinspect.gui.panels.merge_tree import COL_MERGE, COL_TOKEN, MergeTreeModel
from bpeinspect.gui.panels.token_list import token_text

MERGES = ["#version: 0.2", "h e", "l l", "ll o</w>", "he llo</w>"]


def clip_mini():
    return from_text("\n".join(MERGES), "bpe_simple_vocab_mini.txt")


def test_token_lists_show_the_word_end_beside_the_text():
    tok = clip_mini()
    (hello,) = tok.encode("hello")
    assert token_text(tok, hello) == token_shown(tok, hello) == "hello⌋"
    he = tok.encode("he")  # h, e⌋: "he" is made only inside a word
    assert [token_text(tok, i) for i in he] == ["h", "e⌋"]


def test_merge_trees_show_marks_on_every_node(qtbot):
    tok = clip_mini()
    (hello,) = tok.encode("hello")
    model = MergeTreeModel("down")
    model.set_tokenizer(tok)
    model.set_roots([hello])
    root = model.index(0, COL_TOKEN, QModelIndex())
    assert model.data(root, Qt.ItemDataRole.DisplayRole) == "hello⌋"
    assert model.data(model.index(0, COL_MERGE, QModelIndex()), Qt.ItemDataRole.DisplayRole) == "he + llo⌋"
    while model.canFetchMore(root):
        model.fetchMore(root)
    kids = [model.data(model.index(r, COL_TOKEN, root), Qt.ItemDataRole.DisplayRole) for r in range(model.rowCount(root))]
    assert kids == ["he", "llo⌋"]
    assert "ends a word" in model.data(root, Qt.ItemDataRole.ToolTipRole)
