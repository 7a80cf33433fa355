import type { InternalSources } from "../feeds/index.js";
import type { EventStore } from "../log/index.js";
import {
  MEMORY_FEED_SOURCE,
  type MemoryFeedConversation,
  type MemoryIndex,
  type MemoryRecaller,
  memoryFeedSource,
  type RecallRequest,
  storageError,
} from "../memory/index.js";
import type { EventData } from "../spec/index.js";
import { notify } from "./agent-step.js";
import type { RunObserver } from "./run-notice.js";

/**
 * The text and actor of the turn `id`, read from the log after `after` (a position the caller
 * knows is before it: the turn's seq minus one, or what a thread's history has read), or
 * `undefined` when the log has no such turn there.
 */
export async function turnInput(
  store: EventStore,
  continuity: string,
  id: string,
  after: number,
): Promise<{ text: string; actor?: string } | undefined> {
  for await (const event of store.read({ continuity, types: ["turn.added"], after })) {
    if (event.id !== id) continue;
    const data = event.data as EventData<"turn.added">;
    return { text: data.text, ...(event.actor ? { actor: event.actor } : {}) };
  }
  return undefined;
}

/** What asked the memory index when it failed (`memory.failed`'s `trigger`). */
export type MemoryTrigger = EventData<"memory.failed">["trigger"];

/**
 * A session's use of the memory index: the recall at a thread's start and handoff, the `memory`
 * context feed, and the one warning a failing index gives.
 *
 * Contract: memory is an aid and never stops a run. When the index cannot be opened or searched
 * (a damaged `spool.memory.db`, a missing PostgreSQL table) the thread goes on without memory;
 * the first failure of the session is logged as `memory.failed` on the thread asking and told to
 * the observer as one `memory-notice` (its code and how to fix it: `spool memory reindex`);
 * later failures of the session add nothing.
 */
export class SessionMemory {
  readonly #store: EventStore;
  readonly #continuity: string;
  readonly #recaller: MemoryRecaller | undefined;
  readonly #index: MemoryIndex | undefined;
  readonly #observer: RunObserver | undefined;
  #warned = false;
  /** The newest user turn a foreground run took up: what the `memory` feed searches for. */
  conversation: MemoryFeedConversation | undefined;

  constructor(options: {
    store: EventStore;
    continuity: string;
    recaller?: MemoryRecaller | undefined;
    index?: MemoryIndex | undefined;
    observer?: RunObserver | undefined;
  }) {
    this.#store = options.store;
    this.#continuity = options.continuity;
    this.#recaller = options.recaller;
    this.#index = options.index;
    this.#observer = options.observer;
  }

  /** True when a turn's text is worth reading for memory (a recaller or an index is there). */
  get wanted(): boolean {
    return this.#recaller !== undefined || this.#index !== undefined;
  }

  /**
   * Asks the recaller for memory for a thread and logs its choice as `memory.recalled` on the
   * thread, before the thread's next compile reads the log (its history folds the event into the
   * view). Nothing is logged when it gives nothing; a failure is `failed` and the thread starts
   * without memory.
   */
  async recall(request: RecallRequest): Promise<void> {
    if (!this.#recaller) return;
    let data: EventData<"memory.recalled"> | undefined;
    try {
      data = await this.#recaller.recall(request);
    } catch (error) {
      await this.failed(request.thread, request.trigger, error);
      return;
    }
    if (!data) return;
    await this.#store.append({
      continuity: request.continuity,
      stream: { kind: "thread", id: request.thread },
      type: "memory.recalled",
      data,
    });
  }

  /**
   * The first failure of the session: logged as `memory.failed` on `thread` (when there is one)
   * and told to the observer once; later ones are dropped (see the class contract).
   */
  async failed(thread: string | undefined, trigger: MemoryTrigger, error: unknown): Promise<void> {
    if (this.#warned) return;
    this.#warned = true;
    const failure = storageError(
      error,
      trigger === "feed" ? "reading the memory feed" : "recalling memory",
    );
    notify(this.#observer, {
      type: "memory-notice",
      code: failure.code,
      text: `memory from other conversations is off for this session: ${failure.message}`,
    });
    if (thread === undefined) return;
    await this.#store.append({
      continuity: this.#continuity,
      stream: { kind: "thread", id: thread },
      type: "memory.failed",
      data: {
        trigger,
        error: {
          code: failure.code,
          message: failure.message.slice(0, 20_000),
          ...(failure.hint !== undefined ? { hint: failure.hint.slice(0, 2000) } : {}),
        },
      },
    });
  }

  /**
   * The `memory` internal feed source over the session's index, searching for `conversation`;
   * `thread` names the thread a failure is logged on (the foreground's).
   */
  feedSources(thread: () => string | undefined): InternalSources {
    return {
      [MEMORY_FEED_SOURCE]: memoryFeedSource({
        index: this.#index,
        continuity: this.#continuity,
        conversation: () => this.conversation,
        failed: (error) => this.failed(thread(), "feed", error),
      }),
    };
  }
}
