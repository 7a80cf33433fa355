import type { EventStore } from "../log/index.js";
import { createProtocolParser } from "../protocol/index.js";
import { createTokenEstimator, type ProviderMessage } from "../providers/index.js";
import type { SpoolEvent } from "../spec/index.js";
import {
  applyContinuityEvent,
  type ContinuityState,
  emptyContinuityState,
  isBackgroundThread,
} from "./continuity-state.js";
import type { ContinuityActivity } from "./session-watch.js";
import { ThreadHistory } from "./thread-history.js";

/** What `ConversationTail` needs. */
export interface ConversationTailOptions {
  store: EventStore;
  continuity: string;
  /** The most tokens `conversation()` returns (default 1,500): the newest messages that fit. */
  maxTokens?: number;
  /** The most messages `conversation()` returns (default 8). */
  maxMessages?: number;
  /** Counts a text's tokens (default: the runtime's estimator for `model`). */
  countTokens?: (text: string) => number;
  /** The model whose tokens are counted when `countTokens` is not given. */
  model?: string;
}

/** What the log says about a continuity's conversation now, whoever wrote it. */
export interface LoggedActivity extends ContinuityActivity {
  /** The seq the tail has read up to. */
  readonly seq: number;
}

/** The history of no thread: it remembers turns and pins until the first foreground thread starts. */
const NO_THREAD = "";

/**
 * Follows one continuity's log for a stream watch's commentary (docs/stream-watch.md): who talked
 * last and whether foreground work is pending, from *any* writer (another process's `spool turn
 * add`, the HTTP server, a runtime that holds the lease elsewhere), and the recent conversation of
 * the foreground thread as text.
 *
 * It reads the log once up to its head on first use and then only the events appended since
 * (each call catches up first; calls are serialised). The conversation is the fold the runtime
 * builds its own requests with (`ThreadHistory` of the foreground thread: a continuation's
 * carried messages included, commentary folded in as the agent's), so it says what the agent's
 * next request would say. Never appends; never throws for the log's content (a store that fails
 * rejects the call).
 */
export class ConversationTail {
  readonly options: ConversationTailOptions;
  readonly #state: ContinuityState = emptyContinuityState();
  #history = new ThreadHistory(NO_THREAD);
  #seq = 0;
  #lastTurnAt: number | undefined;
  #reading: Promise<void> = Promise.resolve();
  readonly #count: (text: string) => number;

  constructor(options: ConversationTailOptions) {
    this.options = options;
    if (options.countTokens) this.#count = options.countTokens;
    else {
      const estimator = createTokenEstimator();
      const model = options.model ?? "";
      this.#count = (text) => estimator.count(model, text);
    }
  }

  /** Reads the events appended since the last call (all of them the first time). */
  catchUp(): Promise<void> {
    const next = this.#reading.then(async () => {
      const { store, continuity } = this.options;
      for await (const event of store.read({ continuity, after: this.#seq })) this.#apply(event);
    });
    // A failed read leaves the position where it was: the next call reads again from there.
    this.#reading = next.catch(() => undefined);
    return next;
  }

  /**
   * The conversation's activity as the log tells it: the time of the newest `turn.added` by any
   * actor (the store's clock), and `busy` while a turn waits for a run or a foreground run has
   * started and not completed. A run counts only while the continuity's lease is live, or when it
   * was never leased: a run the log leaves open under a lapsed or released lease is one whose
   * process died, and holds nothing back.
   */
  async activity(): Promise<LoggedActivity> {
    await this.catchUp();
    const open =
      this.#state.waitingTurns.length > 0 ||
      [...this.#state.threads.values()].some(
        (thread) => thread.openRun !== undefined && !isBackgroundThread(thread.id),
      );
    let busy = open;
    if (open) {
      const lease = await this.options.store.lease(this.options.continuity);
      busy = lease === undefined || lease.live;
    }
    return {
      busy,
      ...(this.#lastTurnAt !== undefined ? { lastTurnAt: this.#lastTurnAt } : {}),
      seq: this.#seq,
    };
  }

  /**
   * The newest messages of the foreground thread as text, oldest first, one per paragraph
   * (`User: …`, `Assistant: …`), within `maxTokens` and `maxMessages`: user turns' text (their
   * images left out), the agent's responses (its thoughts and actions left out) and its
   * commentary. Tool results are not conversation and are skipped. A newest message longer than
   * the budget keeps its end. "" before the first turn.
   */
  async conversation(): Promise<string> {
    await this.catchUp();
    const maxTokens = this.options.maxTokens ?? 1_500;
    const maxMessages = this.options.maxMessages ?? 8;
    const lines: string[] = [];
    let used = 0;
    const { messages } = this.#history.view();
    for (let index = messages.length - 1; index >= 0 && lines.length < maxMessages; index--) {
      const entry = messages[index]!;
      const line = conversationLine(entry.message, entry.turn);
      if (line === undefined) continue;
      const tokens = this.#count(line);
      if (used + tokens > maxTokens) {
        const cut = lines.length === 0 ? tailOf(line, maxTokens, this.#count) : "";
        if (cut !== "") lines.push(cut);
        break;
      }
      used += tokens;
      lines.push(line);
    }
    return lines.reverse().join("\n\n");
  }

  #apply(event: SpoolEvent): void {
    this.#seq = Math.max(this.#seq, event.seq);
    if (event.type === "turn.added") {
      const at = Date.parse(event.ts);
      if (Number.isFinite(at)) this.#lastTurnAt = Math.max(this.#lastTurnAt ?? at, at);
    }
    applyContinuityEvent(this.#state, event);
    const foreground = this.#state.foreground;
    if (foreground !== undefined && foreground !== this.#history.thread) {
      // Starts where the previous history is: it knows the turns no run has taken and the pins.
      this.#history = this.#history.successor(foreground);
    }
    this.#history.apply(event);
  }
}

/** One message as a line of the conversation, or `undefined` when it is not conversation. */
function conversationLine(message: ProviderMessage, turn: boolean): string | undefined {
  if (message.role === "user") {
    if (!turn) return undefined;
    const text = (
      typeof message.content === "string"
        ? message.content
        : message.content
            .filter((part) => part.type === "text")
            .map((part) => part.text)
            .join("\n")
    ).trim();
    return text === "" ? undefined : `User: ${text}`;
  }
  if (message.role === "assistant") {
    const raw =
      typeof message.content === "string"
        ? message.content
        : message.content
            .map((block) => (block.type === "text" ? block.text : ""))
            .filter((text) => text !== "")
            .join("\n");
    const said = spokenText(raw);
    return said === "" ? undefined : `Assistant: ${said}`;
  }
  return undefined;
}

/** What a model's output says to the user: its responses and plain text, not thoughts or actions. */
function spokenText(output: string): string {
  const parser = createProtocolParser();
  const pieces: string[] = [];
  for (const event of [...parser.push(output), ...parser.end()]) {
    if (event.type === "block-delta" && (event.kind === "response" || event.kind === "text")) {
      pieces.push(event.text);
    }
  }
  return pieces.join("").replace(/\s+/g, " ").trim();
}

/** The end of `line` that fits `maxTokens` (whole characters, marked as cut). */
function tailOf(line: string, maxTokens: number, count: (text: string) => number): string {
  let keep = Math.min(line.length, maxTokens * 4);
  while (keep > 0 && count(`… ${line.slice(-keep)}`) > maxTokens) keep = Math.floor(keep * 0.8);
  return keep > 0 ? `… ${line.slice(-keep)}` : "";
}
