import type { EventStore } from "../log/index.js";
import type { ProviderFormat, StreamPart } from "../providers/index.js";
import { MessageAssembler, toMessageData, toProviderErrorData } from "../providers/index.js";
import type { NewEvent, NewEventOf, StreamRef } from "../spec/index.js";
import type { StreamSink } from "./sink.js";

/** Options of `createLogSink`. */
export interface LogSinkOptions {
  store: EventStore;
  continuity: string;
  /** The step's stream id (`stepStreamId(thread, n)`). */
  step: string;
  /** The provider's configured name, stored in `message.completed`. */
  provider: string;
  format: ProviderFormat;
  /** The sink's name in reports (default `log`). */
  name?: string;
}

/**
 * The sink that writes a step's stream into the log, on the step's stream:
 * - `text`, `reasoning`, `tool-call-delta`, `refusal` → `token.delta` (droppable) with the block
 *   named `text:<n>`, `reasoning:<n>`, `tool:<n>`, `refusal:<n>`; empty deltas are skipped. Deltas
 *   of one block that arrive in the same turn of the event loop (one network read) are appended
 *   as one event whose `deltas` keeps each delta's length; the store then coalesces adjacent ones
 *   for up to 50 ms. Appends are not awaited one by one. `flush()` appends what is buffered now:
 *   whoever appends other events of the step calls it first, so the log keeps stream order.
 * - `retry` → `provider.retrying` (critical); `stop` → `message.completed` (critical) with the
 *   message assembled from every part; `error` → `message.partial` (droppable, only when content
 *   had arrived) and `message.failed` (critical), in one batch. `write` returns the promise of
 *   these critical appends, so a fan-out waits until they are durable.
 *
 * A rejected append fails the sink: the next `write` throws it, and so does `close`, which waits
 * for every append made.
 */
export function createLogSink(options: LogSinkOptions): LogStreamSink {
  return new LogSink(options);
}

type StepEventType =
  | "provider.retrying"
  | "message.completed"
  | "message.partial"
  | "message.failed";

/** At most this many deltas wait in the buffer before they are appended. */
const MAX_BUFFERED_DELTAS = 4096;

const BLOCK_PREFIXES = ["text", "reasoning", "tool", "refusal"] as const;

/** The log sink: a `StreamSink` whose buffered deltas can be appended on demand. */
export interface LogStreamSink extends StreamSink {
  /** Appends the buffered deltas now (before appending other events of the step). */
  flush(): void;
  close(): Promise<void>;
  /**
   * The append of the step's `message.completed`, once the stream has stopped: the sink does not
   * wait for it to be durable (nor does its `close`), so the step's end can share its commit;
   * whatever must never stand in the log without it is appended `after` it.
   */
  completed(): Promise<unknown> | undefined;
}

class LogSink implements LogStreamSink {
  readonly name: string;
  readonly #store: EventStore;
  readonly #continuity: string;
  readonly #provider: string;
  readonly #stream: StreamRef;
  readonly #assembler: MessageAssembler;
  /** Block names by prefix and block number, made once: `text:0`, `tool:2`, … */
  readonly #names: string[][] = [[], [], [], []];
  #pending: Promise<unknown>[] = [];
  /** Deltas of one block waiting for the end of this turn of the event loop. */
  #bufferBlock: string | undefined;
  #bufferTexts: string[] = [];
  #timer: NodeJS.Immediate | undefined;
  #completed: Promise<unknown> | undefined;
  #failure: unknown;
  #failed = false;
  readonly #onReject = (error: unknown): void => {
    if (!this.#failed) {
      this.#failed = true;
      this.#failure = error;
    }
  };

  constructor(options: LogSinkOptions) {
    this.name = options.name ?? "log";
    this.#store = options.store;
    this.#continuity = options.continuity;
    this.#provider = options.provider;
    this.#stream = { kind: "step", id: options.step };
    this.#assembler = new MessageAssembler(options.format);
  }

  write(part: StreamPart): void | Promise<void> {
    if (this.#failed) throw this.#failure;
    this.#assembler.push(part);
    switch (part.type) {
      case "text":
        return this.#delta(0, part.block, part.text);
      case "reasoning":
        return this.#delta(1, part.block, part.text);
      case "tool-call-delta":
        return this.#delta(2, part.block, part.inputText);
      case "refusal":
        return this.#delta(3, part.block, part.text);
      case "retry":
        this.flush();
        return this.#critical([
          this.#event("provider.retrying", {
            attempt: part.attempt,
            delay_ms: part.delayMs,
            error: toProviderErrorData(part.error),
          }),
        ]);
      case "stop": {
        this.flush();
        const completed = this.#store.appendBatch([
          this.#event(
            "message.completed",
            toMessageData(this.#assembler.message(), this.#provider),
          ),
        ]);
        // Its failure surfaces through what is appended after it (see `completed`).
        completed.catch(() => undefined);
        this.#completed = completed;
        return;
      }
      case "error": {
        this.flush();
        const message = this.#assembler.message();
        const error = toProviderErrorData(part.error);
        const partial = message.content.length > 0;
        const events: NewEvent[] = [];
        if (partial) {
          events.push(
            this.#event("message.partial", { ...toMessageData(message, this.#provider), error }),
          );
        }
        events.push(this.#event("message.failed", { error, partial }));
        return this.#critical(events);
      }
      default:
        return;
    }
  }

  /**
   * Appends the deltas buffered in this turn of the event loop now. Call it before appending any
   * other event of the step, so the log keeps the stream's order (the sink does so itself before
   * its own critical events).
   */
  flush(): void {
    if (this.#timer !== undefined) {
      clearImmediate(this.#timer);
      this.#timer = undefined;
    }
    if (this.#bufferBlock === undefined) return;
    const texts = this.#bufferTexts;
    const data =
      texts.length === 1
        ? { block: this.#bufferBlock, text: texts[0]! }
        : {
            block: this.#bufferBlock,
            text: texts.join(""),
            deltas: texts.map((text) => text.length),
          };
    this.#bufferBlock = undefined;
    this.#bufferTexts = [];
    const append = this.#store.append({
      continuity: this.#continuity,
      type: "token.delta",
      stream: this.#stream,
      data,
    });
    this.#pending.push(append.then(undefined, this.#onReject));
  }

  completed(): Promise<unknown> | undefined {
    return this.#completed;
  }

  async close(): Promise<void> {
    this.flush();
    // After a stop, the deltas are written before or with `message.completed`: the step's end
    // follows that (`completed`), not their durability. Without one, wait for them as before.
    const pending = this.#pending;
    this.#pending = [];
    if (this.#completed === undefined) await Promise.all(pending);
    if (this.#failed) throw this.#failure;
  }

  // The hot path: deltas of one block arriving in one turn of the event loop (one network read)
  // become one append, with their lengths kept so each delta can be told apart again.
  #delta(prefix: number, block: number, text: string): void {
    if (text === "") return;
    const name = this.#names[prefix]![block] ?? this.#blockName(prefix, block);
    if (this.#bufferBlock !== name) {
      this.flush();
      this.#bufferBlock = name;
    }
    this.#bufferTexts.push(text);
    if (this.#bufferTexts.length >= MAX_BUFFERED_DELTAS) this.flush();
    else this.#timer ??= setImmediate(this.#flushSoon);
  }

  readonly #flushSoon = (): void => {
    this.#timer = undefined;
    this.flush();
  };

  #blockName(prefix: number, block: number): string {
    const name = `${BLOCK_PREFIXES[prefix]}:${block}`;
    this.#names[prefix]![block] = name;
    return name;
  }

  #event<T extends StepEventType>(type: T, data: NewEventOf<T>["data"]): NewEvent {
    return { continuity: this.#continuity, stream: this.#stream, type, data };
  }

  async #critical(events: NewEvent[]): Promise<void> {
    const pending = this.#pending;
    this.#pending = [];
    try {
      await this.#store.appendBatch(events);
    } catch (error) {
      this.#onReject(error);
    }
    await Promise.all(pending);
    if (this.#failed) throw this.#failure;
  }
}
