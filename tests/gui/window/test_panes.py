"""The window's views on a SentencePiece-style tokenizer and a normalizing one."""

from __future__ import annotations

import io

import pytest
from PySide6.QtGui import QTextDocument

from bpeinspect.core.io.formats import load_path
from bpeinspect.gui.panels.merge_tree import COL_MERGE, TOKEN_ID_ROLE, MergeTreeModel
from bpeinspect.gui.window.panes import TokenizerPane
from tests.core.corpus import PROSE
from tests.paths import SHARED

spm = pytest.importorskip("sentencepiece")


@pytest.fixture(scope="module")
def sp_tok(tmp_path_factory):
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(PROSE * 3), model_writer=buf, vocab_size=900,
                                   model_type="bpe", byte_fallback=True, character_coverage=0.98, minloglevel=2,
                                   normalization_rule_name="identity")
    path = tmp_path_factory.mktemp("sp") / "tokenizer.model"
    path.write_bytes(buf.getvalue())
    return load_path(path)


def test_pane_names_the_normalizer(qtbot, sp_tok):
    doc = QTextDocument("hello")
    pane = TokenizerPane(sp_tok, doc)
    qtbot.addWidget(pane)
    assert pane.badge is not None and pane.badge.text() == "SentencePiece"
    assert "scores" in pane.badge.toolTip()
    nfc = load_path(SHARED / "vocabs" / "repros" / "nfc.tokenizer.json")
    pane2 = TokenizerPane(nfc, doc)
    qtbot.addWidget(pane2)
    assert pane2.badge.text() == "NFC"


def test_merge_tree_leaves_are_characters_and_byte_fallback(sp_tok):
    model = MergeTreeModel("down")
    model.set_tokenizer(sp_tok)
    tid = sp_tok.encode_ordinary("the")[0]
    byte = sp_tok.encode_ordinary("🎉")[-1]
    model.set_roots([tid, byte])
    root = model.index(0, 0)
    while model.hasChildren(root):
        model.fetchMore(root)
        root = model.index(0, 0, root)
    assert root.siblingAtColumn(COL_MERGE).data() == "character"
    assert model.index(1, 0).data(TOKEN_ID_ROLE) == byte
    assert model.index(1, COL_MERGE).data() == "byte fallback"
