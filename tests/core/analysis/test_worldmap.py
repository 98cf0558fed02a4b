"""The world map's coastlines: read from the shipped file, one curve for the plot, a clear error if damaged."""

from __future__ import annotations

import gzip
import math

import pytest

from bpeinspect.core.analysis import worldmap
from bpeinspect.core.errors import SampleError


@pytest.fixture
def fresh_cache():
    worldmap.coastlines.cache_clear()
    yield
    worldmap.coastlines.cache_clear()


def test_the_curve_is_every_line_with_a_gap_between_two(fresh_cache):
    lines = worldmap.coastlines()
    xs, ys = worldmap.coastline_xy()
    gaps = [i for i, x in enumerate(xs) if math.isnan(x)]
    assert len(gaps) == len(lines) - 1
    assert [i for i, y in enumerate(ys) if math.isnan(y)] == gaps
    assert xs[: gaps[0]] == list(lines[0][0])
    assert all(len(lon) == len(lat) >= 1 for lon, lat in lines)


def test_the_land_spans_the_globe(fresh_cache):
    xs = [x for x in worldmap.coastline_xy()[0] if not math.isnan(x)]
    ys = [y for y in worldmap.coastline_xy()[1] if not math.isnan(y)]
    assert min(xs) < -170 and max(xs) > 170
    assert min(ys) < -80 and max(ys) > 70


def test_a_damaged_map_is_a_sample_error_naming_the_file(fresh_cache, tmp_path, monkeypatch):
    (tmp_path / "udhr").mkdir()
    (tmp_path / "udhr" / "coastline-110m.txt.gz").write_bytes(gzip.compress(b"")[:5])
    monkeypatch.setattr(worldmap, "resources_dir", lambda: tmp_path)
    with pytest.raises(SampleError, match="coastline-110m.txt.gz: cannot read the map"):
        worldmap.coastlines()
