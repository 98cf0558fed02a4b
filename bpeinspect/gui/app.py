"""Start the desktop app: ``bpeinspect [-t SPEC]… [FILE]`` or ``bpeinspect --screenshot OUT.png``.

With no arguments the window opens the bundled multilingual sample with o200k_base, so there
is something real to look at straight away; "Add tokenizer" stacks others to compare.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time

from bpeinspect import __version__

DEFAULT_TOKENIZERS = ["o200k_base"]  # a calm first screen: one pane
SCREENSHOT_TIMEOUT = 120.0  # seconds
SWITCH_INTERVAL = 0.001  # seconds
M_MXFAST = 1  # glibc's mallopt() parameter: the largest freed block kept aside in a "fast bin"


def configure_process() -> None:
    """The process-wide settings the app needs (the only place that changes any)."""
    # A worker hands the interpreter back every 5 ms by default; with the GUI thread waiting
    # on it that is a visible hitch per hand-over, so ask for shorter turns.
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)
    from bpeinspect.core import allow_gc_freeze
    from bpeinspect.core.io import turn_on_load_cache

    turn_on_load_cache()  # a large file opened again comes from its built tables
    allow_gc_freeze()  # big encodings are frozen once built: later collections skip them
    merge_freed_blocks_at_once()


def merge_freed_blocks_at_once() -> bool:
    """Have glibc's allocator merge each freed block with its neighbours as it is freed, instead of
    keeping small ones aside ("fast bins") and merging them all in the next large allocation.
    Qt frees a small block per line when the lines' formats change (inline ids off in a 10 MB
    text: 445,000), and the merge that followed held the GUI thread for 25-80 ms. Whether it
    applies (glibc only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 (glibc, not another C library)
    except (OSError, AttributeError):
        return False
    return bool(libc.mallopt(M_MXFAST, 0))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bpeinspect", description="Inspect byte-level BPE tokenizers.")
    p.add_argument(
        "-t", "--tokenizer", action="append", default=[], metavar="SPEC", help="tokenizer to open (repeatable)"
    )
    p.add_argument("--screenshot", metavar="OUT.png", help="save a PNG of the window once every job is done, then exit")
    p.add_argument("--size", metavar="WxH", help="window size (default: as last time; 1400x860 for --screenshot)")
    p.add_argument("--version", action="version", version=f"bpeinspect {__version__}")
    p.add_argument("file", nargs="?", help="text file to open")
    return p.parse_args(argv)


def welcome_text() -> str:
    from bpeinspect.core.io import resources_dir

    try:
        return (resources_dir() / "samples" / "welcome.txt").read_text(encoding="utf-8")
    except OSError:
        return "Welcome to bpeinspect. Type here to see the tokens."


def build_window(args: argparse.Namespace):
    """The main window, opening the tokenizers and text that ``args`` name."""
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow()  # with the docked panels of bpeinspect.gui.panels.specs.PANELS
    size = args.size or ("1400x860" if args.screenshot else None)  # screenshots ignore the saved size
    try:
        if size:
            w, h = (int(v) for v in size.lower().split("x"))
            win.resize(w, h)
    except ValueError:
        win.show_error(f"--size {size!r} is not WIDTHxHEIGHT")
    for spec in args.tokenizer or DEFAULT_TOKENIZERS:
        win.open_tokenizer(spec)
    if args.file:
        win.open_text_file(args.file)
    else:
        win.set_text(welcome_text())
    return win


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    running = QApplication.instance()
    app = running if isinstance(running, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("bpeinspect")
    app.setOrganizationName("bpeinspect")
    from bpeinspect.gui.overlay.glyphs import load_bundled_fonts, prefer_noto

    load_bundled_fonts()  # the bundled Noto fonts, for scripts the system fonts lack
    app.setFont(prefer_noto(app.font()))  # installed Noto fonts before Qt's own fallback
    from bpeinspect.core.io import resources_dir

    icon = resources_dir() / "icons" / "bpeinspect.svg"
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    from bpeinspect.gui.concurrency import Worker, all_idle
    from bpeinspect.gui.window.files import save_png

    configure_process()
    from bpeinspect.core.chat import stop_all

    app.aboutToQuit.connect(stop_all)  # a chat template still rendering ends now, not at its time limit
    app.aboutToQuit.connect(Worker.shutdown)
    win = build_window(args)
    win.show()
    if args.screenshot:
        started = time.monotonic()
        state = {"idle_ticks": 0}

        def poll() -> None:
            idle = win.is_idle() and all_idle()
            state["idle_ticks"] = state["idle_ticks"] + 1 if idle else 0
            timed_out = time.monotonic() - started > SCREENSHOT_TIMEOUT
            if state["idle_ticks"] >= 3 or timed_out:
                timer.stop()
                if timed_out:
                    print("bpeinspect: jobs still running at the timeout; saving anyway", file=sys.stderr)
                app.processEvents()
                ok = True
                try:
                    save_png(win.grab(), args.screenshot)
                except OSError as exc:
                    ok = False
                    print(f"bpeinspect: could not write {args.screenshot}: {exc}", file=sys.stderr)
                app.exit(0 if ok else 1)

        timer = QTimer(win, interval=50)
        timer.timeout.connect(poll)
        timer.start()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
