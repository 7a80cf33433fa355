import type { Durability } from "../src/log/index.js";

/**
 * One storage engine as the bench sees it: where to put a fresh Spool log, and the engine's own
 * ceilings, measured with its driver alone (no Spool code) on rows shaped like Spool's.
 */
export interface Engine {
  readonly kind: "sqlite" | "postgres";
  /** How the ceilings are taken, one line each, printed under the table. */
  readonly notes: readonly string[];
  /** The engine and driver versions, for the table's header. */
  describe(): Promise<string>;
  /** Where a new, empty Spool log can be opened: a directory (SQLite) or a URL (PostgreSQL). */
  freshLocation(label: string): Promise<string>;
  /** Events/s of `n` single-row INSERTs, each its own transaction, at `durability`'s sync level. */
  singleInserts(n: number, durability: Durability): Promise<number>;
  /** Events/s of `n` rows inserted by multi-row statements, 1,000 rows per transaction. */
  batchInserts(n: number, durability: Durability): Promise<number>;
  /**
   * Events/s of a raw scan of the Spool log at `location`: every row read, its data parsed with
   * JSON.parse and counted as the replay projection counts it. Checks that `expected` rows came.
   */
  scan(location: string, expected: number): Promise<number>;
  /**
   * Latencies (ms) of `n` raw round trips: one connection commits a row, another learns of it and
   * reads it back, each awaited before the next.
   */
  roundTrips(n: number, durability: Durability): Promise<number[]>;
  /** Removes what the engine made (temporary files, a server). Idempotent. */
  close(): Promise<void>;
}
