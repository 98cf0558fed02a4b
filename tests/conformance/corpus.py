"""The conformance corpus: the core tests' prose and edge cases plus what real vocabularies trip on.

Many scripts, code with indentation in several languages, whitespace runs of every length,
digit runs, long runs of one character or emoji sequence, emoji sequences, text in NFD and with compatibility characters (for normalizers),
control characters (Falcon has no token for some), and the special and added tokens of the
models in the suite written into ordinary text.
"""

from __future__ import annotations

import functools
import unicodedata

from tests.core.corpus import ADVERSARIAL, LONG_RUNS, PROSE, code_samples

CODE = [
    "function add(a, b) {\n  if (a === undefined) {\n    return b;\n  }\n  return a + b;\n}\n",
    '#include <stdio.h>\nint main(void) {\n\tfor (int i = 0; i < 10; ++i) {\n\t\tprintf("%d\\n", i);\n\t}\n}\n',
    "server:\n  port: 8080\n  hosts:\n    - alpha.example.org\n    - beta.example.org\n",
    "SELECT id, name\n  FROM users\n WHERE age >= 18\n   AND name LIKE '%son';\n",
    '<div class="card">\n    <p>Hello&nbsp;world</p>\n        <br/>\n</div>\n',
    'fn main() {\n    let v: Vec<u32> = (0..100).map(|x| x * x).collect();\n    println!("{:?}", v);\n}\n',
]

WHITESPACE = [" " * n + "x" for n in range(1, 34)] + ["x" + " " * n + "y" for n in (2, 3, 4, 7, 8, 15, 16, 17, 24, 25)]
WHITESPACE += ["\t" * n + "tab" for n in range(1, 6)] + ["a \t \n \r\n\u3000 b", "    \n        \n\t\t\n", " \n\n \n"]

DIGITS = [
    "0 00 000 0000 00000 000000 0000000 00000000",
    "3.141592653589793 2.718281828 6.02214076e23 1,234,567.89 ١٢٣ ۱۲۳ १२३",
    "Call 555-0100 or +1 (555) 010-0199; IP 192.168.0.1, year 1999-2024.",
    "v1.2.3-rc.4+build.567 0xDEADBEEF 0b1010 1_000_000",
]

EMOJI = [
    "🦙.cpp 🤗 transformers 🚀🚀🚀 ✅❌ 👩🏽‍💻 👨‍👨‍👧‍👧 🇺🇸🇫🇷 ☺️ ⚡️",
    "I ❤️ 🍕 and 🍣! 😀😃😄😁😆😅🤣😂",
]

COMPAT = [
    "ﬁnance ﬂow ﬀ Ⅻ ① ㍿ ｆｕｌｌｗｉｄｔｈ ﾊﾝｶｸ ℃ ™ ½ x² H₂O µ Ω K Å",
    "Ａ１ Ｂ２ ﹏ ︰ ，。！？ 〜 ～",
]

CONTROL = ["a\x03b", "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x1a\x1b\x7f end", "tab\x03\x03\x03x"]

SPECIALS = [
    "<|endoftext|> <|im_start|>user\nhi<|im_end|> <|begin_of_text|><|start_header_id|>x<|end_header_id|>",
    "<｜begin▁of▁sentence｜><｜User｜>hello<｜Assistant｜> <｜fim▁hole｜> <think>ok</think>",
    "|||PHONE_NUMBER||| |||EMAIL_ADDRESS||| |||IP_ADDRESS||| <|extra_id_0|> <|padding|>",
    "<s>[INST] hi [/INST]</s> <unk> <SPECIAL_10> <|startoftranscript|><|en|><|transcribe|><|0.00|>",
    '<tool_call>{"a": 1}</tool_call> <|fim_prefix|>a<|fim_suffix|>b<|fim_middle|> <|reserved_special_token_5|>',
    "<|header_start|>assistant<|header_end|> <|eot|> <|return|> <|channel|>final<|message|>",
]


@functools.cache
def conformance_texts() -> tuple[str, ...]:
    """Every text of the corpus, each encoded on its own."""
    nfd = [unicodedata.normalize("NFD", t) for t in PROSE + COMPAT]
    texts = PROSE + ADVERSARIAL + LONG_RUNS + CODE + WHITESPACE + DIGITS + EMOJI + COMPAT + CONTROL + SPECIALS + nfd
    texts += code_samples(60_000)
    return tuple(t for t in texts if t)
