import sys

from bpeinspect.cli import main

sys.exit(main())
