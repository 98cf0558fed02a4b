"""Dataset mode: token counts of whole fine-tuning sets (JSON Lines or JSON records) under
several tokenizers, per record, per role or field, and the chat template's own tokens."""

from bpeinspect.core.dataset.counting import (
    TEMPLATE_PART,
    DatasetStats,
    LongRecord,
    ShapeUnclear,
    Target,
    TokenizerTotals,
    count_dataset,
    peek_shape,
)
from bpeinspect.core.dataset.records import is_dataset_name, read_records
from bpeinspect.core.dataset.shapes import CHAT, Shape, conversation, field_texts, fields_shape, guess_shape
from bpeinspect.core.errors import DatasetError

__all__ = [
    "CHAT",
    "TEMPLATE_PART",
    "DatasetError",
    "DatasetStats",
    "LongRecord",
    "Shape",
    "ShapeUnclear",
    "Target",
    "TokenizerTotals",
    "conversation",
    "count_dataset",
    "field_texts",
    "fields_shape",
    "guess_shape",
    "is_dataset_name",
    "peek_shape",
    "read_records",
]
