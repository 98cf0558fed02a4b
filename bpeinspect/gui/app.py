"""Start the desktop app: ``bpeinspect [-t SPEC]… [FILE]`` or ``bpeinspect --screenshot OUT.png``."""

from __future__ import annotations

import argparse
import sys

from bpeinspect import __version__


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bpeinspect", description="Inspect byte-level BPE tokenizers.")
    p.add_argument("-t", "--tokenizer", action="append", default=[], metavar="SPEC", help="tokenizer to open")
    p.add_argument("--screenshot", metavar="OUT.png", help="save a PNG of the window once idle, then exit")
    p.add_argument("--version", action="version", version=f"bpeinspect {__version__}")
    p.add_argument("file", nargs="?", help="text file to open")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = QMainWindow()
    win.setWindowTitle("bpeinspect")
    label = QLabel("bpeinspect — coming soon")
    win.setCentralWidget(label)
    win.resize(900, 600)
    win.show()
    if args.screenshot:
        def shoot() -> None:
            ok = win.grab().save(args.screenshot)
            app.exit(0 if ok else 1)

        QTimer.singleShot(200, shoot)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
