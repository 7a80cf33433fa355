import type { EventStore } from "../../log/index.js";
import { type AgentRuntime, ContinuityLiveError } from "../../runtime/index.js";
import type { CommandContext } from "../context.js";
import {
  type Follower,
  followContinuity,
  followingLine,
  type QueuedTurn,
} from "./continuity-follower.js";
import {
  type LeaseReading,
  type LeaseWatch,
  type LeaseWatchOptions,
  watchLease,
} from "./lease-watch.js";

/** Options of `ChatLead`. */
export interface ChatLeadOptions {
  ctx: CommandContext;
  store: EventStore;
  continuity: string;
  /** The chat's runtime (it holds the lease when this chat runs the continuity). */
  runtime: AgentRuntime;
  /** Where the follower's view writes: the chat's output, which keeps the prompt below it. */
  write(chunk: string): void;
  /** The chat's own lines: dim (`info`) and red (`error`). */
  say: { info(line: string): void; error(line: string): void };
  /** Timers and clock of the lease watch (tests); the global ones by default. */
  watch?: Pick<LeaseWatchOptions, "now" | "timers">;
}

/**
 * Who runs a chat's continuity: this chat, or another process (its lease is live) that this chat
 * follows read-only, queueing the user's turns for it. While following it watches that lease
 * (`watchLease`), and when the lease is released or lapses (the owner ended or died) it takes the
 * continuity over on its own, without waiting for the user: one dim line says so, then the runtime
 * resumes it (a run the owner left unfinished is recovered with interrupted-action semantics, and
 * turns left waiting are run).
 *
 * Guarantees: one attempt to lead at a time (callers share it); before leading, everything the
 * previous owner logged has been shown; should another process take the lease first, this chat
 * follows that one instead, from where it stopped. A takeover the lease watch started that fails
 * otherwise is reported with `say.error` (and the watch goes on while this chat still follows).
 * After `close` it neither follows nor takes anything over.
 */
export class ChatLead {
  readonly #o: ChatLeadOptions;
  #follower: Follower | undefined;
  /** Who runs the continuity while this chat follows it. */
  #holder: string | undefined;
  #watch: LeaseWatch | undefined;
  #leading: Promise<boolean> | undefined;
  #closed = false;

  constructor(options: ChatLeadOptions) {
    this.#o = options;
  }

  /** True while another process runs the continuity and this chat follows it. */
  get following(): boolean {
    return this.#follower !== undefined;
  }

  /**
   * Makes this chat the one that runs the continuity, resuming what a crash interrupted, unless
   * another process's lease on it is live: then it follows that process. Resolves `true` when this
   * chat runs it; rejects only with a failure of the store or the runtime.
   */
  lead(): Promise<boolean> {
    this.#leading ??= this.#lead().finally(() => {
      this.#leading = undefined;
    });
    return this.#leading;
  }

  /**
   * Queues a turn for the process this chat follows, which its view then leaves out (the prompt
   * showed it). Should this chat have taken the continuity over meanwhile, it runs the turn here
   * (`submit`) and resolves when that run ends.
   */
  async queue(turn: Omit<QueuedTurn, "id">): Promise<void> {
    if (this.#follower) await this.#follower.queue(turn);
    else await this.#o.runtime.submit(this.#o.continuity, turn);
  }

  /** Stops following and watching; an attempt to lead still running is left to the runtime. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#watch?.stop();
    this.#watch = undefined;
    const follower = this.#follower;
    this.#follower = undefined;
    await follower?.stop();
  }

  async #lead(): Promise<boolean> {
    const { store, continuity, runtime, say } = this.#o;
    let after: number | undefined;
    if (this.#follower) {
      // The head is read before the lease, so the watch sees any close made after the reading.
      const head = await store.head();
      const lease = await store.lease(continuity);
      if (lease?.live) {
        if (lease.holder !== undefined && lease.holder !== this.#holder) this.#follow(lease.holder);
        this.#watchLease(head);
        return false;
      }
      this.#watch?.stop();
      this.#watch = undefined;
      // What the previous owner logged is shown (its last line ended) before this chat says more.
      const last = (await store.continuity(continuity))?.lastSeq;
      after = await this.#follower.stop(last);
      this.#follower = undefined;
      say.info(takeOverLine(this.#holder, lease));
    }
    if (this.#closed) return false;
    // Read before the attempt: the owner it fails on may close right after, and the view and the
    // watch then follow it from here.
    after ??= await store.head();
    try {
      await runtime.resume(continuity);
      return true;
    } catch (error) {
      if (!(error instanceof ContinuityLiveError) || this.#closed) throw error;
      this.#follow(error.holder, after);
      this.#watchLease(after);
      return false;
    }
  }

  /** Says who runs the continuity now and follows it (from `after`, when not following yet). */
  #follow(holder: string, after?: number): void {
    this.#holder = holder;
    this.#o.say.info(followingLine(holder, "following; your turns are queued for it"));
    if (this.#follower || after === undefined) return;
    const { ctx, store, continuity, write } = this.#o;
    this.#follower = followContinuity(ctx, store, continuity, after, { write });
  }

  /** Watches the lease, following closes logged after `after` (read before the lease was). */
  #watchLease(after: number): void {
    if (this.#watch || this.#closed) return;
    this.#watch = watchLease(this.#o.store, this.#o.continuity, {
      ...this.#o.watch,
      after,
      onFree: () => {
        this.#watch = undefined;
        this.lead().catch((error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          this.#o.say.error(`could not take the continuity over: ${message}`);
          // Still following (the store failed before the follower stopped): keep watching.
          if (this.#follower) this.#watchLease(after);
        });
      },
    });
  }
}

/** The dim line of a chat that takes the continuity over from the process it followed. */
export function takeOverLine(holder: string | undefined, lease: LeaseReading): string {
  const who = holder ?? lease?.holder;
  const process = who !== undefined ? `the process running this continuity (${who})` : "its owner";
  const what = lease?.holder === undefined ? "ended" : "is gone: its lease lapsed";
  return `${process} ${what}; taking over here`;
}
