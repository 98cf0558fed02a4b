"""The outline of the land for the world map of languages (Natural Earth 1:110m, shipped).

Longitude is x and latitude is y, in degrees (an equirectangular map: plot them as they are).

>>> lines = coastlines()
>>> len(lines)
137
>>> all(-180 <= x <= 180 and -90 <= y <= 90 for xs, ys in lines for x, y in zip(xs, ys))
True
>>> xs, ys = coastline_xy()  # one curve, NaN between lines (pyqtgraph: connect="finite")
>>> len(xs) == sum(len(l[0]) + 1 for l in lines) - 1
True
"""

from __future__ import annotations

import functools
import gzip
import math

from bpeinspect.core.analysis.samples import SampleError
from bpeinspect.core.io.builtins import resources_dir

Polyline = tuple[tuple[float, ...], tuple[float, ...]]  # (longitudes, latitudes)


@functools.cache
def coastlines() -> tuple[Polyline, ...]:
    """Every coastline as (longitudes, latitudes); no line crosses the ±180° meridian."""
    path = resources_dir() / "udhr" / "coastline-110m.txt.gz"
    try:
        text = gzip.decompress(path.read_bytes()).decode("ascii")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise SampleError(f"{path}: cannot read the map: {exc}") from None
    out = []
    for line in text.splitlines():
        points = [p.split(",") for p in line.split()]
        out.append((tuple(float(x) for x, _ in points), tuple(float(y) for _, y in points)))
    return tuple(out)


def coastline_xy() -> tuple[list[float], list[float]]:
    """All coastlines as one pair of coordinate lists, lines separated by NaN."""
    xs: list[float] = []
    ys: list[float] = []
    for lon, lat in coastlines():
        if xs:
            xs.append(math.nan)
            ys.append(math.nan)
        xs.extend(lon)
        ys.extend(lat)
    return xs, ys


__all__ = ["coastline_xy", "coastlines"]
