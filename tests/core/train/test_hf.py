"""tie_break="hf" against Hugging Face ``tokenizers``' BpeTrainer, run here side by side."""

from __future__ import annotations

import json
import random

import pytest

from bpeinspect.core import train_tokenizer
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


def hf_train(texts: list[str], vocab_size: int, pattern: str, special_tokens: list[str] | None = None):
    """Train with ``tokenizers``: the split regex, then byte-level, the byte-level alphabet."""
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
    model = json.loads(tok.to_str())["model"]
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
    assert tok.special_tokens == {"<|endoftext|>": 698, "<|pad|>": 699}


@pytest.mark.parametrize("seed", range(6))
def test_hf_runs_until_no_pair_is_left(seed: int) -> None:
    # A tiny corpus cannot fill the vocabulary: both stop when every pre-token is one token.
    texts = _random_unicode(seed, n=8)
    expected, _ = hf_train(texts, 5000, PRESETS["gpt4"].pattern)
    tok, got = ours(texts, 5000, "gpt4")
    assert got == expected
    assert tok.training.settings["finished"] is True
