// Simulate a season at the mill: how much flour each day's wind or water grinds.

class Mill {
  constructor(hasWheel = false, sails = 4) {
    this.hasWheel = hasWheel;
    this.sails = sails;
    this.flour = 0.0;
  }

  // Kilograms of flour ground on one day.
  grind(day) {
    let power = 0.0;
    if (day.wind > 3.0) {
      for (let i = 0; i < this.sails; i++) {
        if (day.wind < 12.0) {
          power += day.wind * 1.5;
        } else {
          // storms: the miller furls the sails
          power += 12.0;
        }
      }
    }
    if (this.hasWheel) {
      if (day.river > 0.5) {
        power += day.river * 20.0;
      }
    }
    this.flour += power;
    return power;
  }
}

function season(days, hasWheel) {
  const mill = new Mill(hasWheel);
  let idle = 0;
  for (const day of days) {
    if (mill.grind(day) === 0.0) {
      idle += 1;
    }
  }
  return { flour: Math.round(mill.flour * 10) / 10, idleDays: idle };
}

const autumn = [8.0, 5.5, 0.0, 0.0, 1.0, 0.0, 14.0].map((w) => ({ wind: w, river: 2.0 }));
for (const wheel of [false, true]) {
  console.log(wheel ? "with wheel" : "wind only", season(autumn, wheel));
}
