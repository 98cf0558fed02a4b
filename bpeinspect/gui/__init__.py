"""bpeinspect's Qt face: views, item models and workers over :mod:`bpeinspect.core`."""

from bpeinspect.gui._pyside_fix import apply as _apply_pyside_fix

_apply_pyside_fix()
