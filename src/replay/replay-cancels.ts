import { isBackgroundThread } from "../runtime/index.js";
import type { SpoolEvent } from "../spec/index.js";
import { isCompared } from "./replay-compare.js";
import type { DerivedEvent } from "./verifying-store.js";

/** Where the log shows a run cancelled from outside (Ctrl-C, `runtime.cancel`, a close). */
export interface CancelPoint {
  /** The seq of the cancel's first consequence: everything before it happened before it. */
  seq: number;
  thread: string;
  /** The reason the cancel gave, as an `action.cancelled` of the run recorded it. */
  reason: string;
}

/** The reason `AgentRuntime.cancel` gives when none is named (what Ctrl-C gives). */
const DEFAULT_REASON = "cancelled by the user";

/**
 * The cancels from outside that replay must re-enact, by the seq of their first consequence. A
 * cancel is an input the log does not hold as an event of its own: it shows only through what it
 * caused in a foreground run that ended `cancelled` (an `action.cancelled`, a model call that
 * ended `provider.cancelled`, a `cancel` loop decision, the `run.completed`). A run a new turn
 * interrupted (a `turn.added` before the first consequence) is left out: replaying that turn
 * re-enacts it. Child and background threads are left out: their parent's cancel reaches them.
 * Pure.
 */
export function cancelPoints(events: readonly SpoolEvent[]): Map<number, CancelPoint> {
  const children = new Set<string>();
  const open = new Map<string, { first?: SpoolEvent; reason?: string; interrupted: boolean }>();
  const points = new Map<number, CancelPoint>();
  /** The point of each thread's last cancelled run, until its `thread.cancelled` names the reason. */
  const stopped = new Map<string, CancelPoint>();
  const runOf = (event: SpoolEvent) => {
    const id = event.stream.id;
    if (event.stream.kind === "thread") return id;
    if (event.stream.kind !== "step" && event.stream.kind !== "task") return undefined;
    for (const thread of open.keys()) if (id.startsWith(`${thread}:`)) return thread;
    return undefined;
  };
  for (const event of events) {
    const data = event.data as Record<string, unknown>;
    if (event.type === "thread.started" && data.parent !== undefined) {
      children.add(event.stream.id);
    }
    // A turn that came mid-run and was not queued behind it interrupted it (`interrupt` policy).
    if (event.type === "turn.added" || event.type === "turn.queued") {
      for (const run of open.values()) {
        if (!run.first) run.interrupted = event.type === "turn.added";
      }
    }
    // The thread's own record of the stop carries the cancel's reason as it was given.
    if (event.type === "thread.cancelled" && typeof data.reason === "string") {
      const point = stopped.get(event.stream.id);
      stopped.delete(event.stream.id);
      if (point && data.reason.startsWith("interrupted by a new turn")) points.delete(point.seq);
      else if (point) point.reason = data.reason;
      continue;
    }
    if (event.type === "run.started") {
      const thread = event.stream.id;
      if (!children.has(thread) && !isBackgroundThread(thread)) {
        open.set(thread, { interrupted: false });
      }
      continue;
    }
    const thread = runOf(event);
    const run = thread !== undefined ? open.get(thread) : undefined;
    if (!run || thread === undefined) continue;
    if (isConsequence(event)) {
      if (!run.first) run.first = event;
      if (event.type === "action.cancelled" && run.reason === undefined) {
        run.reason = typeof data.reason === "string" ? data.reason : undefined;
      }
    }
    if (event.type === "run.completed" && event.stream.kind === "thread") {
      open.delete(thread);
      if (data.status !== "cancelled" || !run.first) continue;
      const byTurn =
        run.reason !== undefined
          ? run.reason.startsWith("interrupted by a new turn")
          : run.interrupted;
      if (byTurn) continue;
      const point = { seq: run.first.seq, thread, reason: run.reason ?? DEFAULT_REASON };
      points.set(point.seq, point);
      stopped.set(thread, point);
    }
  }
  return points;
}

function isConsequence(event: SpoolEvent): boolean {
  const data = event.data as Record<string, unknown>;
  switch (event.type) {
    case "action.cancelled":
      return true;
    case "message.partial":
    case "message.failed":
      return (data.error as { code?: unknown } | undefined)?.code === "provider.cancelled";
    case "loop.decided":
      return data.decision === "cancel";
    case "run.completed":
      return data.status === "cancelled";
    default:
      return false;
  }
}

/** Names an event by its stream, type and action: what a cancel gate waits for. */
export function gateKey(event: Pick<DerivedEvent, "type" | "stream" | "data">): string {
  const action = (event.data as { action_id?: unknown } | undefined)?.action_id;
  return `${event.stream.kind}:${event.stream.id}|${event.type}|${typeof action === "string" ? action : ""}`;
}

/**
 * For each cancel point, gates on the last compared event before its first consequence and on
 * the last event before it of each action the cancel ended: the replayed runtime's append of that event is answered only once the cancel is
 * issued, so the cancel lands where the original's did (while the runtime waited for it).
 */
export function cancelGatesOf(
  original: readonly SpoolEvent[],
  cancels: ReadonlyMap<number, CancelPoint>,
): Map<string, CancelGate> {
  const gates = new Map<string, CancelGate>();
  const actionOf = (event: SpoolEvent) => (event.data as { action_id?: unknown }).action_id;
  for (const point of cancels.values()) {
    const start = concludingCommitStart(original, point.seq);
    const before = original.filter((event) => event.seq < start && isCompared(event));
    // The actions this cancel ended: each is held at its own last step before the cancel.
    const ended = new Set<unknown>();
    for (const event of original) {
      if (event.seq < point.seq) continue;
      if (event.type === "run.completed" && event.stream.id === point.thread) break;
      if (event.type === "action.cancelled") ended.add(actionOf(event));
    }
    const held = [
      before.at(-1),
      ...[...ended].map((action) => before.filter((event) => actionOf(event) === action).at(-1)),
    ];
    for (const last of held) {
      if (!last) continue;
      const key = gateKey(last);
      const occurrence = before.filter(
        (event) => event.seq <= last.seq && gateKey(event) === key,
      ).length;
      let open!: () => void;
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      gates.set(key, { seq: point.seq, occurrence, reached: false, promise, open });
    }
  }
  return gates;
}

/**
 * The seq where the commit holding a cancel's first consequence begins. A `loop.decided: cancel`
 * is made before the step's `step.completed` (and its sinks' reports) and committed with them:
 * the run saw the cancel while it waited on the append before that commit, so the gate goes
 * there. Any other consequence is its own commit's start.
 */
export function concludingCommitStart(original: readonly SpoolEvent[], seq: number): number {
  let at = original.findIndex((event) => event.seq === seq);
  const first = original[at];
  if (first?.type !== "loop.decided") return seq;
  const step = (first.data as { step?: unknown }).step;
  while (at > 0) {
    const previous = original[at - 1]!;
    const ofStep = previous.stream.kind === "step" && previous.stream.id === step;
    if (!ofStep || !CONCLUDING_TYPES.has(previous.type)) break;
    at -= 1;
  }
  return original[at]!.seq;
}

/** What a step's concluding commit holds before its `loop.decided`. */
const CONCLUDING_TYPES = new Set(["step.completed", "sink.failed", "sink.lagging"]);

/** A hold on one derived event's append until a cancel is issued (see `cancelGatesOf`). */
export interface CancelGate {
  /** The seq of the cancel's first consequence. */
  seq: number;
  /** Which occurrence of the gate's key among the derived events is held. */
  occurrence: number;
  /** The replayed runtime has appended the held event and waits for its answer. */
  reached: boolean;
  promise: Promise<void>;
  open: () => void;
}
