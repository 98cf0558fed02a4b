"""PyInstaller entry point of the frozen ``bpeinspect-cli``."""

import sys

from bpeinspect.cli import main

sys.exit(main())
