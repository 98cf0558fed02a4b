"""A tokenizer's parts as data (``core/tables.py``): every kind of part comes back equal, the
tokenizer it makes encodes the same, and data that is damaged, random or names anything
outside the fixed list is refused with :class:`TablesError`, never run."""

from __future__ import annotations

import inspect
import json
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeinspect.core import load_tokenizer, normalize, tables
from bpeinspect.core.sentencepiece import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, SqueezeSpaces
from bpeinspect.core.split.patterns import QWEN2_PATTERN
from bpeinspect.core.split.rules import PRESETS, Split, SplitRule, resolve_rule
from bpeinspect.core.tables import Parts, TablesError
from bpeinspect.core.tokenizer import Tokenizer, TrainingInfo

TEXTS = ["hello world", "  Héllo, wörld!\n\n12345 <|endoftext|> <tool>", "ab ab abab", "", "▁x  y\tz 🙂"]


def _again(parts: Parts) -> Parts:
    return tables.loads(tables.dumps(parts))


def _same_encodings(a, b) -> None:
    for text in TEXTS:
        assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all"), text


def test_every_argument_of_every_factory_has_a_kind():
    for name, (factory, positional) in tables.FACTORIES.items():
        params = [p for p, v in inspect.signature(factory).parameters.items() if v.kind is not v.VAR_KEYWORD]
        assert set(params) - tables.CALL_ONLY <= set(tables.KINDS), name
        assert list(positional) == params[: len(positional)], name


def test_a_byte_level_tokenizer_with_every_part_comes_back_equal():
    base = load_tokenizer("r50k_base")
    norm = normalize.Sequence(
        (
            normalize.Unicode("NFKC", tables="hf"),
            normalize.Replace("\u00a0", " "),
            normalize.Replace(r"\s+", " ", is_regex=True),
            normalize.Strip(left=True, right=False),
            normalize.Lowercase(),
            normalize.StripAccents(),
            normalize.Prepend("x"),
        )
    )
    rule = SplitRule((Split(r"\p{N}", "isolated"), Split(r" ", "merged_with_next", invert=True)), name="mine", unicode="hf")
    args = {
        "ranks": dict(base.ranks),
        "pattern": rule,
        "special_tokens": {"<|endoftext|>": 50256},
        "added_tokens": {"<tool>": 50257, "\u00e9t\u00e9": 50258},
        "added_options": {"<tool>": (True, False, False, True)},
        "merges": base.merges,
        "merge_results": [base.merge_result(a, b) for a, b in base.merges],
        "ignore_merges": True,
        "byte_barriers": True,
        "duplicate_merges": "last",
        "normalizer": norm,
        "name": "every part",
        "source": "a test \ud83d",
        "assumed": {"pattern": "a guess"},
        "inferred": {"special_tokens": "sha256"},
        "training": TrainingInfo({"trainer": "bpeinspect", "nested": {"a": [1, 2.5, None]}}, [5, 4, 3]),
    }
    back = _again(Parts("Tokenizer", args))
    assert back.factory == "Tokenizer" and set(back.args) == set(args)
    for key, value in args.items():
        if key == "training":
            assert (back.args[key].settings, back.args[key].counts) == (value.settings, value.counts)
        else:
            assert back.args[key] == value, key
    made = back.args["merge_results"][0]
    assert back.args["ranks"][base.token_bytes(made)] is made  # one int object for an id, as a parse makes it
    _same_encodings(tables.build(back), tables.build(Parts("Tokenizer", args)))


@pytest.mark.parametrize("name", ["cl100k", "o200k", "r50k", "llama3", "gpt2", "gpt4"])
def test_a_built_in_split_rule_comes_back_as_itself(name):
    back = _again(Parts("Tokenizer", {"ranks": {bytes([b]): b for b in range(256)}, "pattern": PRESETS[name]}))
    assert back.args["pattern"] is PRESETS[name]


def test_a_fast_rule_under_another_name_keeps_its_engine_and_a_made_up_one_is_refused():
    qwen = resolve_rule(QWEN2_PATTERN)
    assert qwen.fast is not None
    renamed = SplitRule(qwen.splits, name="qwen2", fast=qwen.fast)
    back = _again(Parts("Tokenizer", {"pattern": renamed, "ranks": {}}))
    assert back.args["pattern"] == renamed and back.args["pattern"].fast is qwen.fast
    header, blobs = tables._split(tables.dumps(Parts("Tokenizer", {"pattern": SplitRule((Split("a+"),))})))
    header["args"]["pattern"]["fast"] = True
    with pytest.raises(TablesError, match="not built in"):
        tables.loads(_data(header, blobs))


def _sp_args(**more) -> dict:
    pieces = ["<unk>", "<s>", "</s>", "<0x41>", "▁", "a", "b", "▁a", "ab", "▁ab", "<ud>", None]
    kinds = [UNKNOWN, CONTROL, CONTROL, BYTE, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, USER_DEFINED, NORMAL]
    return {"pieces": pieces, "kinds": kinds, "special_tokens": {"<s>": 1, "</s>": 2}, "unk_id": 0, **more}


@pytest.mark.parametrize(
    "args",
    [
        _sp_args(scores=[0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -0.5, -0.25, -0.125, 0.0, -9.0], flavour="sentencepiece",
                 normalizer=normalize.Sequence((SqueezeSpaces(), normalize.Replace(" ", "▁"))), strip_leading_space=True),
        _sp_args(merges=[(4, 5), (5, 6), (7, 6)], merge_results=[7, 8, 9], flavour="huggingface",
                 normalizer=normalize.Replace(" ", "▁"), first_normalizer=normalize.Prepend("▁"),
                 added_tokens={"<ud>": 10}, added_options={"<ud>": (False, True, False, False)},
                 added_normalizer=normalize.Unicode("NFC"), fuse_unk=True, byte_fallback=False, ignore_merges=True),
        _sp_args(merges=[(4, 5), (5, 6)], flavour="llama.cpp", newline_words=True, split_before_space=False,
                 user_defined_in_text=False, piece_ids={"a": 5, "b": 6, "▁": 4, "▁a": 7, "ab": 8}),
    ],
    ids=["scores", "merges", "llama.cpp"],
)
def test_sentencepiece_parts_come_back_equal(args):
    parts = Parts("SentencePieceBPE", args)
    back = _again(parts)
    assert back.args == args
    _same_encodings(tables.build(back), tables.build(parts))


def test_loader_calls_map_to_parts_and_unknown_factories_or_arguments_are_refused():
    merges = [(104, 105), (256, 104)]
    parts = tables.parts_from_call(Tokenizer.from_merges, (merges,), {"pattern": "gpt4", "name": "m"})
    assert parts == Parts("Tokenizer.from_merges", {"merges": merges, "pattern": "gpt4", "name": "m"})
    assert tables.build(_again(parts)).encode("hihih") == Tokenizer.from_merges(merges).encode("hihih")
    for factory, args, kwargs in [(dict, (), {}), (Tokenizer, ({},), {"cleanup": print}), (Tokenizer, ({}, 1), {})]:
        with pytest.raises(TablesError):
            tables.parts_from_call(factory, args, kwargs)
    with pytest.raises(TablesError):
        tables.dumps(Parts("Tokenizer", {"ranks": {}, "normalizer": type("Mine", (normalize.Normalizer,), {})()}))


def test_a_shipped_tokenizer_is_the_same_tokenizer():
    tok = load_tokenizer("cl100k_base")
    back = tables.rebuild(tables.dumps(tables.parts_of(tok)))
    assert back.ranks == tok.ranks and back.special_tokens == tok.special_tokens and back.split_rule is tok.split_rule
    _same_encodings(back, tok)


def test_a_sentencepiece_tokenizer_ships_as_the_parts_it_was_made_from_and_a_changed_copy_does_not():
    from bpeinspect.core.analysis.shipping import Shipped, can_ship
    from bpeinspect.core.sentencepiece import SentencePieceBPE

    made = SentencePieceBPE(**_sp_args(merges=[(4, 5), (5, 6), (7, 6)], flavour="huggingface"))
    assert not can_ship(made)  # made by hand: its parts were not kept
    tok = tables.build(Parts("SentencePieceBPE", _sp_args(merges=[(4, 5), (5, 6), (7, 6)], flavour="huggingface")))
    tok.name = "renamed"
    assert can_ship(tok)
    back = pickle.loads(pickle.dumps(Shipped(tok)))
    assert isinstance(back, Tokenizer) and not back.byte_level and back is not tok and back.name == "renamed"
    _same_encodings(back, tok)
    twin = tok.with_special_tokens({"<extra>": 11})
    assert not can_ship(twin)
    with pytest.raises(TypeError):
        tables.parts_of(twin)


def _data(header: dict, blobs) -> bytes:
    raw = json.dumps(header).encode("ascii")
    return tables.MAGIC + tables._HEAD.pack(tables.VERSION, len(raw)) + raw + b"".join(map(bytes, blobs))


def _small() -> bytes:
    args = _sp_args(merges=[(4, 5), (5, 6), (7, 6)], flavour="huggingface", normalizer=normalize.Replace(" ", "▁"))
    return tables.dumps(Parts("SentencePieceBPE", args))


@pytest.mark.parametrize(
    "change",
    [
        {"factory": "builtins.exec"},
        {"factory": "os.system"},
        {"args": {"normalizer": {"type": "subprocess.Popen"}}},
        {"args": {"normalizer": {"type": "Replace", "pattern": "a", "content": "b", "is_regex": False, "py/object": 1}}},
        {"args": {"flavour": "__import__('os')"}},
        {"args": {"exec": "print(1)"}},
        {"args": {"name": ["not", "a", "string"]}},
        {"args": {"pieces": {"text": 99, "lens": 0}}},
    ],
)
def test_data_naming_anything_outside_the_list_is_refused(change):
    header, blobs = tables._split(_small())
    header = {**header, **{k: v for k, v in change.items() if k != "args"}}
    header["args"] = {**header["args"], **change.get("args", {})}
    with pytest.raises(TablesError):
        tables.rebuild(_data(header, blobs))


def test_a_pickle_is_not_data():
    with pytest.raises(TablesError):
        tables.rebuild(pickle.dumps((Tokenizer, ({},), {})))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_data_is_refused_or_makes_a_tokenizer_never_anything_else(data):
    good = _small()
    kind = data.draw(st.sampled_from(["flip", "cut", "insert", "random", "header"]))
    if kind == "flip":
        at = data.draw(st.lists(st.integers(0, len(good) - 1), min_size=1, max_size=8))
        bad = bytearray(good)
        for k in at:
            bad[k] ^= data.draw(st.integers(1, 255))
        bad = bytes(bad)
    elif kind == "cut":
        bad = good[: data.draw(st.integers(0, len(good) - 1))]
    elif kind == "insert":
        at = data.draw(st.integers(0, len(good)))
        bad = good[:at] + data.draw(st.binary(min_size=1, max_size=64)) + good[at:]
    elif kind == "random":
        bad = tables.MAGIC + data.draw(st.binary(max_size=512))
    else:  # a header with any JSON in an argument's place
        header, blobs = tables._split(good)
        key = data.draw(st.sampled_from(sorted(tables.KINDS)))
        json_values = st.recursive(
            st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=False) | st.text(max_size=8),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
            max_leaves=12,
        )
        header["args"][key] = data.draw(json_values)
        bad = _data(header, blobs)
    try:
        tok = tables.rebuild(bad)
    except TablesError:
        return
    assert isinstance(tok, Tokenizer)
    tok.encode("a ab")


def test_a_text_in_two_tables_comes_back_as_one_object():
    args = _sp_args(merges=[(4, 5)], flavour="llama.cpp", piece_ids={"a": 5, "▁ab": 9, "ab": 8})
    back = _again(Parts("SentencePieceBPE", args)).args
    keys = {k: k for k in back["piece_ids"]}
    assert all(keys[p] is p for p in ("a", "▁ab", "ab") for p in [back["pieces"][back["piece_ids"][p]]])
