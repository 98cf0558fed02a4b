"""Simulate a season at the mill: how much flour each day's wind or water grinds."""

from dataclasses import dataclass


@dataclass
class Day:
    wind: float  # metres per second
    river: float  # cubic metres per second


class Mill:
    def __init__(self, has_wheel: bool = False, sails: int = 4) -> None:
        self.has_wheel = has_wheel
        self.sails = sails
        self.flour = 0.0

    def grind(self, day: Day) -> float:
        """Kilograms of flour ground on one day."""
        power = 0.0
        if day.wind > 3.0:
            for _ in range(self.sails):
                if day.wind < 12.0:
                    power += day.wind * 1.5
                else:
                    # storms: the miller furls the sails
                    power += 12.0
        if self.has_wheel:
            if day.river > 0.5:
                power += day.river * 20.0
        self.flour += power
        return power


def season(days: list[Day], has_wheel: bool) -> dict[str, float]:
    mill = Mill(has_wheel=has_wheel)
    idle = 0
    for day in days:
        if mill.grind(day) == 0.0:
            idle += 1
    return {"flour": round(mill.flour, 1), "idle_days": idle}


if __name__ == "__main__":
    autumn = [Day(wind=w, river=2.0) for w in (8.0, 5.5, 0.0, 0.0, 1.0, 0.0, 14.0)]
    for wheel in (False, True):
        result = season(autumn, has_wheel=wheel)
        print("with wheel" if wheel else "wind only", result)
