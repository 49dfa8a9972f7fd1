/** An integer in [min, max] drawn from `random` (a seeded one replays a failing iteration from its seed). */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
