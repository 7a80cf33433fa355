/**
 * Shared builders for the `actions-*` tests: action requests, executors a test settles by hand,
 * and a scheduler on an in-memory log.
 */

import {
  type ActionCall,
  type CheckedActionExecutor,
  createMemoryActionLog,
  createStepScheduler,
  createVariableStore,
  type MemoryActionLog,
  OrderedQueue,
  type SchedulerClock,
  type StepOutputEvent,
  type StepScheduler,
  type StepSchedulerOptions,
  type VariableStore,
} from "../../src/actions/index.js";
import type { ActionRequest, ActionType } from "../../src/protocol/action-request.js";

const AT = { offset: 0, line: 1, column: 1 };

/** An `async` tool action `id` calling `echo`, with `overrides`. */
export function action(id: string, overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    id,
    type: "tool",
    mode: "async",
    name: "echo",
    parameters: {},
    dependsOn: [],
    retry: 0,
    onError: "fail",
    inThought: false,
    span: { start: AT, end: AT },
    ...overrides,
  };
}

/** One call an executor received, with the means to end it. */
export interface PendingCall {
  call: ActionCall;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** An executor whose calls wait until the test resolves or rejects them. */
export interface HandExecutor {
  executor: CheckedActionExecutor;
  calls: PendingCall[];
  /** The latest call for action `id` (throws when there is none). */
  last(id: string): PendingCall;
  /** Ids called, in call order (one per attempt). */
  called(): string[];
  /** Resolves with the call for `id` as soon as the executor receives it. */
  arrival(id: string): Promise<PendingCall>;
}

/** A `HandExecutor` for `type`; `names` (when given) are the only names it can run. */
export function handExecutor(type: ActionType = "tool", names?: string[]): HandExecutor {
  const calls: PendingCall[] = [];
  const waiting: Array<{ id: string; resolve(pending: PendingCall): void }> = [];
  const executor: CheckedActionExecutor = {
    type,
    ...(names ? { canRun: (name: string) => names.includes(name), names: () => names } : {}),
    execute: (call) =>
      new Promise((resolve, reject) => {
        const pending = { call, resolve, reject };
        calls.push(pending);
        for (const waiter of waiting.filter((w) => w.id === call.actionId)) waiter.resolve(pending);
      }),
  };
  return {
    executor,
    calls,
    last(id) {
      const found = calls.filter((pending) => pending.call.actionId === id).at(-1);
      if (!found)
        throw new Error(
          `no call for ${id}; called: ${calls.map((c) => c.call.actionId).join(", ")}`,
        );
      return found;
    },
    called: () => calls.map((pending) => pending.call.actionId),
    arrival(id) {
      const found = calls.find((pending) => pending.call.actionId === id);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiting.push({ id, resolve }));
    },
  };
}

/** Lets every pending promise chain run (no timers involved). */
export async function drain(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

/** A scheduler over an in-memory log and a fresh variable store. */
export function setup(
  executors: CheckedActionExecutor[],
  options: Partial<StepSchedulerOptions> = {},
): { scheduler: StepScheduler; log: MemoryActionLog; variables: VariableStore } {
  const log = createMemoryActionLog();
  const variables = options.variables ?? createVariableStore();
  const scheduler = createStepScheduler({ log, executors, variables, random: () => 0, ...options });
  return { scheduler, log, variables };
}

/** `type` and `action_id` of every action event, for order assertions. */
export function lifecycle(log: MemoryActionLog): string[] {
  return log.entries
    .filter((entry) => entry.type.startsWith("action."))
    .map((entry) => `${entry.type.slice(7)} ${(entry.data as { action_id: string }).action_id}`);
}

/** Model output the test feeds chunk by chunk: `push` a chunk, `close` to end it. */
export function manualOutput(): AsyncIterable<string> & {
  push(chunk: string): void;
  close(): void;
  fail(error: Error): void;
} {
  const queue = new OrderedQueue<string>();
  let failure: Error | undefined;
  return {
    push: (chunk) => queue.push(chunk),
    close: () => queue.close(),
    fail(error) {
      failure = error;
      queue.close();
    },
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        const next = await queue.next();
        if (next.done && failure) throw failure;
        return next;
      },
    }),
  };
}

/** Output split into chunks of `size` characters. */
export async function* chunked(text: string, size: number): AsyncIterable<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

/** Pulls a step's events in the background; `events` grows as they arrive. */
export function consume(run: AsyncIterable<StepOutputEvent>) {
  const events: StepOutputEvent[] = [];
  const done = (async () => {
    for await (const event of run) events.push(event);
  })();
  return {
    events,
    done,
    /** Text of the block deltas of `kind` so far. */
    text(kind: string): string {
      return events
        .filter((e) => e.type === "block-delta" && e.kind === kind)
        .map((e) => (e as { text: string }).text)
        .join("");
    },
    /** Short names of the events so far (`action-event` as its log type). */
    kinds(): string[] {
      return events.map((e) => (e.type === "action-event" ? e.entry.type : e.type));
    },
  };
}

/** The body of an `<action>` tag. */
export function act(
  id: string,
  mode: string,
  body: Record<string, unknown>,
  type = "tool",
): string {
  return `<action type="${type}" mode="${mode}" id="${id}">${JSON.stringify(body)}</action>`;
}

/** A scheduler clock a test drives: timers fire only in `advanceAll`, in time order. */
export interface ManualClock extends SchedulerClock {
  /** Fires every timer, earliest first (moving `now` to each), letting promises run between. */
  advanceAll(): Promise<void>;
  /** Timers set and not yet fired or cancelled. */
  pending(): number;
}

/** A `ManualClock` starting at 0. Ties fire in the order the timers were set. */
export function manualClock(): ManualClock {
  let now = 0;
  let order = 0;
  const timers: Array<{ at: number; order: number; callback(): void }> = [];
  return {
    now: () => now,
    setTimer(ms, callback) {
      const timer = { at: now + ms, order: order++, callback };
      timers.push(timer);
      return () => {
        const at = timers.indexOf(timer);
        if (at !== -1) timers.splice(at, 1);
      };
    },
    async advanceAll() {
      await drain();
      while (timers.length > 0) {
        timers.sort((a, b) => a.at - b.at || a.order - b.order);
        const next = timers.shift()!;
        now = Math.max(now, next.at);
        next.callback();
        await drain();
      }
    },
    pending: () => timers.length,
  };
}
