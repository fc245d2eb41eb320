/**
 * How many runs a property test makes. `FUZZ_RUNS` (read through
 * `globalThis.process`, which Node and Deno 2 both provide) raises the run
 * count for long fuzzing sessions (`npm run fuzz` sets it to 20,000): a cheap
 * property makes `FUZZ_RUNS` runs, one that costs `cost` times more per run
 * makes `FUZZ_RUNS / cost`, and none ever makes fewer than its default `base`
 * runs, which keep each test file well under 20 s per runtime.
 *
 * @module
 */

function configured(): number | null {
  let raw: string | undefined;
  try {
    raw = globalThis.process?.env?.FUZZ_RUNS;
  } catch {
    return null; // Deno without --allow-env: keep the defaults.
  }
  if (raw === undefined || raw.trim() === "") return null;
  const value = Number(raw);
  return Number.isInteger(value) && value > 0 ? value : null;
}

/** The `numRuns` for a property with `base` default runs and relative `cost` (≥ 1). */
export function fuzzRuns(base: number, cost = 1): number {
  const runs = configured();
  return runs === null ? base : Math.max(base, Math.floor(runs / cost));
}
