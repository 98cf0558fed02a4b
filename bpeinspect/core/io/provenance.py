"""What a loaded tokenizer's file did not say: short badges for the views, and the details.

>>> from bpeinspect.core import Tokenizer
>>> tok = Tokenizer({bytes([b]): b for b in range(256) if b != 3}, assumed={"pattern": "cl100k's, a default"})
>>> [label for label, _ in badges(tok)]
['default split', '1 byte missing']
"""

from __future__ import annotations

from bpeinspect.core.tokenizer import Tokenizer


def badges(tok: Tokenizer) -> list[tuple[str, str]]:
    """``(label, tooltip)`` pairs: a split rule or special tokens that are only a default
    (``Tokenizer.assumed``), and single bytes the vocabulary has no token for."""
    out: list[tuple[str, str]] = []
    assumed = {k: v for k, v in tok.assumed.items() if v != "chosen by the user"}
    if "pattern" in assumed:
        tip = f"Split rule: {assumed['pattern']}."
        if "special_tokens" in assumed:
            tip += f"\nSpecial tokens: {assumed['special_tokens']}."
        out.append(("default split", tip + "\nEncodings may differ from the model's own tokenizer."))
    elif assumed:
        out.append(("assumed", "\n".join(f"{k.replace('_', ' ')}: {v}" for k, v in assumed.items())))
    missing = tok.missing_bytes
    if missing:
        listed = " ".join(f"{b:02x}" for b in missing)
        n = len(missing)
        out.append(
            (
                f"{n} byte{'s' if n != 1 else ''} missing",
                f"No token for the single byte{'s' if n != 1 else ''} {listed}: characters holding "
                "them are dropped when encoding, as Hugging Face tokenizers and llama.cpp drop them.",
            )
        )
    return out
