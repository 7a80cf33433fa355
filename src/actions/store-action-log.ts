import { createHash } from "node:crypto";
import { type EventStore, effectsMayLead } from "../log/index.js";
import type { AnyNewEvent, StreamRef } from "../spec/index.js";
import type { ActionLog, ActionLogData, ActionLogType, RecordScope } from "./action-log.js";

/** Options of `createStoreActionLog`. */
export interface StoreActionLogOptions {
  store: EventStore;
  continuity: string;
  /** The step's id: its events go to the stream `{ kind: "step", id: step }`. */
  step: string;
}

const IDENTIFIER_MAX = 128;

/**
 * The task stream id of action `actionId` of step `step`: `<step>:<action>`, or, when that would
 * pass 128 characters, `<step>:` and the first 32 hex digits of the action id's sha256.
 * Deterministic, so a replay finds the same stream.
 */
export function taskStreamId(step: string, actionId: string): string {
  const plain = `${step}:${actionId}`;
  if (plain.length <= IDENTIFIER_MAX) return plain;
  const digest = createHash("sha256").update(actionId).digest("hex").slice(0, 32);
  return `${step.slice(0, IDENTIFIER_MAX - 33)}:${digest}`;
}

/**
 * An `ActionLog` over an `EventStore`. Every event goes to the step's stream, except the
 * `action.*` events of a `fire_and_forget` action (recorded with `scope.task`), which go to that
 * action's own task stream (`taskStreamId`): such an action outlives its step, and its stream
 * holds its whole lifecycle from `action.dispatched` on.
 *
 * Contract: `record` resolves when the store's `append` resolves, so a critical event is durable
 * (as the store's `durability` defines it) before anyone acts on it; order is record order.
 * `queued` resolves once the records so far are in the store's queue, so what is appended next
 * is written after them. A `fast` store lets pure calls start while their intent is written
 * (`pureStartsEarly`); a `strict` one, or one without durability (replay's), does not.
 * Records are handed to the store in a microtask, in record order: a store's `append` does real
 * work synchronously (validation, ids), and `action.started` is recorded just before an executor
 * is called, so that work must not sit between the two. Give the scheduler and the internal
 * executor of one step the same instance, so their events share that order.
 */
export function createStoreActionLog(options: StoreActionLogOptions): ActionLog {
  const { store, continuity } = options;
  const step: StreamRef = { kind: "step", id: options.step };
  let queued: Queued[] = [];
  /** Each record's entry, for a later record `after` it (its store append, once handed). */
  const records = new WeakMap<Promise<void>, Queued>();
  /** Settles once the records queued now are handed to the store (see `ActionLog.queued`). */
  let handing: { promise: Promise<void>; resolve(): void } | undefined;
  const flush = () => {
    const batch = queued;
    const handed = handing;
    queued = [];
    handing = undefined;
    for (const record of batch) {
      try {
        const before = record.after && records.get(record.after);
        if (before && before.stored === undefined) {
          throw new Error(`${record.event.type} follows an event the store never took`);
        }
        record.stored = before
          ? store.appendBatch([record.event], { after: [before.stored!] })
          : record.unhurried
            ? store.appendBatch([record.event], { unhurried: true })
            : store.append(record.event);
        record.stored.then(() => record.resolve(), record.reject);
      } catch (error) {
        record.reject(error);
      }
    }
    // A microtask later: an append the store refused at once has rejected its record by then.
    if (handed) queueMicrotask(handed.resolve);
  };
  return {
    pureStartsEarly: effectsMayLead(store),
    queued() {
      return handing?.promise ?? Promise.resolve();
    },
    record<T extends ActionLogType>(type: T, data: ActionLogData<T>, scope?: RecordScope) {
      const stream: StreamRef =
        scope?.task !== undefined && type.startsWith("action.")
          ? { kind: "task", id: taskStreamId(options.step, scope.task) }
          : step;
      const event = { continuity, type, data, stream } as AnyNewEvent;
      let record!: Queued;
      const recorded = new Promise<void>((resolve, reject) => {
        if (queued.length === 0) {
          queueMicrotask(flush);
          let handed!: () => void;
          const promise = new Promise<void>((settle) => {
            handed = settle;
          });
          handing = { promise, resolve: handed };
        }
        record = {
          event,
          resolve,
          reject,
          after: scope?.after,
          unhurried: scope?.unhurried === true,
          stored: undefined,
        };
        queued.push(record);
      });
      records.set(recorded, record);
      return recorded;
    },
  };
}

/** A record waiting for its microtask, and then its append. */
interface Queued {
  event: AnyNewEvent;
  resolve(): void;
  reject(error: unknown): void;
  after: Promise<void> | undefined;
  unhurried: boolean;
  stored: Promise<unknown> | undefined;
}
