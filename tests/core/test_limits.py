"""The limits on what bpeinspect reads, and the two helpers every check uses."""

from __future__ import annotations

import io

import pytest

from bpeinspect.core import limits


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (0, "0 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1 KB"),
        (1536, "1.5 KB"),
        ((1 << 20) - 1, "1 MB"),  # never "1,024 KB"
        (5 << 20, "5 MB"),
        (int(2.25 * (1 << 30)), "2.2 GB"),
        (3 << 40, "3,072 GB"),
    ],
)
def test_sizes_are_written_in_binary_units_with_one_decimal_at_most(n, shown):
    assert limits.human_size(n) == shown


def test_split_time_grows_with_the_text_and_follows_the_settings(monkeypatch):
    assert limits.split_timeout(1000) < limits.split_timeout(1_000_000)
    monkeypatch.setattr(limits, "SPLIT_SECONDS", 0.5)
    monkeypatch.setattr(limits, "SPLIT_SECONDS_PER_CHAR", 0.0)
    assert limits.split_timeout(10**9) == 0.5


@pytest.mark.parametrize("size", [0, 1, 6, 7, 8, 100])
def test_read_at_most_reads_one_byte_past_the_limit_and_no_more(size):
    stream = io.BytesIO(bytes(range(size)))
    data = limits.read_at_most(stream, 7, chunk=3)
    assert data == bytes(range(min(size, 8)))
    assert stream.tell() == min(size, 8)


def test_real_vocabularies_fit_the_limits():
    assert limits.MAX_IDS > 262_144
    assert limits.MAX_TOKEN_BYTES >= 1024
