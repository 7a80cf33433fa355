import { monotonicFactory } from "ulid";
import type { EventStore } from "../../log/index.js";
import { ActorRosters, DEFAULT_LEASE_TTL_MS, type LeaseOptions } from "../../runtime/index.js";
import { ConfigError, type EventData, type SpoolEvent } from "../../spec/index.js";
import type { CommandContext } from "../context.js";
import { ConversationView } from "./conversation-view.js";
import { type LeaseWatch, type LeaseWatchOptions, watchLease } from "./lease-watch.js";

/**
 * The lease the CLI's runtimes hold on the continuities they run: its time to live from
 * `SPOOL_LEASE_TTL_MS` (default 15 s), how soon another process may recover a continuity after
 * the one running it died. Throws `ConfigError` for a value that is not a positive whole number.
 */
export function cliLeaseOptions(ctx: CommandContext): LeaseOptions {
  const raw = ctx.io.env.SPOOL_LEASE_TTL_MS;
  if (raw === undefined || raw === "") return { ttlMs: DEFAULT_LEASE_TTL_MS };
  const ttlMs = Number(raw);
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 100) {
    throw new ConfigError(
      "config.lease-ttl",
      `SPOOL_LEASE_TTL_MS=${JSON.stringify(raw)} is not a lease time to live`,
      { hint: "Use a whole number of milliseconds of at least 100, e.g. 15000, or unset it" },
    );
  }
  return { ttlMs };
}

/** The line a process shows when it finds another process running the continuity. */
export function followingLine(holder: string, what: string): string {
  return `another process (${holder}) is running this continuity; ${what}`;
}

/** A turn for the continuity's owner: what was said, by whom, from where. */
export interface QueuedTurn {
  text: string;
  actor: string;
  origin: string;
  /** The id of its `turn.added` (default: the store's, a fresh monotonic ULID). */
  id?: string;
}

/**
 * Appends a turn for the continuity's owner to run; resolves with the stored event. Rejects with
 * `ActorAccessError`, appending nothing, when the continuity's access list refuses the actor.
 */
export async function queueTurn(
  store: EventStore,
  continuity: string,
  input: QueuedTurn,
): Promise<SpoolEvent> {
  await new ActorRosters(store).check(continuity, input.actor);
  return store.append({
    ...(input.id !== undefined ? { id: input.id } : {}),
    continuity,
    type: "turn.added",
    actor: input.actor,
    origin: input.origin,
    data: { text: input.text },
  });
}

/** A read-only follower of a continuity: renders what its owner appends, as `spool tail` does. */
export interface Follower {
  /**
   * Queues a turn for the owner (`queueTurn`) that this follower then does not show: whoever
   * typed it has seen it. Resolves with the stored event.
   */
  queue(turn: Omit<QueuedTurn, "id">): Promise<SpoolEvent>;
  /**
   * Stops following, once every event up to `seq` (when given) has been rendered; resolves, once
   * the view is finished, with the seq of the last event it read (`after` if none).
   */
  stop(seq?: number): Promise<number>;
}

/** Options of `followContinuity`. */
export interface FollowOptions {
  /** Where the view writes (default: stdout). */
  write?: (chunk: string) => void;
}

const newTurnId = monotonicFactory();

/** Follows `continuity` from after `after`, rendering its events until stopped. */
export function followContinuity(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  after: number,
  options: FollowOptions = {},
): Follower {
  const stop = new AbortController();
  const view = new ConversationView({
    style: ctx.style,
    width: ctx.width,
    write: options.write ?? ((chunk) => void ctx.io.stdout.write(chunk)),
  });
  /** Turns queued through this follower, not shown when they come back from the log. */
  const mine = new Set<string>();
  let shown = after;
  let until: { seq: number; reached: () => void } | undefined;
  const done = (async () => {
    try {
      for await (const message of store.subscribe({ continuity, after, signal: stop.signal })) {
        if (message.type !== "event") continue;
        const { event } = message;
        if (!(event.type === "turn.added" && mine.delete(event.id))) view.push(event);
        shown = event.seq;
        if (until && shown >= until.seq) until.reached();
      }
    } catch {
      // The store closed under the follower: following ends, nothing to render.
    } finally {
      view.finish();
    }
  })();
  return {
    queue(turn) {
      const id = newTurnId();
      mine.add(id);
      return queueTurn(store, continuity, { ...turn, id });
    },
    async stop(seq) {
      if (seq !== undefined && shown < seq) {
        await Promise.race([
          new Promise<void>((reached) => {
            until = { seq, reached };
          }),
          done,
        ]);
      }
      stop.abort();
      await done;
      return shown;
    },
  };
}

/** How the run that answered a turn ended. */
export interface TurnAnswer {
  status: EventData<"run.completed">["status"];
  result?: string;
  /** The seq of the `run.completed` that ended it. */
  seq: number;
}

/**
 * Finds, in the events of a continuity in log order, the end of the run that took `turn`: the
 * run started with it (`run.started` naming the turn), across the threads it was handed off to
 * (`thread.continued`), up to a `run.completed` that is not a handoff. Pure.
 */
export class TurnAnswerWatch {
  readonly #turn: string;
  readonly #threads = new Set<string>();

  constructor(turn: string) {
    this.#turn = turn;
  }

  /** The answer once `event` ends the turn's run, else `undefined`. */
  push(event: SpoolEvent): TurnAnswer | undefined {
    if (event.stream.kind !== "thread") return undefined;
    const thread = event.stream.id;
    if (event.type === "run.started") {
      if ((event.data as EventData<"run.started">).turn === this.#turn) this.#threads.add(thread);
      return undefined;
    }
    if (!this.#threads.has(thread)) return undefined;
    if (event.type === "thread.continued") {
      this.#threads.add((event.data as EventData<"thread.continued">).continuation);
      return undefined;
    }
    if (event.type !== "run.completed") return undefined;
    const data = event.data as EventData<"run.completed">;
    if (data.status === "continued") return undefined;
    return {
      status: data.status,
      ...(data.result !== undefined ? { result: data.result } : {}),
      seq: event.seq,
    };
  }
}

/**
 * Waits for the answer to `turn` (queued for another process), reading the continuity from
 * `after` and following it live. Meanwhile it watches the continuity's lease (`watchLease`): once
 * no process holds it live (its owner ended or died before running the turn), it calls
 * `takeOver`, which is to run the waiting turns here and resolve `true`, or `false` when another
 * process took the lease first (then that one is watched in turn); the answer is read from the
 * log all the same. A `takeOver` that rejects ends the wait with its error.
 */
export async function awaitTurnAnswer(
  store: EventStore,
  continuity: string,
  turn: string,
  after: number,
  options: {
    takeOver: () => Promise<boolean>;
    signal?: AbortSignal;
    /** The lease watch's clock and timers (tests); the global ones by default. */
    watch?: Pick<LeaseWatchOptions, "now" | "timers">;
  },
): Promise<TurnAnswer | undefined> {
  const watch = new TurnAnswerWatch(turn);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let lease: LeaseWatch | undefined;
  let takingOver: Promise<void> | undefined;
  let failure: unknown;
  const watchOwner = () => {
    lease = watchLease(store, continuity, {
      ...options.watch,
      onFree: () => {
        takingOver = options.takeOver().then(
          (took) => {
            if (!took && !stop.signal.aborted) watchOwner();
          },
          (error: unknown) => {
            failure = error;
            stop.abort();
          },
        );
      },
    });
  };
  watchOwner();
  try {
    for await (const message of store.subscribe({ continuity, after, signal: stop.signal })) {
      if (message.type !== "event") continue;
      const answer = watch.push(message.event);
      if (answer) return answer;
    }
    if (failure !== undefined) throw failure;
    return undefined;
  } finally {
    stop.abort();
    lease?.stop();
    options.signal?.removeEventListener("abort", onAbort);
    await takingOver;
  }
}
