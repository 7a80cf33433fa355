/**
 * A continuity's log as the agent loop writes it, made fast: the events of a thread's runs
 * (`turn.added`, `run.started`, per step `step.started`, `message.completed` with about 300 bytes
 * of text and a native tool call, `action.dispatched`, `action.succeeded`, `step.completed`,
 * `loop.decided`, then `run.completed`), generated in memory and written with `appendBatch` in
 * batches of 5,000. Each batch goes through the store's whole write path (catalog validation,
 * the hash chain, one SQLite transaction), so the log is exactly what a live run would leave,
 * only written without a model in between.
 */
import type { EventStore } from "../../src/log/index.js";
import type { AnyNewEvent } from "../../src/spec/index.js";
import { text } from "../workload.js";

/** The model every bench thread runs (not in the catalogue: characters ÷ 3.5 per token). */
export const BENCH_MODEL = "bench-scripted";
/** Events per `appendBatch` call while filling. */
export const FILL_BATCH = 5_000;
/** Characters of an assistant message's text: a `message.completed` of about 300 bytes of text. */
const MESSAGE_TEXT = 300;
/** Characters of a tool's output. */
const OUTPUT_TEXT = 200;

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A valid ULID made from `n`, in a time range (1970) no store clock gives. */
export function benchUlid(n: number): string {
  let out = "";
  for (let rest = n; out.length < 16; rest = Math.floor(rest / 32))
    out = CROCKFORD[rest % 32] + out;
  return `0000000000${out}`;
}

/** Writes a thread's runs: one `turn.added` and run per `turns` entry, `steps` tool steps each. */
export class ThreadWriter {
  readonly thread: string;
  readonly #continuity: string;
  #step = 0;
  #ids = 0;

  constructor(continuity: string, thread: string) {
    this.#continuity = continuity;
    this.thread = thread;
  }

  /** `thread.started`. */
  started(): AnyNewEvent {
    return {
      continuity: this.#continuity,
      stream: { kind: "thread", id: this.thread },
      type: "thread.started",
      data: { directive: "bench", chain_root: this.thread, model: BENCH_MODEL },
    };
  }

  /** `turn.added` and the `run.started` that takes it. */
  turn(n: number): AnyNewEvent[] {
    const id = benchUlid(n);
    return [
      {
        continuity: this.#continuity,
        type: "turn.added",
        id,
        actor: "bench",
        origin: "cli",
        data: { text: `turn ${n}: ${text(120, n)}` },
      },
      {
        continuity: this.#continuity,
        stream: { kind: "thread", id: this.thread },
        type: "run.started",
        data: {
          turn: id,
          resumed: false,
          directive: "bench",
          model: BENCH_MODEL,
          next_step: this.#step,
        },
      },
    ];
  }

  /**
   * One step's events: the model's message (text, and a native tool call unless `final`), the
   * call's action, and the loop's decision (`continue`, or `complete` for the final step).
   */
  step(final: boolean): AnyNewEvent[] {
    const index = this.#step++;
    const stepId = `${this.thread}:${index}`;
    const stream = { kind: "step" as const, id: stepId };
    const identity = {
      kind: "model" as const,
      thread: this.thread,
      index,
      provider: "bench",
      model: BENCH_MODEL,
    };
    const usage = {
      input_tokens: 4000,
      output_tokens: 120,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    };
    const call = `call_${this.thread}_${++this.#ids}`;
    const continuity = this.#continuity;
    const events: AnyNewEvent[] = [
      { continuity, stream, type: "step.started", data: identity },
      {
        continuity,
        stream,
        type: "message.completed",
        data: {
          format: "anthropic",
          provider: "bench",
          model: BENCH_MODEL,
          response_id: null,
          content: [
            { type: "text", text: text(MESSAGE_TEXT, index) },
            ...(final
              ? []
              : [
                  {
                    type: "tool-call" as const,
                    id: call,
                    name: "fs_read",
                    input: { path: `src/file-${index}.ts` },
                    input_text: `{"path":"src/file-${index}.ts"}`,
                  },
                ]),
          ],
          usage,
          stop_reason: final ? "end" : "tool-use",
          provider_stop_reason: null,
        },
      },
    ];
    if (!final) {
      events.push(
        {
          continuity,
          stream,
          type: "action.dispatched",
          data: {
            action_id: call,
            type: "tool",
            mode: "sync",
            name: "fs_read",
            parameters: { path: `src/file-${index}.ts` },
            depends_on: [],
            retry: 0,
            on_error: "fail",
            in_thought: false,
          },
        },
        {
          continuity,
          stream,
          type: "action.succeeded",
          data: {
            action_id: call,
            attempt: 1,
            output: text(OUTPUT_TEXT, index + 1),
            duration_ms: 2,
          },
        },
      );
    }
    events.push(
      {
        continuity,
        stream,
        type: "step.completed",
        data: { ...identity, usage, stop_reason: final ? "end" : "tool-use", duration_ms: 900 },
      },
      {
        continuity,
        stream: { kind: "thread", id: this.thread },
        type: "loop.decided",
        data: {
          step: stepId,
          decision: final ? "complete" : "continue",
          reason: final ? "final response" : "actions ran",
          results: final ? 0 : 1,
        },
      },
    );
    return events;
  }

  /** `run.completed` of a run of `steps` steps. */
  completed(steps: number): AnyNewEvent {
    return {
      continuity: this.#continuity,
      stream: { kind: "thread", id: this.thread },
      type: "run.completed",
      data: {
        status: "completed",
        steps,
        result: "done",
        usage: {
          input_tokens: 4000 * steps,
          output_tokens: 120 * steps,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
        cost_usd: 0,
      },
    };
  }

  /** A whole run: its turn, `toolSteps` steps with a tool call, a final step, its completion. */
  run(turn: number, toolSteps: number): AnyNewEvent[] {
    const events = this.turn(turn);
    for (let i = 0; i < toolSteps; i++) events.push(...this.step(false));
    events.push(...this.step(true), this.completed(toolSteps + 1));
    return events;
  }
}

/**
 * Fills `continuity` with `total` events of older threads (each a run of 4 tool steps, 33
 * events), in `appendBatch` calls of `FILL_BATCH`, generating each batch only when it is written.
 * Returns the events written (exactly `total`: the last thread is cut short).
 */
export async function fillOlderThreads(
  store: EventStore,
  continuity: string,
  total: number,
): Promise<number> {
  let written = 0;
  let threads = 0;
  let pending: AnyNewEvent[] = [];
  while (written + pending.length < total) {
    const writer = new ThreadWriter(continuity, `old${++threads}`);
    pending.push(writer.started(), ...writer.run(threads, 4));
    if (pending.length >= FILL_BATCH) {
      const batch = pending.slice(0, FILL_BATCH);
      pending = pending.slice(FILL_BATCH);
      await store.appendBatch(batch);
      written += batch.length;
    }
  }
  const last = pending.slice(0, total - written);
  if (last.length > 0) await store.appendBatch(last);
  return written + last.length;
}

/**
 * Appends the current thread: `thread.started`, two pinned items, then `runs` runs of
 * `toolSteps` tool steps (each run is a turn, 2 messages per tool step and a final answer).
 * Returns the seq of its `thread.started`.
 */
export async function writeCurrentThread(
  store: EventStore,
  writer: ThreadWriter,
  continuity: string,
  runs: number,
  toolSteps: number,
): Promise<number> {
  const pins: AnyNewEvent[] = [
    {
      continuity,
      type: "context.pinned",
      data: {
        id: "pin-tests",
        kind: "rule",
        text: "Run the tests before every commit.",
        by: "user",
      },
    },
    {
      continuity,
      type: "context.pinned",
      data: { id: "pin-repo", kind: "fact", text: "The repository is at /srv/app.", by: "user" },
    },
  ];
  const events: AnyNewEvent[] = [writer.started(), ...pins];
  for (let run = 0; run < runs; run++) events.push(...writer.run(1_000_000 + run, toolSteps));
  const [started] = await store.appendBatch(events);
  return started!.seq;
}
