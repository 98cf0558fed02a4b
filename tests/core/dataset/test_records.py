"""Reading dataset files: the format is decided from a bounded prefix, and no record, however
large or deeply nested, breaks the reading of the others."""

from __future__ import annotations

import io
import json

import pytest

from bpeinspect.core.dataset import records
from bpeinspect.core.dataset.records import RecordReader, read_records
from bpeinspect.core.errors import DatasetError


class CountingStream(io.BytesIO):
    """A stream that remembers the most it was asked for at once."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.largest = 0

    def read(self, n: int | None = -1) -> bytes:
        self.largest = max(self.largest, len(data := super().read(n)))
        return data


@pytest.mark.parametrize("name", ["big.jsonl", "big.json", "big.ndjson"])
def test_json_lines_with_a_first_record_larger_than_the_prefix_are_read_as_lines(name, monkeypatch):
    monkeypatch.setattr(records, "_CHUNK", 1 << 10)  # the prefix: as if the first record were over 4 MiB
    first = json.dumps({"text": "a" * 5000}).encode()
    data = first + b"\n" + b'{"text": "b"}\n' + b'{"text": "c"}\n'
    stream = CountingStream(data)
    reader = RecordReader(stream, size=len(data), name=name)
    got = [r["text"][:1] for _, r in reader]
    assert got == ["a", "b", "c"]
    assert reader.kind == "jsonl"
    assert stream.largest <= 1 << 10  # never the whole file at once


def test_one_json_object_on_one_line_is_still_one_document(monkeypatch):
    monkeypatch.setattr(records, "_CHUNK", 1 << 10)
    data = json.dumps({"data": [{"text": "x" * 3000}, {"text": "y"}]}).encode()
    reader = RecordReader(io.BytesIO(data), size=len(data), name="d.json")
    assert [r["text"][:1] for _, r in reader] == ["x", "y"]


def nested(depth: int) -> bytes:
    return b'{"text": ' + b"[" * depth + b"]" * depth + b"}"


def test_a_line_nested_too_deeply_is_reported_with_its_line_number():
    data = b'{"text": "a"}\n' + nested(200_000) + b'\n{"text": "b"}\n'
    reader = RecordReader(io.BytesIO(data), size=len(data), name="deep.jsonl")
    assert [r["text"] for _, r in reader] == ["a", "b"]
    assert reader.problems == ["deep.jsonl line 2: nested too deeply"]


def test_an_array_record_nested_too_deeply_ends_the_reading_with_one_line():
    data = b'[{"text": "a"}, ' + nested(200_000) + b"]"
    reader = RecordReader(io.BytesIO(data), size=len(data), name="deep.json")
    assert [r["text"] for _, r in reader] == ["a"]
    assert reader.truncated == "deep.json: record 2 is nested too deeply"


def test_an_object_nested_too_deeply_is_refused_in_one_line():
    data = b'{"a": 1,\n "b": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    reader = RecordReader(io.BytesIO(data), size=len(data), name="deep.json")
    with pytest.raises(DatasetError, match="^deep.json: nested too deeply"):
        list(reader)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_json_lines_are_refused_not_miscounted(tmp_path, encoding):
    p = tmp_path / "u16.jsonl"
    p.write_bytes('{"text": "a"}\n{"text": "b"}\n{"text": "c"}\n'.encode(encoding))
    with pytest.raises(DatasetError, match="UTF-16"):
        list(read_records(p))


def test_a_number_of_a_hundred_thousand_digits_does_not_refuse_the_dataset():
    data = b'{"text": "a", "id": ' + b"7" * 100_000 + b'}\n{"text": "b"}\n'
    reader = RecordReader(io.BytesIO(data), size=len(data), name="num.jsonl")
    assert [r["text"] for _, r in reader] == ["a", "b"]
    array = b'[{"text": "a", "id": ' + b"7" * 100_000 + b'}, {"text": "b"}]'
    reader = RecordReader(io.BytesIO(array), size=len(array), name="num.json")
    assert [r["text"] for _, r in reader] == ["a", "b"]
