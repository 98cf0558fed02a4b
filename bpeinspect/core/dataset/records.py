"""Reading dataset files record by record: JSON Lines, or JSON holding a list of records.

:func:`read_records` streams a file of any size with a constant memory: a ``.jsonl`` file a
line at a time, a JSON array a record at a time (``json.JSONDecoder.raw_decode`` over a
growing window of the file). A JSON object is a container of records when it holds one list
of objects (``{"data": [...]}``) or maps keys to records (``{"id1": {...}, "id2": {...}}``);
otherwise it is one record. Lines that are not JSON are skipped and reported; a file that
ends inside a record (a download cut short) gives every complete record before it, and says so.

>>> import io, json
>>> src = io.BytesIO(b'{"text": "a"}\\n\\nnot json\\n{"text": "b"}\\n')
>>> reader = RecordReader(src, size=38, name="demo.jsonl")
>>> [r for _, r in reader]
[{'text': 'a'}, {'text': 'b'}]
>>> reader.problems
['demo.jsonl line 3: not JSON (Expecting value)']
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from bpeinspect.core.errors import DatasetError

JSON_SUFFIXES = (".json", ".jsonl", ".ndjson", ".jsonlines")
_CHUNK = 4 << 20  # bytes read at a time
_MAX_REPORTED = 20  # problems kept verbatim; the rest are only counted
_NOT_WS = re.compile(r"[^ \t\n\r]")  # what is not JSON's whitespace between values
_MAX_DIGITS = 4000  # Python refuses to read longer integers (sys.get_int_max_str_digits)


def _number(digits: str) -> int | float:
    # a 100,000-digit id is no reason to refuse a record: read it as a (huge) float
    return int(digits) if len(digits) <= _MAX_DIGITS else float(digits)


_DECODER = json.JSONDecoder(parse_int=_number)


def is_dataset_name(name: str) -> bool:
    """True for the file names dataset mode opens (``.json``, ``.jsonl``, ``.ndjson``).

    >>> is_dataset_name("train.jsonl"), is_dataset_name("tokenizer.model")
    (True, False)
    """
    return name.lower().endswith(JSON_SUFFIXES)


class RecordReader:
    """Iterate ``(index, record)`` over a dataset stream; ``done`` is the bytes consumed so far.

    ``problems`` lists what was skipped (and ``skipped`` counts it); ``truncated`` says where
    the file ended inside a record, if it did.
    """

    def __init__(self, stream: IO[bytes], *, size: int, name: str) -> None:
        self.stream, self.size, self.name = stream, size, name
        self.done = 0
        self.problems: list[str] = []
        self.skipped = 0
        self.truncated = ""
        self.kind = ""  # "jsonl", "json array", "json object"

    def _problem(self, text: str) -> None:
        self.skipped += 1
        if len(self.problems) < _MAX_REPORTED:
            self.problems.append(text)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        head = self.stream.read(_CHUNK)
        if _utf16(head):
            raise DatasetError(
                f"{self.name}: UTF-16 text; dataset files are read as UTF-8 (convert it, e.g. iconv -f UTF-16 -t UTF-8)"
            )
        start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        if start == b"[":
            self.kind = "json array"
            yield from self._array(head)
        elif start == b"{" and self._one_document(head):
            self.kind = "json object"
            yield from self._object(head)
        else:
            self.kind = "jsonl"
            if start:
                yield from self._lines(head)

    @staticmethod
    def _one_document(head: bytes) -> bool:
        # Decided from the prefix alone: a first line that is not a whole JSON value starts one
        # document spread over lines; a first line that is one (or that does not end within the
        # prefix) starts JSON Lines, and a file of that one line is read as one document then.
        line, newline, _ = head.lstrip(b"\xef\xbb\xbf \t\r\n").partition(b"\n")
        if not newline:
            return False
        try:
            _DECODER.decode(_text(line))
        except (ValueError, RecursionError):
            return True
        return False

    def _lines(self, head: bytes) -> Iterator[tuple[int, Any]]:
        index = lineno = filled = 0
        first: list[Any] = []  # the first record, held until a second line shows these are lines
        pending = head
        while True:
            block = self.stream.read(_CHUNK)
            lines = (pending + block).split(b"\n")
            pending = lines.pop() if block else b""
            for line in lines:
                lineno += 1
                self.done += len(line) + 1
                if not line.strip():
                    continue
                filled += 1
                try:
                    obj = _DECODER.decode(_text(line))
                except UnicodeDecodeError:
                    self._problem(f"{self.name} line {lineno}: not UTF-8")
                    continue
                except ValueError as exc:
                    self._problem(f"{self.name} line {lineno}: not JSON ({getattr(exc, 'msg', exc)})")
                    continue
                except RecursionError:
                    self._problem(f"{self.name} line {lineno}: nested too deeply")
                    continue
                if index == 0 and not first:
                    first.append(obj)
                    continue
                if first:
                    yield 0, first.pop()
                    index = 1
                yield index, obj
                index += 1
            if not block:
                self.done = self.size
                break
        if first:  # the only record
            obj = first.pop()
            if isinstance(obj, dict) and filled == 1:  # one JSON document on one line
                self.kind = "json object"
                yield from enumerate(records_in_object(obj))
            else:
                yield 0, obj

    def _text_chunks(self, head: bytes) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        block = head
        while True:
            self.done += len(block)
            final = len(block) == 0
            try:
                text = decoder.decode(block, final=final)
            except UnicodeDecodeError as exc:
                raise DatasetError(
                    f"{self.name}: not UTF-8 text (bad byte near offset {self.done - len(block) + exc.start})"
                ) from None
            yield text
            if final:
                return
            block = self.stream.read(_CHUNK)

    def _array(self, head: bytes) -> Iterator[tuple[int, Any]]:
        decoder = _DECODER
        chunks = self._text_chunks(head)
        buf, pos, eof = "", 0, False
        index = 0

        def more() -> bool:
            nonlocal buf, pos, eof
            text = None if eof else next(chunks, None)
            if text is None:
                eof = True
                return False
            buf = buf[pos:] + text
            pos = 0
            return True

        def skip_ws() -> None:
            nonlocal pos
            while True:
                found = _NOT_WS.search(buf, pos)
                pos = found.start() if found is not None else len(buf)
                if pos < len(buf) or not more():
                    return

        skip_ws()
        if not buf[pos : pos + 1] == "[":
            raise DatasetError(f"{self.name}: not a JSON array")
        pos += 1
        skip_ws()
        if buf[pos : pos + 1] == "]":
            return
        while True:
            while True:
                try:
                    obj, end = decoder.raw_decode(buf, pos)
                    break
                except RecursionError:
                    self.truncated = f"{self.name}: record {index + 1} is nested too deeply"
                    return
                except json.JSONDecodeError as exc:
                    if not more():
                        if exc.pos >= len(buf) - 1 or "Unterminated" in exc.msg or exc.msg.startswith("Expecting"):
                            self.truncated = f"{self.name}: the file ends inside record {index + 1}"
                        else:
                            self.truncated = f"{self.name}: record {index + 1} is not valid JSON ({exc.msg})"
                        return
            pos = end
            yield index, obj
            index += 1
            skip_ws()
            c = buf[pos : pos + 1]
            if c == ",":
                pos += 1
                skip_ws()
            elif c == "]":
                return
            elif not c:
                self.truncated = f"{self.name}: the file ends after record {index}, before the closing ]"
                return
            else:
                self.truncated = f"{self.name}: unexpected {c!r} after record {index}"
                return

    def _object(self, head: bytes) -> Iterator[tuple[int, Any]]:
        data = head + self.stream.read()
        self.done = len(data)
        try:
            obj = _DECODER.decode(_text(data))
        except UnicodeDecodeError:
            raise DatasetError(f"{self.name}: not UTF-8 text") from None
        except ValueError as exc:
            raise DatasetError(f"{self.name}: not valid JSON ({exc})") from None
        except RecursionError:
            raise DatasetError(f"{self.name}: nested too deeply (more levels than a JSON reader follows)") from None
        yield from enumerate(records_in_object(obj))


def _text(data: bytes) -> str:
    return data.decode("utf-8-sig")  # UnicodeDecodeError is a ValueError, as json.loads raises


def _utf16(head: bytes) -> bool:
    """Whether ``head`` starts UTF-16 text: a byte order mark, or ASCII with a zero byte beside each."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    pairs = head[:64]
    return len(pairs) >= 4 and (pairs[1::2].count(0) == len(pairs) // 2 or pairs[0::2].count(0) == len(pairs) // 2)


def records_in_object(obj: dict[str, Any]) -> list[Any]:
    """The records a JSON object holds: the objects of its one list of objects, its values if
    they are all objects (records by id), or the object itself.

    >>> records_in_object({"version": 2, "data": [{"text": "a"}, {"text": "b"}]})
    [{'text': 'a'}, {'text': 'b'}]
    >>> records_in_object({"k1": {"text": "a"}, "k2": {"text": "b"}})
    [{'text': 'a'}, {'text': 'b'}]
    >>> records_in_object({"text": "a"})
    [{'text': 'a'}]
    """
    lists = [v for v in obj.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
    if len(lists) == 1 and not any(k in obj for k in ("messages", "conversations", "conversation")):
        return lists[0]
    if len(obj) > 1 and all(isinstance(v, dict) for v in obj.values()):
        return list(obj.values())
    return [obj]


def read_records(path: str | os.PathLike[str]) -> RecordReader:
    """A :class:`RecordReader` over the file at ``path`` (iterate it inside ``with open_dataset``...).

    The file stays open while the reader is iterated and is closed when iteration ends.
    """
    p = Path(path)
    if p.is_dir():
        raise DatasetError(f"{p}: a folder, not a dataset file")
    if p.exists() and not p.is_file():  # a device (/dev/zero) or a pipe: no end, or no size to show
        raise DatasetError(f"{p}: not a regular file")
    try:
        stream = open(p, "rb")  # noqa: SIM115  (closed by _ClosingReader when the records run out)
        size = os.fstat(stream.fileno()).st_size
    except OSError as exc:
        raise DatasetError(f"{p}: cannot read it: {exc.strerror or exc}") from None
    return _ClosingReader(stream, size=size, name=str(p))


class _ClosingReader(RecordReader):
    def __iter__(self) -> Iterator[tuple[int, Any]]:
        try:
            yield from super().__iter__()
        finally:
            self.stream.close()


__all__ = ["JSON_SUFFIXES", "RecordReader", "is_dataset_name", "read_records", "records_in_object"]
