import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { taskStreamId } from "../actions/index.js";
import type { FeedRegistryState } from "../feeds/index.js";
import { type EventStore, openEventStore } from "../log/index.js";
import { recordedRecaller } from "../memory/index.js";
import type { Provider } from "../providers/index.js";
import type { AgentRuntime, InterceptedCall, RecordedStepFeeds } from "../runtime/index.js";
import { applyContinuityEvent, foldContinuityState } from "../runtime/index.js";
import { type EventData, type NewEvent, SpoolError, type SpoolEvent } from "../spec/index.js";
import { taskStepId } from "../transcript/index.js";
import { cancelGatesOf, cancelPoints, concludingCommitStart, gateKey } from "./replay-cancels.js";
import {
  isCompared,
  isInput,
  isSourceInput,
  LaneMatcher,
  type ReplayDifference,
} from "./replay-compare.js";
import { recordedFeedsOf } from "./replay-feeds.js";
import { createReplayProvider } from "./replay-provider.js";
import { recordedWindows } from "./replay-windows.js";
import { createReplayWorld, type OutsideCall, type ReplayWorld } from "./replay-world.js";
import { createVerifyingStore, type DerivedEvent, type VerifyingStore } from "./verifying-store.js";

/** What a replay needs. */
export interface ReplayOptions {
  /** The store that holds the continuity's log. */
  source: EventStore;
  continuity: string;
  /**
   * Builds a runtime configured like the one that wrote the log (same directive and tools), over
   * the replay's store, with `world` passed as `AgentRuntimeOptions.world`: the closed world
   * whose provider, recorded results, feeds and clock replace everything outside. `provider`,
   * `intercept` and `recordedFeeds` are the world's, for runtimes built without it.
   */
  makeRuntime(parts: {
    store: EventStore;
    world: ReplayWorld;
    provider: Provider;
    intercept: (call: InterceptedCall) => Promise<unknown> | undefined;
    recordedFeeds: (step: string) => RecordedStepFeeds | undefined;
    recordedFeedRegistry: (step: string, actionId: string) => FeedRegistryState;
  }): AgentRuntime;
  /** How long replay waits with nothing happening before it calls the run stuck (default 10 s). */
  stallMs?: number;
}

/** What a replay found. */
export interface ReplayReport {
  identical: boolean;
  /** Events in the continuity's log, and how many of them replay re-derived and compared. */
  events: number;
  compared: number;
  /**
   * Logged events replay took as they were because a crash had cut off the model output they
   * came from (its text was never logged whole).
   */
  taken: number;
  /**
   * Restarts re-enacted (each `recovery.started`): a crash, or a runtime that took the
   * continuity up after another one closed.
   */
  recoveries: number;
  /** Cancels from outside (Ctrl-C) re-enacted where the log shows their first consequence. */
  cancels: number;
  /** Closes re-enacted (each `runtime.closed`): the replayed runtime is closed there. */
  closes: number;
  /**
   * What the replayed runtime tried to reach outside the log (a tool, relic, workflow, model,
   * feed source or the network): any makes the replay not identical.
   */
  reached: OutsideCall[];
  difference?: ReplayDifference;
}

/**
 * Replays a continuity from its log: its inputs are appended again in order, a runtime built
 * like the original runs them with every model call answered from the log (matched by the
 * compiled context's digest) and every tool, llm and relic result taken from the log, so nothing
 * external is called, and every decision is re-derived and compared, lane by lane, with the
 * logged one. A workflow runs again (its graph's events are decisions too), each of its steps'
 * inner actions answered from the log. A restart (a crash, or a runtime that took the continuity
 * up after another) is re-enacted where the log shows recovery began: the replayed runtime is
 * stopped there and a fresh one recovers, as the original did; a cancel (Ctrl-C) where its first
 * consequence was logged; a close where its `runtime.closed` was logged (the replayed runtime is
 * closed there and re-derives the event and every cancel it made; a turn after it is taken by a
 * fresh runtime, as it was by another one). The runtime runs in a closed world (`ReplayWorld`)
 * and `fetch` throws while replay runs: whatever it reaches outside is reported. Resolves with the first
 * difference, or `identical`.
 */
export async function replayContinuity(options: ReplayOptions): Promise<ReplayReport> {
  const { source, continuity } = options;
  const original: SpoolEvent[] = [];
  for await (const event of source.read({ continuity })) original.push(event);
  if (original.length === 0) {
    throw new SpoolError("replay.unknown-continuity", `the log has no continuity "${continuity}"`, {
      hint: "List continuities with `spool continuities`",
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "spool-replay-"));
  const scratch = await openEventStore({ db: join(dir, "replay"), durability: "fast" });
  try {
    return await replayInto(options, original, scratch);
  } finally {
    await scratch.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How many replays run in this process: the real `fetch` is back once none does. */
let sealed = 0;
let realFetch: typeof fetch | undefined;

/**
 * Replaces `globalThis.fetch` with the world's, which throws, until the returned function is
 * called: nothing in the process reaches the network while a replay runs.
 */
function sealFetch(world: ReplayWorld): () => void {
  if (sealed === 0) realFetch = globalThis.fetch;
  sealed += 1;
  globalThis.fetch = world.fetch;
  return () => {
    sealed -= 1;
    if (sealed === 0 && realFetch) globalThis.fetch = realFetch;
  };
}

async function replayInto(
  options: ReplayOptions,
  original: readonly SpoolEvent[],
  scratch: EventStore,
): Promise<ReplayReport> {
  const { continuity } = options;
  const stallMs = options.stallMs ?? 10_000;
  const compared = original.filter(isCompared);
  const matcher = new LaneMatcher(compared);
  const outcomes = recordedOutcomes(original);
  const feeds = recordedFeedsOf(original);
  // The clock stands where replay stands in the log: the latest logged time it has reached.
  let inputTime = Date.parse(original[0]!.ts);
  const world = createReplayWorld({
    provider: createReplayProvider(original),
    intercept: (call) => outcomes(call),
    recordedFeeds: feeds.step,
    recordedFeedRegistry: feeds.registry,
    now: () => Math.max(inputTime, matcher.time),
    recordedWindow: recordedWindows(original),
    recordedMemory: recordedRecaller(original),
  });
  const parts = () => ({
    store: verifying,
    world,
    provider: world.provider,
    intercept: world.intercept,
    recordedFeeds: world.recordedFeeds,
    recordedFeedRegistry: world.recordedFeedRegistry,
  });
  const boundaries = original.filter((event) => event.type === "recovery.started");
  const cancels = cancelPoints(original);
  const cancelGates = cancelGatesOf(original, cancels);
  const seen = new Map<string, number>();
  const holdAfter = (event: DerivedEvent) => {
    const key = gateKey(event);
    const gate = cancelGates.get(key);
    if (!gate) return undefined;
    const occurrence = (seen.get(key) ?? 0) + 1;
    seen.set(key, occurrence);
    if (occurrence !== gate.occurrence) return undefined;
    gate.reached = true;
    return gate.promise;
  };
  const cutOff = cutOffSteps(original);
  const endsInterrupted = hasOpenRun(original);
  let taken = 0;
  let recoveries = 0;
  let cancelled = 0;
  let closes = 0;
  /** The close of the replayed runtime, from a `runtime.closed` until a fresh one replaces it. */
  let closing: Promise<void> | undefined;

  const report = (found?: ReplayDifference): ReplayReport => {
    const outside = world.reached[0];
    const difference =
      found ??
      (outside
        ? { reason: `replay reached ${outside.kind} "${outside.name}" outside the log` }
        : undefined);
    return {
      identical: difference === undefined,
      events: original.length,
      compared: compared.length,
      taken,
      recoveries,
      cancels: cancelled,
      closes,
      reached: [...world.reached],
      ...(difference ? { difference } : {}),
    };
  };

  let boundaryIndex = 0;
  const crashAhead = () => boundaryIndex < boundaries.length || endsInterrupted;
  const restartAt = () => boundaries[boundaryIndex]?.seq;
  const verifyingStore = () =>
    createVerifyingStore({ scratch, matcher, crashAhead, restartAt, holdAfter });
  let verifying: VerifyingStore = verifyingStore();
  let runtime = options.makeRuntime(parts());
  /** Whether the replayed runtime was given the continuity (a turn, or a restart's resume). */
  let engaged = false;

  /**
   * Waits until everything the log has before `event` is derived and, when the original had no
   * run open there, until the runtime is idle, as the original was: the report of what went
   * wrong on the way, if anything.
   */
  const reachBefore = async (event: SpoolEvent, runOpen: boolean) => {
    const outcome = await verifying.settle(
      () => matcher.matched >= countBefore(compared, event.seq),
      stallMs,
    );
    if (outcome.difference) return report(outcome.difference);
    if (outcome.stalled) return report(firstUnmatched(matcher, event.seq));
    if (runOpen) return undefined;
    const idle = await verifying.settle(undefined, stallMs, runtime.idle(continuity));
    if (idle.difference) return report(idle.difference);
    if (idle.stalled) return report(firstUnmatched(matcher, event.seq));
    return undefined;
  };

  const release = sealFetch(world);
  try {
    const sofar = foldContinuityState([]);
    for (const event of original) {
      const cancel = cancels.get(event.seq);
      if (cancel) {
        // Everything the log has before the cancel's first consequence happened before the cancel
        // (or the runtime waits on the held append just before it: the cancel lands there).
        const gates = [...cancelGates.values()].filter((gate) => gate.seq === event.seq);
        // A cancel the loop's decision saw (committed with the step's end) waits, besides, for
        // everything before that commit: the step's actions ended before the run decided.
        const start = concludingCommitStart(original, event.seq);
        const concluded = start === event.seq ? 0 : countBefore(compared, start);
        const outcome = await verifying.settle(
          () =>
            matcher.matched >= countBefore(compared, event.seq) ||
            (gates.every((gate) => gate.reached) && matcher.matched >= concluded),
          stallMs,
        );
        if (outcome.difference) return report(outcome.difference);
        if (outcome.stalled) return report(firstUnmatched(matcher, event.seq));
        runtime.cancel(continuity, cancel.reason);
        for (const gate of gates) gate.open();
        cancelled += 1;
      }
      // Child threads do not count: a background summarizer may still be running between turns.
      const runOpen = [...sofar.threads.values()].some(
        (thread) => thread.openRun !== undefined && thread.parent === undefined,
      );
      applyContinuityEvent(sofar, event);
      if (event.type === "runtime.closed") {
        // Everything before the close was derived (and, with no run open, the runtime is idle,
        // as the original was when it closed): the replayed runtime closes here.
        const failed = await reachBefore(event, runOpen);
        if (failed) return failed;
        // The original took the continuity up with no turn (a watch whose every event was its
        // frames' input) and closed it: the replayed runtime takes it up too, so that its close
        // is the same close.
        if (!engaged) {
          if (closing !== undefined) {
            // Two closes with no turn between: each was a runtime of its own.
            const closed = await verifying.settle(undefined, stallMs, closing);
            if (closed.difference) return report(closed.difference);
            closing = undefined;
            runtime = options.makeRuntime(parts());
          }
          await runtime.resume(continuity).catch(() => {});
        }
        engaged = false;
        closing = runtime.close().catch(() => {});
        closes += 1;
        continue;
      }
      if (isInput(event)) {
        // What a source read comes whenever its runner read it (also while a turn's run was
        // starting): it waits for the decisions before it, never for the runtime to be idle.
        const failed = await reachBefore(event, runOpen || isSourceInput(event));
        if (failed) return failed;
        await scratch.append(copyOf(event));
        inputTime = Math.max(inputTime, Date.parse(event.ts));
        if (event.type !== "turn.added") continue;
        if (closing !== undefined) {
          // A closed runtime takes no turn: the original's next turn came to another runtime.
          const closed = await verifying.settle(undefined, stallMs, closing);
          if (closed.difference) return report(closed.difference);
          if (closed.stalled) return report(firstUnmatched(matcher, event.seq));
          closing = undefined;
          runtime = options.makeRuntime(parts());
        }
        engaged = true;
        void runtime.accept(continuity, event.id).catch(() => {});
        continue;
      }
      if (event.type !== "recovery.started") continue;
      const outcome = await verifying.settle(
        () => matcher.matched >= countBefore(compared, event.seq),
        stallMs,
      );
      if (outcome.difference) return report(outcome.difference);
      // Replay derived something else where the crashed process had written an event: a real
      // difference, not an event the crash kept from being written.
      const held = verifying.heldBefore(event.seq);
      if (held) return report(held);
      // The events the crashed process wrote that replay could not derive: those that came from
      // a model call the crash cut off (its text was never logged whole) are taken from the log.
      // The compiled context and the step's start are decisions, never model output.
      for (const missing of matcher.unmatched(event.seq)) {
        if (!inCutOffStep(missing, cutOff) || NEVER_TAKEN.has(missing.type)) {
          return report(firstUnmatched(matcher, event.seq));
        }
        matcher.skip(missing);
        await scratch.append(copyOf(missing));
        taken += 1;
      }
      verifying.kill();
      // What the stopped runtime appended before the crash point is matched but may still be on
      // its way into the scratch store; the fresh runtime must find it there, as the original's
      // restart found it in the log (else it sees a run that started as a turn never taken).
      await scratch.flush();
      boundaryIndex += 1;
      recoveries += 1;
      closing = undefined;
      verifying = verifyingStore();
      runtime = options.makeRuntime(parts());
      engaged = true;
      void runtime.resume(continuity).catch(() => {});
    }
    const outcome = await verifying.settle(() => matcher.matched >= compared.length, stallMs);
    if (outcome.difference) return report(outcome.difference);
    if (outcome.stalled) return report(firstUnmatched(matcher));
    if (!endsInterrupted) {
      const idle = await verifying.settle(undefined, stallMs, runtime.idle(continuity));
      if (idle.difference) return report(idle.difference);
    }
    return report();
  } finally {
    release();
  }
}

/** Decisions replay always re-derives, even in a step a crash cut off. */
const NEVER_TAKEN = new Set(["context.compiled", "step.started"]);

/** How many compared events come before `seq` (they are in seq order: a binary search). */
function countBefore(compared: readonly SpoolEvent[], seq: number): number {
  let low = 0;
  let high = compared.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compared[mid]!.seq < seq) low = mid + 1;
    else high = mid;
  }
  return low;
}

function firstUnmatched(matcher: LaneMatcher, before?: number): ReplayDifference {
  const [expected] = matcher.unmatched(before);
  return expected
    ? { expected, reason: "replay never derived this event: the run went another way before it" }
    : { reason: "replay stopped making progress" };
}

function copyOf(event: SpoolEvent): NewEvent {
  return {
    continuity: event.continuity,
    stream: event.stream,
    type: event.type,
    data: event.data,
    actor: event.actor,
    origin: event.origin,
    ts: event.ts,
    id: event.id,
  };
}

/**
 * True when `event` belongs to a step in `cutOff`: on its step stream, or on a stream named
 * after it (`<step>:…`: its task streams, and the step of a workflow's inner actions, named
 * like the workflow's task stream).
 */
function inCutOffStep(event: SpoolEvent, cutOff: ReadonlySet<string>): boolean {
  const { kind, id } = event.stream;
  if (kind !== "step" && kind !== "task") return false;
  return (kind === "step" && cutOff.has(id)) || taskStepId(id, cutOff) !== undefined;
}

/** Steps whose model call a crash cut off (recovery wrote `step.interrupted` for them). */
function cutOffSteps(events: readonly SpoolEvent[]): Set<string> {
  const steps = new Set<string>();
  for (const event of events) if (event.type === "step.interrupted") steps.add(event.stream.id);
  return steps;
}

function hasOpenRun(events: readonly SpoolEvent[]): boolean {
  const state = foldContinuityState(events);
  return [...state.threads.values()].some((thread) => thread.openRun !== undefined);
}

/**
 * The recorded result of each action attempt: resolves with the logged output, rejects with the
 * logged error, or (an attempt the log has no end for: a timeout, a cancellation, a crash) never
 * settles until the call's signal aborts.
 */
function recordedOutcomes(events: readonly SpoolEvent[]) {
  const ends = new Map<string, SpoolEvent>();
  for (const event of events) {
    if (!event.type.startsWith("action.")) continue;
    const data = event.data as { action_id?: string; attempt?: number };
    if (data.action_id === undefined || data.attempt === undefined) continue;
    if (!["action.succeeded", "action.failed", "action.retrying"].includes(event.type)) continue;
    const key =
      event.stream.kind === "task"
        ? `task:${event.stream.id}#${data.attempt}`
        : `${event.stream.id}#${data.action_id}#${data.attempt}`;
    ends.set(key, event);
  }
  return (call: InterceptedCall): Promise<unknown> => {
    const end =
      ends.get(`${call.step}#${call.actionId}#${call.attempt}`) ??
      ends.get(`task:${taskStreamId(call.step, call.actionId)}#${call.attempt}`);
    if (end?.type === "action.succeeded") {
      return Promise.resolve((end.data as EventData<"action.succeeded">).output);
    }
    if (end) {
      // Rebuild what was thrown so the scheduler records the same error: a `SpoolError` keeps
      // its code and `retryable`; anything else was logged as `action.error` without them.
      const error = (end.data as EventData<"action.failed">).error;
      return Promise.reject(
        error.retryable === undefined
          ? new Error(error.message)
          : new SpoolError(error.code, error.message, { retryable: error.retryable }),
      );
    }
    return new Promise((_resolve, reject) => {
      const stop = () =>
        reject(new SpoolError("action.cancelled", "replay: the attempt was stopped"));
      if (call.signal.aborted) stop();
      else call.signal.addEventListener("abort", stop, { once: true });
    });
  };
}
