import sys

from bpeinspect.gui.app import main

sys.exit(main())
