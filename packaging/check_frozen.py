"""Build the one-folder app with PyInstaller and check that the frozen binaries work.

    python packaging/check_frozen.py            # build into a temporary folder, check, remove it
    python packaging/check_frozen.py --keep DIR # build into DIR and keep it

CI runs it as its own step (about a minute on 2 cores: ~30 s of PyInstaller, then the frozen
window's screenshot): it is the only check that the shipped app starts at all. Each check prints
``ok`` or ``FAIL`` with the reason; the exit status is the number of failed checks.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BPEINSPECT_SHARED") or ROOT.parent / "shared")
EXE_SUFFIX = ".exe" if sys.platform == "win32" else ""


class CheckFailed(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def build(tmp: Path) -> Path:
    import PyInstaller  # noqa: F401  (in the test extra: a missing one must fail)

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(tmp / "dist"),
            "--workpath",
            str(tmp / "work"),
            str(ROOT / "packaging" / "bpeinspect.spec"),
        ],
        capture_output=True,
        text=True,
        timeout=1100,
        check=False,
        cwd=tmp,
    )
    expect(proc.returncode == 0, proc.stderr[-4000:])
    return tmp / "dist" / "bpeinspect"


def frozen_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    # settings and caches of the frozen app go to a folder of the check, never the user's
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(home), XDG_CACHE_HOME=str(home))
    return env


def layout_is_lean_and_has_the_resources(app_dir: Path, home: Path) -> None:
    internal = app_dir / "_internal"
    expect((app_dir / f"bpeinspect{EXE_SUFFIX}").is_file(), "no bpeinspect executable")
    expect((app_dir / f"bpeinspect-cli{EXE_SUFFIX}").is_file(), "no bpeinspect-cli executable")
    resources = internal / "bpeinspect" / "resources"
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        expect((resources / "vocabs" / f"{name}.tiktoken.gz").is_file(), f"{name} is not bundled")
    expect((resources / "samples" / "welcome.txt").is_file(), "the welcome sample is not bundled")
    expect((resources / "icons" / "bpeinspect.svg").is_file(), "the icon is not bundled")
    expect((resources / "fonts" / "NotoSansDevanagari-Regular.ttf").is_file(), "the fonts are not bundled")
    expect((resources / "fonts" / "OFL.txt").is_file(), "the fonts' licence is not bundled")
    qt_modules = {p.name.split(".")[0] for p in (internal / "PySide6").glob("Qt*.so")} | {
        p.name.split(".")[0] for p in (internal / "PySide6").glob("Qt*.pyd")
    }
    expect(qt_modules <= {"QtCore", "QtGui", "QtWidgets", "QtSvg"}, f"unwanted Qt modules: {sorted(qt_modules)}")
    expect({"QtCore", "QtGui", "QtWidgets"} <= qt_modules, f"Qt modules missing: {sorted(qt_modules)}")
    for unwanted in ("tiktoken", "tokenizers", "hypothesis", "pytest", "PyInstaller", "tkinter"):
        expect(not (internal / unwanted).exists(), f"{unwanted} is bundled")
    expect(not (internal / "PySide6" / "Qt" / "translations").exists(), "Qt's translations are bundled")
    size = sum(f.stat().st_size for f in app_dir.rglob("*") if f.is_file())
    expect(size < 400 << 20, f"{size >> 20} MB: something heavy slipped in")


def frozen_window_screenshot(app_dir: Path, home: Path) -> None:
    from PySide6.QtGui import QImage

    out = home / "shot.png"
    proc = subprocess.run(
        [str(app_dir / f"bpeinspect{EXE_SUFFIX}"), "--screenshot", str(out)],
        env=frozen_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=home,
    )
    expect(proc.returncode == 0, proc.stderr[-4000:])
    expect(out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    img = QImage(str(out))
    expect((img.width(), img.height()) == (1400, 860), f"screenshot of {img.width()}x{img.height()}")
    # the two default panes are drawn with their token colours, not a blank or error window
    colors = {img.pixel(x, y) for x in range(0, 1400, 7) for y in range(40, 600, 5)}
    expect(len(colors) > 40, f"only {len(colors)} colours: a blank or error window")
    expect("Traceback" not in proc.stderr, proc.stderr[-4000:])


def frozen_cli_encodes_like_the_package(app_dir: Path, home: Path) -> None:
    from bpeinspect.core import load_tokenizer

    text = "Frozen apps tokenize too: naïve café, 日本語, 👩‍💻 and <|endoftext|> as text.\n"
    proc = subprocess.run(
        [str(app_dir / f"bpeinspect-cli{EXE_SUFFIX}"), "encode", "-t", "cl100k_base"],
        input=text,
        env=frozen_env(home),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    expect(proc.returncode == 0, proc.stderr)
    ids = [int(x) for x in proc.stdout.split()]
    expect(ids == load_tokenizer("cl100k_base").encode_ordinary(text), "the frozen CLI encodes differently")


def frozen_cli_reads_every_format(app_dir: Path, home: Path) -> None:
    """numpy/gguf and the JSON loaders made it into the bundle."""
    vocabs = SHARED / "vocabs"
    expect((vocabs / "gpt2.gguf").is_file(), f"no shared test data in {SHARED} (BPEINSPECT_SHARED)")
    for spec in (vocabs / "gpt2.gguf", vocabs / "gpt2" / "tokenizer.json", vocabs / "gpt2", vocabs / "gpt2.tiktoken"):
        proc = subprocess.run(
            [str(app_dir / f"bpeinspect-cli{EXE_SUFFIX}"), "encode", "-t", str(spec)],
            input="hello world",
            env=frozen_env(home),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        expect(proc.returncode == 0, f"{spec}: {proc.stderr}")
        expect(proc.stdout.split() == ["31373", "995"], f"{spec}: {proc.stdout!r}")


CHECKS: tuple[Callable[[Path, Path], None], ...] = (
    layout_is_lean_and_has_the_resources,
    frozen_window_screenshot,
    frozen_cli_encodes_like_the_package,
    frozen_cli_reads_every_format,
)


def run(tmp: Path) -> int:
    try:
        app_dir = build(tmp)
    except CheckFailed as exc:
        print(f"FAIL build: {exc}")
        return 1
    print("ok   build")
    failed = 0
    for check in CHECKS:
        home = tmp / "home" / check.__name__
        home.mkdir(parents=True)
        try:
            check(app_dir, home)
        except CheckFailed as exc:
            failed += 1
            print(f"FAIL {check.__name__}: {exc}")
        else:
            print(f"ok   {check.__name__}")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, metavar="DIR", help="build into DIR and keep it")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        return run(args.keep.resolve())
    with tempfile.TemporaryDirectory(prefix="bpeinspect-frozen-") as tmp:
        return run(Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
