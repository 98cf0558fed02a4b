"""PyInstaller entry point of the frozen ``bpeinspect`` window."""

import sys

from bpeinspect.gui.app import main

sys.exit(main())
