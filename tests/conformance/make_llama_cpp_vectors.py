"""Record llama.cpp's own token ids for every GGUF vocabulary of the suite, on a broad corpus.

llama.cpp's ``.inp``/``.out`` test vectors were made by Hugging Face ``tokenizers`` and hold a
few dozen strings; three GGUF files of the suite have none. This script asks llama.cpp itself
(the copy vendored in the pinned ``llama-cpp-python==0.3.36`` sdist: llama.cpp commit
0c1e57098bba43ac29e6e3b677cdceebdd22334f, ggml 0.25.3) and writes
``vectors/llama_cpp.json.xz``: the texts, and per vocabulary the ids with special-token parsing
off and, where they differ, on. ``test_llama_cpp_vectors.py`` checks bpeinspect against them
without llama.cpp. The ids come from llama.cpp only, never from bpeinspect.

To re-run it, build llama.cpp's library from the sdist (vocabulary-only, no tools), then the
small driver beside this file (``llama_cpp_tok.cpp``, which loads a GGUF with ``vocab_only`` and
calls ``llama_tokenize`` with ``add_special=false``, as llama.cpp's ``test-tokenizer-0`` does)::

    SRC=~/.cache/bpeinspect/.../llama_cpp_python-0.3.36/vendor/llama.cpp   # the sdist, unpacked
    cmake -S $SRC -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \\
        -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_OPENMP=OFF -DLLAMA_BUILD_COMMON=OFF \\
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \\
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF
    nice -n 19 ninja -C build -j1 llama
    g++ -O1 -std=c++17 -I$SRC/include -I$SRC/ggml/include tests/conformance/llama_cpp_tok.cpp \\
        -Lbuild/bin -lllama -lggml -lggml-base -Wl,-rpath,$PWD/build/bin -o build/tok
    python tests/conformance/make_llama_cpp_vectors.py build/tok
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conformance.corpus import conformance_texts  # noqa: E402
from tests.conformance.fetch import extract  # noqa: E402
from tests.conformance.sources import VOCABS  # noqa: E402
from tests.core.corpus import recent_unicode_texts  # noqa: E402

OUT = Path(__file__).parent / "vectors" / "llama_cpp.json.xz"
LLAMA_CPP = "llama.cpp 0c1e57098bba43ac29e6e3b677cdceebdd22334f (vendored in llama-cpp-python 0.3.36)"
SEED = 20260
MAX_CHARS = 3000

# whitespace llama.cpp and the regex module may class otherwise, and ASCII separators
SPACES = "\u00a0\u0085\u1680\u2000\u2007\u2009\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff\x1c\x1d\x1e\x1f"
EXTRA = [
    *(f"word{s}word {s}{s}x{s} 12{s}34 'll{s}" for s in SPACES),
    *(f"a{s}{s}{s}b\n{s}\n\t{s}c" for s in SPACES[:14]),
    "Ünïcödé çà et là: naïve café résumé Ørsted Łódź Straße İstanbul ǅemal",
    "Ελληνικά κείμενα, кириллица Ёё, עִבְרִית, العربية مع التشكيل: مُحَمَّد, فارسی ۱۲۳۴",
    "हिन्दी देवनागरी १२३४, বাংলা ১২৩, ਪੰਜਾਬੀ, தமிழ் ௧௨௩, తెలుగు, ಕನ್ನಡ, മലയാളം, සිංහල, ไทย ๑๒๓, ລາວ, ᠮᠣᠩᠭᠣᠯ",
    "日本語のテキスト、カタカナ・ひらがな。中文标点：“你好”！한국어 텍스트 ㄱㄴㄷ 𠀀𪜀𫝀𬺰𰀀𲎰",
    "ትግርኛ አማርኛ ᎠᏍᎦᏯ ᐃᓄᒃᑎᑐᑦ ꦧꦱꦗꦮ ᬅᬓ᭄ᬱᬭ 𐌰𐌱𐌲 𓀀𓀁 ꓐꓑꓒ 𖹀𖹁 𞤀𞤁 ߊߋߌ",
    "digits: ０１２３ ٠١٢٣ ۰۱۲۳ ०१२३ ০১২৩ ๐๑๒๓ ០១២៣ ᠐᠑᠒ ①②③ ⅠⅡⅢ ¹²³ ½¾ 𝟎𝟏𝟐 𞥐𞥑 1234567890123",
    "marks alone: \u0301\u0302 a\u0301\u0323 e\u0308\u0304 \u0d4d\u0d4d \u093f\u094d \u0e31\u0e34 \u20dd\u20e3 1\ufe0f\u20e3",
    "emoji: 👍🏿 🧑‍🤝‍🧑 🏳️‍🌈 🏴󠁧󠁢󠁳󠁣󠁴󠁿 ❤️‍🔥 🫠🫶🪿🫎 🇯🇵 #️⃣ ©️ ™ 🀄 🂡",
    "symbols: ∀x∈ℝ: x²≥0 ⇒ ∑ᵢ aᵢ ≤ ∞; € £ ¥ ₹ ₿ ° § ¶ † ‡ • … ‰ ′ ″ ← → ↔ ⌘ ⌥ ␣ ☃ ♠ ♥ ✓ ✗",
    "code:\n\tdef f(x):\n\t\treturn x  # tab\n    if x:\n        pass\n  \n\n\n    \t  \t\n}}}]]])))",
    "JSON {\"key\": [1, 2.5e-3, -7, null, true], \"s\": \"a\\\"b\\\\c\\u00e9\"}\r\n\r\n  \r\n",
    "  leading and trailing spaces   ",
    " ",
    "\n",
    "\t",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D ’s ’ll don't DON'T I'M",
    "▁lower▁bar▁ ▁▁ ▁",
]


def corpus() -> list[str]:
    # the suite's corpus without its few long code samples (their ids would weigh a few MB here)
    texts = [t for t in conformance_texts() if len(t) <= MAX_CHARS] + EXTRA
    texts += [unicodedata.normalize("NFD", t) for t in EXTRA[-12:]]
    texts += recent_unicode_texts(SEED, 600)
    seen: set[str] = set()
    out = []
    for t in texts:
        if t and t not in seen and not any("\ud800" <= c <= "\udfff" for c in t):
            seen.add(t)
            out.append(t)
    return out


def gguf_vocabs():
    return [v for v in VOCABS if v.member.endswith(".gguf") and v.status != "refused"]


def run(tok: Path, vocab_path: Path, texts: list[str]) -> list[tuple[list[int], list[int]]]:
    with tempfile.NamedTemporaryFile("wb", suffix=".records", delete=False) as f:
        for t in texts:
            b = t.encode("utf-8")
            f.write(b"%d\n" % len(b) + b)
        records = f.name
    out = subprocess.run([str(tok), str(vocab_path), records], capture_output=True, check=True).stdout
    Path(records).unlink()
    lines = out.decode("ascii").split("\n")[:-1]
    assert len(lines) == len(texts), (vocab_path, len(lines), len(texts))
    rows = []
    for line in lines:
        plain, special = line.split("\t")
        rows.append(([int(x) for x in plain.split()], [int(x) for x in special.split()]))
    return rows


def main(tok: Path) -> None:
    texts = corpus()
    vocabs = {}
    for v in gguf_vocabs():
        rows = run(tok, extract(v), texts)
        vocabs[v.id] = {
            "plain": [p for p, _ in rows],
            # with special-token parsing on, only where that changes the ids
            "special": {str(i): s for i, (p, s) in enumerate(rows) if s != p},
        }
        print(f"{v.id}: {len(rows)} texts, {len(vocabs[v.id]['special'])} differ with special parsing")
    data = {"llama.cpp": LLAMA_CPP, "seed": SEED, "texts": texts, "vocabs": vocabs}
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_bytes(lzma.compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), preset=9))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
