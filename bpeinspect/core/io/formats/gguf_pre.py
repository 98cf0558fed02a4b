"""Split rules for llama.cpp's BPE pre-tokenizer names (``tokenizer.ggml.pre`` in GGUF files).

Every name llama.cpp knows (``llama_vocab::impl::load`` in its ``src/llama-vocab.cpp``) maps to
the split llama.cpp performs: a sequence of isolated regex splits (llama.cpp's ``regex_exprs``,
applied one after another), plus whether whole pre-tokens that are tokens skip the merges
(``ignore_merges``). The rules run as llama.cpp runs them (``unicode="llama"``, see
:mod:`bpeinspect.core.split.llama_unicode`): with its own Unicode tables and its category
rewriting, under which ``\\p{Lu}`` means any letter. So where llama.cpp rewrote a model's regex
for its engine (o200k's and Tekken's cased letters as lookaheads), its rewritten form is used
here: llama.cpp, not the model's Hugging Face tokenizer, is the reference for a GGUF file. The
few splits llama.cpp runs as custom code (Kimi-K2, AFMoE's digits) are written here as the
regexes that code implements, run by the ``regex`` module.

A file without ``tokenizer.ggml.pre`` gets llama.cpp's ``default`` rule; a name llama.cpp does
not know is refused (llama.cpp refuses it too), unless the caller chooses a split rule.

>>> rule_for_pre("qwen2")[0].pieces("abc 12")
['abc', ' ', '1', '2']
>>> rule_for_pre(None)[0].name
'default'
"""

from __future__ import annotations

from bpeinspect.core.errors import UnknownPreTokenizerError, VocabularyError
from bpeinspect.core.split.patterns import LLAMA3_PATTERN, O200K_PATTERN
from bpeinspect.core.split.rules import PRESETS, Split, SplitRule

GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN35 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
JAIS2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
    r"""|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)"""
    r"""|\s{1,2}(?!\S)|\s{1}"""
)
BLOOM = r""" ?[^(\s|.,!?…。，、।۔،)]+"""
CJK = r"""[一-龥ࠀ-一가-퟿]+"""
DEEPSEEK_LATIN = r"""\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"""
DEEPSEEK3_WORDS = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
SPARK_WORDS = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+"""
)
# o200k's and Tekken's cased-letter classes as llama.cpp spells them: \p{Lu} means any letter there
_CONTRACTIONS = r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"""
_UPPER, _LOWER = r"""((?=[\p{L}])([^a-z]))""", r"""((?=[\p{L}])([^A-Z]))"""
O200K_LLAMA = (
    rf"""[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+{_CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*{_CONTRACTIONS}"""
    r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
GRANITE_EMBED = O200K_LLAMA.replace(r"(?=[\p{L}])", r"(?=[\p{L}\p{M}])")
TEKKEN_LLAMA = (
    rf"""[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+|[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*"""
    r"""|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
HAN_KANA = r"""[一-龥぀-ゟ゠-ヿ]+"""
# Youtu's second split is o200k's with single digits; granite-embed-multi-97m's is o200k's
YOUTU = O200K_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")
# Kimi-K2's tiktoken pattern (llama.cpp runs it as custom code); ``&&`` is set intersection (V1)
KIMI_K2 = (
    r"""(?V1)[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*"""
    r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?"""
    r"""[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# AFMoE's digits (custom code in llama.cpp): groups of three from the right, the rest first
DIGITS_BY_THREE = r"""\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"""
AFMOE_ASIAN = r"""[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+"""
CHAMELEON = (
    r"""<sentinel:[0-9]+>""",
    r"""(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z""",
    r"""([\t\n]|    |  )""",
    r"""\p{N}""",
    r"""[\p{P}!-/:-@\[-`{-~]""",
    GPT2_SPLIT,
)

# name -> (regexes split one after another, ignore_merges)
_TABLE: dict[str, tuple[tuple[str, ...], bool]] = {}
# names llama.cpp knows whose tokens are not byte-level (raw UTF-8 with <0xXX> byte tokens)
NOT_BYTE_LEVEL = {"gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"}


def _add(names: str, regexes: tuple[str, ...], ignore_merges: bool = False) -> None:
    for n in names.split():
        _TABLE[n] = (regexes, ignore_merges)


_add("default", (r"[\p{P}\$\+<=>\^~\|]+", GPT2_SPLIT, r"\p{N}+", r"[0-9][0-9][0-9]"))
_add("llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano", (LLAMA3_PATTERN,), True)
_add("dbrx smaug-bpe chatglm-bpe", (LLAMA3_PATTERN,))
_add("glm4 glm5", (LLAMA3_PATTERN,), True)
_add("jais-2", (JAIS2,))
_add("minicpm5", (r"\p{N}{1,3}", QWEN2.replace(r"|\p{N}|", r"|\p{N}+|")), True)
_add("deepseek-llm", ("[\r\n]", DEEPSEEK_LATIN, r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$", CJK, r"\p{N}+"))
_add("deepseek-coder", ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK, r"\p{N}"))
_add("deepseek-v3 hunyuan-dense hy_v4 joyai-llm", (r"\p{N}{1,3}", HAN_KANA, DEEPSEEK3_WORDS))
_add("spark2_5", (r"\p{N}{1,3}", HAN_KANA, SPARK_WORDS, r"\p{N}"))
_add(
    "youtu",
    (r"""[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+""", YOUTU),
    True,
)
_add("falcon", (r"[\p{P}\$\+<=>\^~\|`]+", GPT2_SPLIT, r"[0-9][0-9][0-9]"))
_add("starcoder refact command-r smollm codeshell exaone minerva-7b mellum2", (r"\p{N}", GPT2_SPLIT))
_add(
    "gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert jina-v1-en jina-v2-code "
    "roberta-bpe mpt olmo jais exaone4 trillion granite-docling",
    ("gpt2",),
)
_add("qwen2 deepseek-r1-qwen kormo f2llmv2 megrez stablelm2 hunyuan solar-open grok-2", (QWEN2,))
_add("qwen35", (QWEN35,))
_add("poro-chat bloom gpt3-finnish", (BLOOM,))
_add("viking", (BLOOM, r"\p{N}"))
_add("tekken", (TEKKEN_LLAMA,), True)
_add("chameleon", CHAMELEON)
_add(
    "exaone-moe",
    (
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?"""
        r"""|\s*[\r\n]|\s+(?!\S)|\s+""",
    ),
)
_add("gpt-4o llama4 kanana2 talkie minimax-m2", (O200K_LLAMA,))
_add("granite-embed-multi-97m", (GRANITE_EMBED,), True)
_add("tiny_aya cohere2moe", (r"\d{1,3}(?=(?:\d{3})*\b)", O200K_PATTERN))
_add("superbpe", (r"\p{N}+", r"(?=(\d{3})+(?!\d))"))
_add(
    "bailingmoe bailingmoe2 llada-moe",
    (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+""",),
)
_add(
    "seed-coder",
    (
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+""",
    ),
)
_add("ufakzeka", (r"""[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",))
_add("kimi-k2", (KIMI_K2,))
_add("afmoe", (DIGITS_BY_THREE, AFMOE_ASIAN, DEEPSEEK3_WORDS))
_add("laguna", (r"[^\n]+|[\n]+", QWEN2))

KNOWN_PRE_NAMES: tuple[str, ...] = tuple(sorted(_TABLE))
CUSTOM_CODE = {"kimi-k2", "afmoe"}


# Token texts llama.cpp makes control tokens whatever type the file gives them (end of turn or
# generation, fill-in-the-middle: ``llama_vocab::impl::load``), so special-token parsing alone
# cuts them out of the text
CONTROL_LOOKING = frozenset(
    (
        "</s> <EOT> <MID> <PAD> <PRE> <REPO> <SUF> <end_of_turn> <end_of_utterance> <eos> <fim-middle> <fim-pad> "
        "<fim-prefix> <fim-repo> <fim-suffix> <fim_middle> <fim_pad> <fim_prefix> <fim_suffix> <reponame> <turn|> "
        "<|calls|> <|call|> <|code_middle|> <|code_prefix|> <|code_suffix|> <|end_of_text|> <|endoftext|> <|end|> "
        "<|eom_id|> <|eot_id|> <|file_sep|> <|fim_middle|> <|fim_pad|> <|fim_prefix|> <|fim_repo|> <|fim_suffix|> "
        "<|flush|> <|im_end|> <|middle|> <|prefix|> <|repo_name|> <|return|> <|suffix|> <|tool_response> "
        "<｜end▁of▁sentence｜> <｜fim▁begin｜> <｜fim▁end｜> <｜fim▁hole｜> [EOS] [EOT] [PAD] [e~[ _<EOT> ▁<MID> ▁<PRE> ▁<SUF>"
    ).split()
)


def promote_control_looking(texts: list[str], specials: dict[str, int], added: dict[str, int]) -> None:
    """Class the tokens as llama.cpp does whatever their type in the file: those in
    :data:`CONTROL_LOOKING` are control (special) tokens, each under its last id, as
    llama.cpp's text-to-id map holds it; gpt-oss's channel tokens and, with o200k_harmony's
    or Solar Open's ends, ``<|end|>`` are matched always (added); and ``</s>`` stays an
    ordinary token beside Gemma 4's or PLaMo's own end tokens."""
    last = {t: i for i, t in enumerate(texts) if t in CONTROL_LOOKING}
    if "</s>" in last and ("<|tool_response>" in last or "<|plamo:eos|>" in specials):
        del last["</s>"]
    for text, i in last.items():
        if text not in specials:
            added.pop(text, None)
            specials[text] = i
    always = ["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"]
    if "<|end|>" in last and ({"<|return|>", "<|call|>"} <= last.keys() or {"<|calls|>", "<|flush|>"} <= last.keys()):
        always.append("<|end|>")
    for text in always:
        if text in specials:
            added[text] = specials.pop(text)


def rstrip_tokens(model_name: str, specials: dict[str, int], added: dict[str, int]) -> set[str]:
    """The special and added tokens that take the whitespace after them in llama.cpp: those of a
    model named Phi-3 (by ``general.name``), except ``<unk>``, ``<s>`` and ``<|endoftext|>``."""
    name = model_name.lower()
    if "phi-3" not in name and "phi3" not in name:
        return set()
    return (set(specials) | set(added) | ({"</s>"} & set(specials))) - {"<unk>", "<s>", "<|endoftext|>"}


def rule_for_pre(name: str | None, source: str = "") -> tuple[SplitRule, bool]:
    """``(split rule, ignore_merges)`` for a ``tokenizer.ggml.pre`` name.

    No name (``None`` or empty) is llama.cpp's ``default``; an unknown one raises
    :class:`UnknownPreTokenizerError`, naming it and how to choose a split rule.
    """
    where = f"{source}: " if source else ""
    key = name or "default"
    if key in NOT_BYTE_LEVEL:
        raise VocabularyError(
            f"{where}the pre-tokenizer {key!r} works on raw UTF-8 tokens (SentencePiece-style BPE), "
            "not on byte-level ones; this file is not byte-level BPE"
        )
    entry = _TABLE.get(key)
    if entry is None:
        raise UnknownPreTokenizerError(
            f"{where}unknown pre-tokenizer {name!r} (tokenizer.ggml.pre): bpeinspect does not know its split rule. "
            "Choose one to load the file anyway: bpeinspect-cli --pattern NAME|REGEX (a preset such as "
            f"{', '.join(sorted(PRESETS))}, or the model's own regex), or load_path(path, pattern=...)"
        )
    regexes, ignore_merges = entry
    if regexes == ("gpt2",):
        regexes = (GPT2_SPLIT,)
    # llama.cpp runs Kimi-K2's and AFMoE's splits as custom code, written here as regexes of the regex module
    return SplitRule(
        tuple(Split(r) for r in regexes), name=key, unicode="" if key in CUSTOM_CODE else "llama"
    ), ignore_merges
