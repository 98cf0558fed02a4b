"""packaging/fetch_udhr.py: the HTML-to-text extraction and the rough regions (no network here)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.paths import ROOT

_spec = importlib.util.spec_from_file_location("fetch_udhr", ROOT / "packaging" / "fetch_udhr.py")
assert _spec is not None and _spec.loader is not None
fetch_udhr = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("fetch_udhr", fetch_udhr)
_spec.loader.exec_module(fetch_udhr)

PAGE = """<!doctype html>
<html data-code="xx" dir="ltr" lang="xx">
  <head>
    <title>Test</title>
  </head>
  <body>
    <h1>Declaration   of
      Rights</h1>
    <header>
      <h2>Preamble</h2>
      <p>Whereas A &amp; B,</p>
      <p>Whereas\u00a0C.</p>
    </header>
    <article data-number="1">
      <h2>Article 1</h2>
      <p>All are free.</p>
    </article>
    <article data-number="2">
      <h2>Article 2</h2>
      <ol>
        <li>
          <p>One qu\x92il.</p>
        </li>
        <li>
          <p>Two.</p>
        </li>
      </ol>
    </article>
  </body>
</html>
"""


def test_extract_keeps_the_structure_and_only_the_text():
    text, sections = fetch_udhr.extract(PAGE)
    assert text == (
        "Declaration of Rights\n\n"
        "Preamble\nWhereas A & B,\nWhereas\u00a0C.\n\n"
        "Article 1\nAll are free.\n\n"
        "Article 2\nOne qu\u2019il.\nTwo.\n"
    )
    assert [s.number for s in sections] == [None, None, 1, 2]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('<article data-number="1"><p>x</p></article><article data-number="1"><p>y</p></article>', "out of order"),
        ("<div>x</div>", "unexpected element"),
        ("<p>loose</p>", "outside the preamble"),
        ("<header>stray text</header>", "text outside"),
    ],
)
def test_extract_refuses_what_it_does_not_know(bad, message):
    with pytest.raises(ValueError, match=message):
        fetch_udhr.extract(f"<html><body>{bad}</body></html>")


@pytest.mark.parametrize(
    ("lat", "lon", "region"),
    [
        (53, -1, "Europe"),  # English
        (39.87, 32.87, "Asia"),  # Turkish
        (35.89, 14.45, "Europe"),  # Maltese
        (36.41, 4.76, "Africa"),  # Kabyle
        (31.11, 35.02, "Asia"),  # Hebrew
        (15.3, 38.9, "Africa"),  # Tigrinya (Eritrea)
        (15.0, 44.0, "Asia"),  # Yemen
        (-20.26, 57.55, "Africa"),  # Morisyen
        (42.23, 41.3, "Asia"),  # Abkhaz, south of the Caucasus
        (43.51, 43.39, "Europe"),  # Kabardian, north of it
        (48.0, 68.0, "Asia"),  # Kazakh
        (-2.53, 139.65, "Asia"),  # Papuan Malay (Indonesia)
        (-9.42, 147.3, "Oceania"),  # Tok Pisin
        (-20.14, 127.98, "Oceania"),  # Pintupi-Luritja
        (19.63, -155.43, "Oceania"),  # Hawaiian
        (64.0, -160.0, "Americas"),  # Alaska
        (-15.0, -47.0, "Americas"),
    ],
)
def test_region_of(lat, lon, region):
    assert fetch_udhr.region_of(lat, lon) == region


def test_fix_c1_leaves_undefined_bytes():
    assert fetch_udhr.fix_c1("a\x92b\x81c") == "a\u2019b\x81c"


def test_coastlines_decode_topojson_and_cut_at_the_antimeridian():
    topo = {"transform": {"scale": [0.5, 0.25], "translate": [-180, -90]}, "arcs": [[[700, 400], [10, 4], [-700, 0]], [[0, 0], [2, 2]]]}
    assert fetch_udhr.coastlines(topo) == [[(170.0, 10.0), (175.0, 11.0)], [(-175.0, 11.0)], [(-180.0, -90.0), (-179.0, -89.5)]]
