"""tie_break="hf" against Hugging Face ``tokenizers``' BpeTrainer, run here side by side."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bpeinspect.core import TrainingRun, train_tokenizer
from bpeinspect.core.io.formats import huggingface
from bpeinspect.core.split.rules import PRESETS
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples, taylorswift

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, models, pre_tokenizers, trainers  # noqa: E402


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, character -> byte."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in printable]
    return {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}


BYTE_OF = _byte_decoder()


def hf_json(texts: list[str], vocab_size: int, pattern: str, special_tokens: list[str] | None = None) -> dict:
    """Train with ``tokenizers`` (the split regex, then byte-level, the byte-level alphabet);
    the tokenizer.json it writes, parsed."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=special_tokens or [],
    )
    tok.train_from_iterator(texts, trainer)
    return json.loads(tok.to_str())


def hf_train(texts: list[str], vocab_size: int, pattern: str, special_tokens: list[str] | None = None):
    """Hugging Face's merges (as bytes) and vocabulary."""
    model = hf_json(texts, vocab_size, pattern, special_tokens)["model"]
    merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
    as_bytes = [(bytes(BYTE_OF[c] for c in a), bytes(BYTE_OF[c] for c in b)) for a, b in merges]
    return as_bytes, model["vocab"]


def ours(texts: list[str], vocab_size: int, pattern: str, special_tokens: list[str] | None = None):
    tok = train_tokenizer(texts, vocab_size, pattern=pattern, tie_break="hf", special_tokens=special_tokens)
    return tok, [(tok.token_bytes(a), tok.token_bytes(b)) for a, b in tok.merges]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _random_unicode(seed: int, n: int = 300) -> list[str]:
    rnd = random.Random(seed)
    pools = ["abc ", "ab\n", "Ωλφα ", "данные ", "日本語", "🎉👍 ", "0123 ", "'s 'll ", "  \t", "éè"]
    docs = []
    for _ in range(n):
        pool = "".join(rnd.sample(pools, 3))
        docs.append("".join(rnd.choice(pool) for _ in range(rnd.randint(0, 60))))
    return docs


CORPORA = {
    "prose+adversarial": lambda: PROSE + ADVERSARIAL,
    "taylorswift-lines": lambda: _lines(taylorswift()),
    "taylorswift-whole": lambda: [taylorswift()],
    "random-unicode": lambda: _random_unicode(1),
}


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("vocab_size", [300, 1200])
@pytest.mark.parametrize("pattern", ["gpt4", "gpt2"])
def test_merges_equal_hf_tokenizers(corpus: str, vocab_size: int, pattern: str) -> None:
    texts = CORPORA[corpus]()
    expected, _ = hf_train(texts, vocab_size, PRESETS[pattern].pattern)
    tok, got = ours(texts, vocab_size, pattern)
    assert got == expected
    assert len(tok) == vocab_size or len(got) < vocab_size - 256  # ran out of pairs


def test_merges_equal_hf_tokenizers_on_code_with_a_large_vocabulary() -> None:
    texts = code_samples(300_000)
    expected, _ = hf_train(texts, 6000, PRESETS["gpt4"].pattern)
    tok, got = ours(texts, 6000, "gpt4")
    assert got == expected
    assert len(tok) == 6000


def test_a_custom_pattern_and_special_tokens_match_hf() -> None:
    pattern = r" ?\p{L}+| ?\p{N}+|\s+|[^\s\p{L}\p{N}]+"
    specials = ["<|endoftext|>", "<|pad|>"]
    texts = PROSE + _lines(taylorswift())[:400]
    expected, vocab = hf_train(texts, 700, pattern, specials)
    tok, got = ours(texts, 700, pattern, specials)
    assert got == expected
    assert len(tok) == len(vocab) == 700
    assert tok.special_tokens == {"<|endoftext|>": 0, "<|pad|>": 1}  # Hugging Face's ids
    assert _saved(tok)["model"]["vocab"] == vocab


@pytest.mark.parametrize("seed", range(6))
def test_hf_runs_until_no_pair_is_left(seed: int) -> None:
    # A tiny corpus cannot fill the vocabulary: both stop when every pre-token is one token.
    texts = _random_unicode(seed, n=8)
    expected, _ = hf_train(texts, 5000, PRESETS["gpt4"].pattern)
    tok, got = ours(texts, 5000, "gpt4")
    assert got == expected
    assert tok.training.settings["finished"] is True


def _saved(tok) -> dict:
    """``tok`` as bpeinspect writes it to a tokenizer.json, parsed."""
    return json.loads(huggingface.dumps(tok))


# -- Hugging Face's ids for special tokens, and the edge cases minbpe's references cover -------

EXACTNESS = json.loads((Path(__file__).parent / "reference" / "minbpe-exactness.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("texts", "vocab_size", "specials"),
    [
        (["ab ab xy"], 259, ["ab"]),  # a merge spells a special: it takes the special's id, one more merge
        (["he her hero the"], 262, ["he"]),  # ... and the low id changes later tie-breaks
        (["aab aab ba"], 262, ["a"]),  # a special that is a byte: the byte takes its id
        (PROSE, 700, ["the", "<|endoftext|>", " ", "e", "in"]),
        (_lines(taylorswift())[:300], 900, ["Swift", "<|pad|>", "s", "ing", "Taylor Swift"]),
    ],
)
def test_special_tokens_take_hugging_face_ids(texts, vocab_size, specials) -> None:
    ref = hf_json(texts, vocab_size, PRESETS["gpt4"].pattern, specials)
    tok = train_tokenizer(texts, vocab_size, pattern="gpt4", tie_break="hf", special_tokens=specials)
    saved = _saved(tok)
    assert saved["model"]["merges"] == [m.split(" ") if isinstance(m, str) else m for m in ref["model"]["merges"]]
    assert saved["model"]["vocab"] == ref["model"]["vocab"]
    assert [(t["id"], t["content"]) for t in saved["added_tokens"]] == [
        (t["id"], t["content"]) for t in ref["added_tokens"]
    ]
    assert tok.special_tokens == {s: i for i, s in enumerate(specials)}
    # the file loads back (here and in Hugging Face) to the same tokenizer
    back = huggingface.load(Path("tokenizer.json"), data=huggingface.dumps(tok))
    assert back.merges == tok.merges and back.mergeable_ranks == tok.mergeable_ranks
    theirs = tokenizers.Tokenizer.from_str(json.dumps(saved))
    for text in [*texts[:20], " ".join(specials) + " hello there"]:
        assert tok.encode(text, allowed_special="all") == theirs.encode(text).ids


def test_a_merge_that_spells_a_special_adds_no_token() -> None:
    assert len(train_tokenizer("ab ab xy", 259, tie_break="hf", special_tokens=["ab"]).merges) == 3
    ours_ = train_tokenizer("he her hero the", 262, tie_break="hf", special_tokens=["he"])
    theirs, _ = hf_train(["he her hero the"], 262, PRESETS["gpt4"].pattern, ["he"])
    assert [(ours_.token_bytes(a), ours_.token_bytes(b)) for a, b in ours_.merges] == theirs


def test_a_special_hugging_face_would_confuse_with_bytes_is_refused() -> None:
    # "é" is also how the byte-level alphabet writes the byte 0xe9: Hugging Face would give both one id
    with pytest.raises(ValueError, match="one id"):
        TrainingRun("café", 300, tie_break="hf", special_tokens=["é"])
    TrainingRun("café", 300, tie_break="first-seen", special_tokens=["é"])


@pytest.mark.parametrize("case", [c for c in EXACTNESS["cases"] if c["pattern"]], ids=lambda c: c["name"])
def test_edge_cases_match_hf(case: dict) -> None:
    # gaps between matches stay pieces (an isolated Split), capture groups do not matter, and the
    # built-in patterns see characters new in Unicode 16 and 17 as Hugging Face does (unassigned)
    expected, _ = hf_train([case["text"]], case["vocab_size"] + 20, case["pattern"])
    tok, got = ours([case["text"]], case["vocab_size"] + 20, case["pattern"])
    assert got == expected


def test_gaps_and_new_characters_are_pieces_as_in_hugging_face() -> None:
    tok, got = ours(["ab    "], 257, r"\p{L}+")
    assert got == [(b" ", b" ")]
    tok, got = ours(["a\u058bb"], 257, "gpt4")
    assert got == [(b"\xd6", b"\x8b")]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_new_characters_of_unicode_17_under_every_preset(name: str) -> None:
    rnd = random.Random(17)
    new = ["\ua7ce", "\ua7cf", "\u058b", "\u0295", "\u05c8", "\U00011de0", "\U000323b0", "\u088f", "\u1acf"]
    docs = ["".join(rnd.choice(["a", "B", " ", "\n", "1", "'s", *new]) for _ in range(80)) for _ in range(60)]
    for pattern in (name, PRESETS[name].pattern):  # a preset's name, or its pattern as a string
        expected, _ = hf_train(docs, 600, PRESETS[name].pattern)
        _, got = ours(docs, 600, pattern)
        assert got == expected


@pytest.mark.parametrize(
    "pattern", [r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+", r"[\p{L}\p{M}]+|\p{N}{1,3}| ?[\p{P}\p{S}]+|\s+"]
)
def test_new_characters_of_unicode_17_under_a_custom_pattern(pattern: str) -> None:
    # a custom pattern sees Unicode as Hugging Face's engine does too (the regex module knows 17)
    rnd = random.Random(18)
    new = ["\ua7ce", "\u058b", "\u0295", "\U00011de0", "\U000323b0", "\u2e60", "\U0001fa8a", "\u20c1"]
    docs = ["".join(rnd.choice(["a", "B", " ", "\n", "1", "!", "é", *new]) for _ in range(80)) for _ in range(60)]
    expected, _ = hf_train(docs, 600, pattern)
    tok, got = ours(docs, 600, pattern)
    assert got == expected
    assert tok.split_rule.unicode == "hf"
    theirs = tokenizers.Tokenizer.from_str(json.dumps(_saved(tok)))
    for doc in docs[:20]:  # and the trained tokenizer encodes as Hugging Face's copy of it
        assert tok.encode(doc) == theirs.encode(doc).ids


def test_running_out_of_pairs_is_reported_hf() -> None:
    texts = ["ab ab", "cd"]
    expected, _ = hf_train(texts, 400, PRESETS["gpt4"].pattern)
    run = TrainingRun(texts, 400, tie_break="hf")
    reports = list(run.reports())
    assert reports[-1].exhausted and run.tokenizer().training.settings["ran_out_of_pairs"] is True
    assert len(run.merges) == len(expected)
