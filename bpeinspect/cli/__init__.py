"""``bpeinspect-cli``: the core's work from a terminal, no window."""

from bpeinspect.cli.commands import main

__all__ = ["main"]
