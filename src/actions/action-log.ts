import type { EventType, NewEventOf } from "../spec/index.js";

/**
 * The event types the scheduler and its executors write: the action lifecycle, protocol errors of
 * the step's output, and the state changes internal actions make (variables, context feeds).
 */
export type ActionLogType = Extract<
  EventType,
  `action.${string}` | "protocol.error" | `variable.${string}` | `feed.${string}`
>;

/** The `data` a caller gives for an event of type `T` (checked against the catalog on record). */
export type ActionLogData<T extends ActionLogType> = NewEventOf<T>["data"];

/**
 * Where an event belongs besides its step. `task` names the action whose own task stream takes
 * its lifecycle events: the scheduler passes it for `fire_and_forget` actions, which outlive the
 * step. Only `action.*` events follow it; state changes stay on the step's stream.
 */
export interface RecordScope {
  task?: string;
  /**
   * A promise `record` returned for an earlier event of this log that this one must never stand
   * in the log without: it is written only if that one was (before it or in its transaction), and
   * fails with it. A pure call started before its intent was written records its events so.
   */
  after?: Promise<void>;
  /**
   * Nothing waits for this event's write: an intent a pure call runs ahead of. The store writes
   * it with what follows (`AppendBatchOptions.unhurried`) instead of starting a commit for it.
   */
  unhurried?: boolean;
}

/** One recorded event, as an in-memory log keeps it and as subscribers see it. */
export type ActionLogEntry = {
  [T in ActionLogType]: { type: T; data: ActionLogData<T>; task?: string };
}[ActionLogType];

/**
 * The sink for everything a step's actions do.
 *
 * Contract: `record` validates `data` against the event catalog (a bad event rejects with
 * `EventValidationError` and nothing is written) and resolves once the event is durable for
 * critical types (for droppable ones, once written or batched). Events are written in the order
 * `record` was called, so a caller may start the next record without awaiting the previous one.
 * It never resolves before the event is in the log: `action.dispatched` awaited means the intent
 * is on disk before the executor runs.
 */
export interface ActionLog {
  record<T extends ActionLogType>(
    type: T,
    data: ActionLogData<T>,
    scope?: RecordScope,
  ): Promise<void>;
  /**
   * Resolves once every event recorded so far is in the store's queue, in record order, and a
   * refused one has rejected its `record`: whatever is appended to the same store after this
   * resolves is written after them (in their commit or a later one), and fails with them. The
   * scheduler ends an action on it rather than on durability, so an action's terminal events
   * share the step's next commit instead of taking one of their own. Without it (a log whose
   * order is not the store's), the scheduler waits for `record` itself.
   */
  queued?(): Promise<void>;
  /**
   * True when a pure call (`CheckedActionExecutor.pure`) may start while its intent is still
   * being written. Only a log whose durability guards against a killed process alone (`fast`)
   * says so: a pure call changes nothing a kill could make happen twice. The call's own events
   * are recorded `after` its intent, so none of them is written if the intent is not.
   */
  readonly pureStartsEarly?: boolean;
}
