/** A source of uniform numbers in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: a small, fast 32-bit PRNG. One stream, seeded once, drives every random choice
 * of the sandbox so that `--seed N` replays the same faults for the same requests.
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed for runs without `--seed`; reported on the handle so the run can be replayed. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 32);
}
