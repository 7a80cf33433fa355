import type { ActionRequest } from "../protocol/index.js";
import type { ActionLogData, ActionLogType, RecordScope } from "./action-log.js";
import type { ActionExecutor } from "./executor.js";
import { toJsonValue } from "./json-value.js";
import type { LazyAbort } from "./lazy-abort.js";
import type { AttemptHost } from "./run-attempts.js";
import type { SerialQueue } from "./serial-queue.js";
import type { ActionErrorData, ActionOutcome } from "./step-outcome.js";

/** One event to record: its type and data. */
export type LogWrite = { [T in ActionLogType]: [T, ActionLogData<T>] }[ActionLogType];

/** How an entry records its events (the scheduler's writer, which also notifies observers). */
export type EntryWriter = (entry: ActionEntry, write: LogWrite) => Promise<boolean>;

/**
 * The scheduler's record of one submitted action: where it is in its life, and, while it runs,
 * the host its attempts report to. One object per action, with methods rather than closures:
 * dispatch latency is mostly allocation.
 */
export class ActionEntry implements AttemptHost {
  readonly request: ActionRequest;
  /** `sync` and `async` actions: the step waits for them and reports them. */
  readonly tracked: boolean;
  /**
   * How its events are recorded: on their own task stream (`fire_and_forget`), and `after` the
   * intent once a pure call runs ahead of it.
   */
  scope: RecordScope | undefined;
  readonly submittedAt: number;
  state: "waiting" | "dispatching" | "running" = "waiting";
  /** Set when the log refused `action.dispatched`: nothing after it can be written. */
  intentRefused = false;
  /** Set once, when the terminal event is written. */
  finished = false;
  /** True once the terminal events are in the log's queue, in order (durable, for a log without `queued`). */
  closed = false;
  outcome: ActionOutcome | undefined;
  attempts = 0;
  startedAt: number | undefined;
  interrupt: (() => void) | undefined;
  // What the attempts need, set when the action starts running.
  executor!: ActionExecutor;
  parameters!: Record<string, unknown>;
  maxAttempts = 1;
  timeoutMs: number | undefined;
  serial: SerialQueue | undefined;
  controller!: LazyAbort;
  readonly #write: EntryWriter;
  readonly #now: () => number;
  #done: { promise: Promise<void>; resolve(): void } | undefined;

  constructor(request: ActionRequest, now: () => number, write: EntryWriter) {
    this.request = request;
    this.tracked = request.mode !== "fire_and_forget";
    this.scope = this.tracked ? undefined : { task: request.id };
    this.#now = now;
    this.submittedAt = now();
    this.#write = write;
  }

  get actionId(): string {
    return this.request.id;
  }

  /** Resolves once the terminal events are in the log's queue, in order (made only when someone waits). */
  get done(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.#done) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => {
        resolve = settle;
      });
      this.#done = { promise, resolve };
    }
    return this.#done.promise;
  }

  /** Marks the terminal events queued and wakes whoever waits on `done`. */
  close(): void {
    this.closed = true;
    this.#done?.resolve();
  }

  write(write: LogWrite): Promise<boolean> {
    return this.#write(this, write);
  }

  attemptStarted(attempt: number): void {
    this.attempts = attempt;
    this.startedAt ??= this.#now();
    void this.write(["action.started", { action_id: this.request.id, attempt }]);
  }

  attemptProgress(attempt: number, data: unknown): void {
    if (this.finished) return;
    const progress = { action_id: this.request.id, attempt, data: toJsonValue(data) };
    void this.write(["action.progress", progress]);
  }

  attemptTimedOut(attempt: number, durationMs: number, timeoutMs: number): void {
    void this.write([
      "action.timed-out",
      {
        action_id: this.request.id,
        attempt,
        timeout_ms: timeoutMs,
        duration_ms: durationMs,
        will_retry: true,
      },
    ]);
  }

  attemptRetrying(
    attempt: number,
    error: ActionErrorData,
    delayMs: number,
    durationMs: number,
  ): void {
    void this.write([
      "action.retrying",
      { action_id: this.request.id, attempt, error, delay_ms: delayMs, duration_ms: durationMs },
    ]);
  }
}
