import type { EventStore, LogBackend, LogStoreOptions } from "../../src/log/index.js";

/** What each adapter's test file provides so the same contract runs against it. */
export interface StoreHarness {
  /** A `--db` value naming this test's store (a directory or a postgres:// URL). */
  location: string;
  /** Opens a new connection to the store (several may be open at once). */
  open(options?: LogStoreOptions): Promise<EventStore>;
  /** Opens the storage engine itself, below the store (its `write` as the store calls it). */
  openBackend(): Promise<LogBackend>;
  /** Overwrites one stored event's data column behind the store's back. */
  tamper(seq: number, dataJson: string): Promise<void>;
  /** Removes the newest event behind the store's back (and leaves the head record alone). */
  dropLast(): Promise<void>;
  cleanup(): Promise<void>;
}

/** Makes a fresh, empty store for one test. */
export type HarnessFactory = () => Promise<StoreHarness>;
