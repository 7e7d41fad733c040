/**
 * The long forms of the soaks. `npm test` runs every behaviour at light
 * counts and sizes so the default run stays short; `TWINLOCK_SOAK=1` (which
 * `.ci/run` sets, with the soak counts CRASH_ITERATIONS, CONCURRENCY_PAIRS,
 * MODEL_RUNS, PG_DECISIONS and ENTRY_FUZZ_RUNS) runs them whole: the 50 MB
 * generators, millions of events, every demo step as a process of its own.
 */
export const SOAK = process.env.TWINLOCK_SOAK === "1";

/**
 * A soak's count: the number in the environment variable `name` when it is
 * set, else `soak` under TWINLOCK_SOAK=1, else `light`.
 */
export function soakCount(name: string, light: number, soak: number): number {
  const given = process.env[name];
  if (given !== undefined && given !== "") return Number(given);
  return SOAK ? soak : light;
}
