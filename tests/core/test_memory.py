"""The collector is left as the caller had it by library calls; only a program that owns its
process (the app, the CLI) lets big objects be frozen."""

import gc

import pytest

from bpeinspect.core import allow_gc_freeze, load_tokenizer, train_tokenizer
from bpeinspect.core.memory import _freeze_allowed, quiet_gc, thaw


@pytest.fixture
def library_use():
    """Freezing off, as in a program that only imports the library; restored afterwards."""
    before = _freeze_allowed[0]
    allow_gc_freeze(False)
    yield
    allow_gc_freeze(before)


@pytest.fixture
def program_use():
    """Freezing on, as the app and the CLI turn it on; restored afterwards."""
    before = _freeze_allowed[0]
    allow_gc_freeze()
    yield
    allow_gc_freeze(before)


TEXT = "The quick brown fox jumps over the lazy dog, 42 times. Grüße! " * 2000


def test_load_encode_and_train_leave_the_collector_as_found(library_use):
    mine = [object()]  # objects of the caller's, frozen by the caller
    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        tok = load_tokenizer("cl100k_base")
        ids = tok.encode(TEXT)
        assert tok.decode(ids) == TEXT
        tok.encode_with_offsets(TEXT)
        train_tokenizer(TEXT, 300, pattern="gpt2")
        assert gc.isenabled()
        # nothing newly frozen and the caller's objects not thawed (frozen objects that
        # refcounting freed meanwhile leave the count)
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
    del mine


def test_a_collector_turned_off_by_the_caller_stays_off(library_use):
    gc.disable()
    try:
        load_tokenizer("cl100k_base").encode(TEXT)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_program_that_allows_freezing_freezes_what_quiet_gc_built(library_use):
    thaw()
    allow_gc_freeze()
    with quiet_gc():
        table = [(i, str(i)) for i in range(1000)]
    try:
        assert gc.get_freeze_count() >= len(table)
        assert gc.isenabled()
    finally:
        thaw()


def test_loading_does_not_freeze_objects(program_use):
    before = gc.get_freeze_count()
    with quiet_gc(freeze=False):
        junk = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == before and gc.isenabled()
    with quiet_gc():
        with quiet_gc(freeze=False):
            more = [[i] for i in range(1000)]
    assert gc.get_freeze_count() > before  # the outer caller asked for it
    del junk, more
    thaw()


def test_a_quiet_gc_after_a_freeze_does_not_walk_the_frozen_objects(program_use, monkeypatch):
    # gc.get_freeze_count() walks every frozen object holding the interpreter (30 ms per
    # million); counts and long encodes enter quiet_gc(freeze=False) over and over
    with quiet_gc():
        kept = [[i] for i in range(1000)]

    def walk():
        raise AssertionError("quiet_gc asked the collector for its frozen objects")

    monkeypatch.setattr(gc, "get_freeze_count", walk)
    with quiet_gc(freeze=False):
        junk = [[i] for i in range(1000)]
    assert gc.isenabled()
    monkeypatch.undo()
    assert gc.get_freeze_count() >= len(kept)  # what was frozen stays frozen
    del kept, junk
    thaw()


def test_objects_made_while_loading_go_to_the_oldest_generation(program_use):
    # no collection of everything the load made at the first allocation after it
    thaw()  # whatever an earlier test froze
    with quiet_gc(freeze=False):
        junk = [[i] for i in range(50_000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.get_count()[0] < 1000  # not the 50,000 allocations made while it was held off
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(junk) in oldest and id(junk[-1]) in oldest  # still the collector's, not frozen
    del junk
