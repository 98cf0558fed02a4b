"""bpeinspect's Qt face: views, item models and workers over :mod:`bpeinspect.core`."""
