"""Models: the part of a tokenizer that turns one pre-token into ids.

A :class:`~bpeinspect.core.tokenizer.Tokenizer` is normalizer -> pre-tokenizer -> model ->
decoder; the model is the only part that merges. Three models cover every family bpeinspect
opens, each a small class:

* :class:`RankBPE` (:mod:`~bpeinspect.core.models.byte_level`): tiktoken's rank rule over
  bytes, the id is the merge priority; also byte-level Hugging Face files in id order.
* :class:`MergeListBPE` (same module): an explicit merge list over bytes (Hugging Face,
  minbpe, llama.cpp ``gpt2``).
* :class:`ScoreBPE` (:mod:`~bpeinspect.core.models.score`): SentencePiece-style merging of
  characters by score (``.model`` files, llama.cpp ``llama``) or by a merge list (Hugging
  Face with ``byte_fallback``), with byte fallback and an unknown token.

**The contract** (:class:`~bpeinspect.core.models.contract.Model`): a model holds its token
table (``decoder``, id -> bytes; ``ranks``, bytes -> id), the piece encoder ``encode_piece``
that the tokenizer's pre-token cache calls on a miss (bytes, or normalized text when
``byte_level`` is false: this is the hot path, so it is a plain function the cache holds, and
composing adds no call per piece), and what the merge views read: ``merge_rank``,
``merge_result``, ``explicit_merges``, ``initial_parts``, ``merge_graph``, ``leaf_label``.

**A new family is a model option, not a flag on the tokenizer.** A suffix BPE (CLIP's
``</w>``, GPT-1) or a prefix one (``##`` continuing subwords) is an option of the model that
merges that way: it changes how a pre-token's initial symbols are made and what a token's
bytes print as, in ``encode_piece``, ``initial_parts`` and ``decoder``; the tokenizer, the
pre-tokenizer and every caller stay as they are.

>>> from bpeinspect.core.tokenizer import PreTokenizer, Tokenizer
>>> from bpeinspect.core.split.rules import resolve_rule
>>> model = MergeListBPE({bytes([b]): b for b in range(256)} | {b"hi": 256}, [(104, 105)])
>>> Tokenizer.compose(model, PreTokenizer(resolve_rule("gpt2"))).encode("hi hi")
[256, 32, 256]
"""

from bpeinspect.core.models.byte_level import ByteLevelBPE, MergeListBPE, RankBPE
from bpeinspect.core.models.contract import Model
from bpeinspect.core.models.score import ScoreBPE

__all__ = ["ByteLevelBPE", "MergeListBPE", "Model", "RankBPE", "ScoreBPE"]
