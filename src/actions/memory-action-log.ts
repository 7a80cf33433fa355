import { prepareEvent } from "../spec/index.js";
import type {
  ActionLog,
  ActionLogData,
  ActionLogEntry,
  ActionLogType,
  RecordScope,
} from "./action-log.js";

/** Options of `createMemoryActionLog`. */
export interface MemoryActionLogOptions {
  /** Check every event against the catalog as the SQLite log would (default true). */
  validate?: boolean;
  /**
   * Called for each event before `record` resolves; `record` resolves when it does. Tests use it
   * to hold an event "not yet durable" and watch what waits for it.
   */
  durable?: (entry: ActionLogEntry) => Promise<void> | void;
}

/** An `ActionLog` kept in memory: for tests, replays and the dispatch benchmark. */
export interface MemoryActionLog extends ActionLog {
  /** Everything recorded so far, in record order. */
  readonly entries: readonly ActionLogEntry[];
  /** The entries of one type, in order. */
  ofType<T extends ActionLogType>(type: T): Extract<ActionLogEntry, { type: T }>[];
  /** Calls `listener` for every later entry, synchronously inside `record`. Returns unsubscribe. */
  subscribe(listener: (entry: ActionLogEntry) => void): () => void;
}

const STEP = { kind: "step" as const, id: "memory" };
const TASK = { kind: "task" as const, id: "memory" };
const DEFAULTS = { now: () => new Date(0).toISOString(), newId: () => "" };

/**
 * A log in an array. Contract: validates like a store (unless `validate: false`), appends before
 * resolving, and resolves in record order; it never loses or reorders an entry. A record `after`
 * another is added once that one is durable (so after it), and is refused if that one fails.
 */
export function createMemoryActionLog(options: MemoryActionLogOptions = {}): MemoryActionLog {
  const entries: ActionLogEntry[] = [];
  const listeners = new Set<(entry: ActionLogEntry) => void>();
  const validate = options.validate ?? true;
  return {
    entries,
    record<T extends ActionLogType>(type: T, data: ActionLogData<T>, scope?: RecordScope) {
      const task = scope?.task !== undefined && type.startsWith("action.") ? scope.task : undefined;
      try {
        if (validate)
          prepareEvent(
            { continuity: "memory", type, data, stream: task === undefined ? STEP : TASK },
            DEFAULTS,
          );
      } catch (error) {
        return Promise.reject(error);
      }
      const entry = (task === undefined ? { type, data } : { type, data, task }) as ActionLogEntry;
      const add = () => {
        entries.push(entry);
        for (const listener of listeners) listener(entry);
        const waited = options.durable?.(entry);
        return waited === undefined
          ? Promise.resolve()
          : Promise.resolve(waited).then(() => undefined);
      };
      // Kept back until what it follows is durable, and never added when that fails.
      const after = scope?.after;
      return after === undefined ? add() : after.then(add);
    },
    ofType<T extends ActionLogType>(type: T) {
      return entries.filter((entry) => entry.type === type) as Extract<
        ActionLogEntry,
        { type: T }
      >[];
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
