/** Sizes and repetitions of one `npm run bench`, read from the environment. */
export interface BenchConfig {
  /** Repetitions of every measure; the tables show the median (`BENCH_RUNS`, default 3). */
  runs: number;
  /** Factor applied to every default size (from `BENCH_EVENTS`, default 1). */
  scale: number;
  /** Critical appends awaited one by one, per run and durability (default 2,000). */
  criticalEvents: number;
  /** Events per run of the batched rows (default 200,000; a multiple of 1,000). */
  batchedEvents: number;
  /** Events in the log that is folded (default 1,000,000; a multiple of 5,000). */
  replayEvents: number;
  /** Appends whose delivery to a subscriber is timed, per run (default 1,000). */
  latencyAppends: number;
}

const DEFAULT_REPLAY_EVENTS = 1_000_000;

/**
 * Reads `BENCH_RUNS` (an integer ≥ 1; 3 by default) and `BENCH_EVENTS`, which scales every size:
 * a number ≤ 1 is a factor (`0.1` runs a tenth of the defaults), a larger one is the number of
 * events of the replay row (`100000` also scales the other rows to a tenth).
 */
export function readConfig(env: Record<string, string | undefined> = process.env): BenchConfig {
  const runs = env.BENCH_RUNS ? Number(env.BENCH_RUNS) : 3;
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`BENCH_RUNS=${JSON.stringify(env.BENCH_RUNS)} must be an integer ≥ 1`);
  }
  const raw = env.BENCH_EVENTS ? Number(env.BENCH_EVENTS) : 1;
  if (!Number.isFinite(raw) || raw <= 0) {
    throw new Error(
      `BENCH_EVENTS=${JSON.stringify(env.BENCH_EVENTS)} must be a factor (0.1) or an event count (100000)`,
    );
  }
  const scale = raw <= 1 ? raw : raw / DEFAULT_REPLAY_EVENTS;
  const sized = (size: number, step: number, least: number) =>
    Math.max(least, Math.round((size * scale) / step) * step);
  return {
    runs,
    scale,
    criticalEvents: sized(2_000, 10, 100),
    batchedEvents: sized(200_000, 1_000, 5_000),
    replayEvents: sized(DEFAULT_REPLAY_EVENTS, 5_000, 10_000),
    latencyAppends: sized(1_000, 10, 100),
  };
}
