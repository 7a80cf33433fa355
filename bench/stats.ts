import { execFileSync } from "node:child_process";
/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The `p`-th percentile (0–100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Events per second for `events` handled in `ms` milliseconds. */
export function perSecond(events: number, ms: number): number {
  return (events * 1000) / ms;
}

/** Runs `work` and returns its result with the milliseconds it took (`performance.now()`). */
export async function timed<T>(work: () => T | Promise<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await work();
  return { result, ms: performance.now() - start };
}

/** p50 and p99 of one run's latencies, in milliseconds. */
export interface LatencySummary {
  p50: number;
  p99: number;
}

/** Summarizes one run's latencies (ms). */
export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/**
 * Writes every dirty page of the machine out (`sync`) before a measure, so that no measure pays
 * for the write-back of the one before it (a 200,000-row ceiling leaves tens of megabytes
 * behind). Where there is no `sync` to run, measures run as they are.
 */
export function settleDisk(): void {
  try {
    execFileSync("sync", { stdio: "ignore" });
  } catch {
    // no sync(1) here
  }
}
