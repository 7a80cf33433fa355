import { isFeedSourceStream } from "../feeds/index.js";
import { WATCH_EVENT_TYPES } from "../frames/index.js";
import { canonicalJson, eventSpec, type SpoolEvent, type StreamRef } from "../spec/index.js";

/**
 * Event types replay does not compare: they record the environment, not a decision (signatures,
 * sink health, provider retries before the first byte, which a recorded answer never needs, and
 * the windows models were measured against, which replay serves from the log: each runtime of
 * the original logs them once, and a log does not always show where one runtime took over from
 * another). Droppable events (token deltas, progress) are never compared either.
 */
export const UNCOMPARED_TYPES: ReadonlySet<string> = new Set([
  "checkpoint.signed",
  "sink.failed",
  "sink.lagging",
  "provider.retrying",
  "model.described",
]);

/** Fields that measure time: they differ on every run and decide nothing. */
const TIMING_FIELDS = new Set(["duration_ms", "waited_ms", "delay_ms", "lag_ms"]);

/**
 * Fields that hold log positions: a replay that re-enacts a crash may place events at other
 * seqs, so positions (and the bundle manifest that names them) decide nothing; the request a
 * context compiled to is compared through its `digest`.
 */
const POSITION_FIELDS = new Set(["seq", "from_seq", "to_seq", "ranges", "bundle"]);

/**
 * Event types that are inputs when they are on the continuity stream (a user pinned a fact with
 * `spool pin`; the feed engine read a source) and decisions when on a thread or step (the model
 * pinned it with the `pin` action, or changed a feed with an internal action).
 */
const CONTINUITY_INPUTS: ReadonlySet<string> = new Set([
  "context.pinned",
  "context.unpinned",
  // The feed engine's own record of the world (a step's feeds are compared as context.feeds).
  "feed.added",
  "feed.updated",
  "feed.removed",
  "feed.refreshed",
  "feed.failed",
]);

/**
 * What a source's runner writes as it reads the world: replay copies these and never opens a
 * source.
 */
const SOURCE_READS: ReadonlySet<string> = new Set([
  "source.started",
  "source.chunk",
  "source.rotated",
  "source.failed",
  "source.exhausted",
]);

/**
 * Changes to a source: the model's decisions when `by: "action"` (replay runs the action and
 * compares what it logs), inputs otherwise (the manifest at start, the CLI, the runtime).
 */
const SOURCE_CHANGES: ReadonlySet<string> = new Set([
  "source.added",
  "source.removed",
  "source.paused",
  "source.resumed",
]);

/** The stream watch's record (docs/stream-watch.md): what the watch loops wrote, beside the runtime. */
const WATCH_RECORDS: ReadonlySet<string> = new Set([...WATCH_EVENT_TYPES, "watch.stopped"]);

/**
 * True for what a stream watch and its frame source wrote as they looked at the screen: the
 * `frame.*` events, the frames kept (`artifact.stored`, purpose `frame`), and the watch's notes,
 * compactions, commentary and settings (but a settings change the model made with an action,
 * which replay re-derives). Replay starts no watch and calls no vision model: it copies these
 * in order, so each step's thread history (commentary is an assistant message of it) and
 * recorded notes are the original's.
 */
export function isWatchRecord(event: { type: string; data?: unknown }): boolean {
  if (event.type.startsWith("frame.")) return true;
  if (event.type === "artifact.stored") {
    return (event.data as { purpose?: unknown } | undefined)?.purpose === "frame";
  }
  return WATCH_RECORDS.has(event.type) && (event.data as { by?: unknown })?.by !== "action";
}

/** True when replay re-derives `event` and compares it. */
export function isCompared(event: { type: string; stream?: StreamRef; data?: unknown }): boolean {
  const spec = eventSpec(event.type);
  if (!spec || spec.criticality === "droppable" || isInput(event)) return false;
  return !UNCOMPARED_TYPES.has(event.type) && !isWorldRecord(event);
}

/**
 * True for what the world wrote while an effect ran, not the runtime: the relic host's lifecycle
 * and calls (`relic.*`), the browser relic's crashes (`browser.*`), the kv relic's state (`kv.*`) and the MCP servers' tool lists (`mcp.*`, read back from the log when the agent is assembled). Replay reaches no relic (it takes the
 * recorded results), so it cannot re-derive these; the decisions around them (dispatch, result,
 * next context) it does. So are the reads of feed sources on their `feed@<id>` steps (and the
 * workflows they ran): replay serves the feeds from `context.feeds` and reads no source. A workflow's graph is not among them: replay runs the workflow, with
 * its inner actions answered from the log, and compares every graph event. A failing memory index
 * (`memory.failed`) is the world's too: replay never opens the index, and gives the thread no
 * memory, as the failure did.
 */
export function isWorldRecord(event: {
  type: string;
  stream?: StreamRef;
  data?: unknown;
}): boolean {
  return (
    event.type.startsWith("relic.") ||
    event.type.startsWith("browser.") ||
    event.type.startsWith("kv.") ||
    event.type.startsWith("mcp.") ||
    event.type === "memory.failed" ||
    (event.stream !== undefined && isFeedSourceStream(event.stream.id))
  );
}

/**
 * True for inputs from outside (turns, continuity creation, pins by the user, what sources read
 * and the changes to them the model did not make, what a stream watch saw and said): replay
 * copies them, never derives them.
 */
export function isInput(event: { type: string; stream?: StreamRef; data?: unknown }): boolean {
  if (eventSpec(event.type)?.input === true) return true;
  if (isWatchRecord(event)) return true;
  if (SOURCE_READS.has(event.type) || SOURCE_CHANGES.has(event.type)) {
    return isSourceInput(event);
  }
  return CONTINUITY_INPUTS.has(event.type) && event.stream?.kind === "continuity";
}

/** True for a source's event that replay copies (see `isInput`): what it read, or a change to it by someone other than the model. */
export function isSourceInput(event: { type: string; data?: unknown }): boolean {
  return (
    SOURCE_READS.has(event.type) ||
    (SOURCE_CHANGES.has(event.type) && (event.data as { by?: unknown })?.by !== "action")
  );
}

/**
 * The lane an event is compared in: its stream, for action events also the action (its
 * lifecycle, and the state changes an internal action records: `variable.*`, `feed.*`), and for
 * a workflow graph's node events (`step.*` of `kind: graph`, `foreach.completed`) also the node.
 * An action runs beside the model's stream, so what it records is ordered within its own lane,
 * not against the stream's `message.completed`.
 * Within a lane the order is deterministic; across lanes concurrency may interleave events
 * differently from one run to the next without any decision being different (two steps of a
 * workflow that run at once may finish in either order).
 */
export function laneOf(event: { type: string; stream: StreamRef; data: unknown }): string {
  const base = `${event.stream.kind}/${event.stream.id}`;
  if (event.stream.kind === "task" && isNodeEvent(event)) {
    return `${base}>${(event.data as { node: string }).node}`;
  }
  if (
    event.type.startsWith("action.") ||
    event.type.startsWith("variable.") ||
    event.type.startsWith("feed.")
  ) {
    const data = event.data as { action_id?: unknown; name?: unknown };
    if (typeof data.action_id === "string") return `${base}#${data.action_id}`;
    if (event.type.startsWith("variable.") && typeof data.name === "string") {
      return `${base}$${data.name}`;
    }
  }
  return base;
}

/** A workflow node's own event: its `step.started`/`step.completed` or `foreach.completed`. */
function isNodeEvent(event: { type: string; data: unknown }): boolean {
  const data = event.data as { kind?: unknown; node?: unknown } | undefined;
  if (typeof data?.node !== "string") return false;
  return (
    event.type === "foreach.completed" || (event.type.startsWith("step.") && data.kind === "graph")
  );
}

/** What replay compares of an event: its type and data, without times and log positions. */
export function comparable(event: { type: string; data: unknown }): string {
  return canonicalJson({ type: event.type, data: withoutTiming(event.data) });
}

function withoutTiming(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTiming);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!TIMING_FIELDS.has(key) && !POSITION_FIELDS.has(key)) out[key] = withoutTiming(field);
  }
  return out;
}

/** Where replay and the log disagree. */
export interface ReplayDifference {
  /** The logged event replay expected (absent when replay derived an event the log lacks). */
  expected?: SpoolEvent;
  /** What replay derived in its place (absent when it derived nothing there). */
  actual?: { type: string; stream: StreamRef; data: unknown };
  reason: string;
}

/**
 * Matches derived events against the logged ones, lane by lane. `offer` takes a derived event:
 * it matches the head of its lane, or is a difference. Events the log has and replay never
 * derived are found with `unmatched`.
 */
export class LaneMatcher {
  readonly #lanes = new Map<string, SpoolEvent[]>();
  readonly #heads = new Map<string, number>();
  #matched = 0;
  #time = 0;

  constructor(expected: readonly SpoolEvent[]) {
    for (const event of expected) {
      const lane = laneOf(event);
      const list = this.#lanes.get(lane) ?? [];
      list.push(event);
      this.#lanes.set(lane, list);
    }
  }

  /** The logged time (ms since the epoch) of the latest logged event matched, 0 before any. */
  get time(): number {
    return this.#time;
  }

  /** How many logged events have been matched. */
  get matched(): number {
    return this.#matched;
  }

  /**
   * Matches a derived event; returns the difference when it does not match. A logged event at
   * `before` or later is not matched (replay passes the seq of the restart ahead: what a runtime
   * derives before a restart can only be what the log has before it).
   */
  offer(
    event: { type: string; stream: StreamRef; data: unknown },
    before = Number.POSITIVE_INFINITY,
  ): ReplayDifference | undefined {
    const lane = laneOf(event);
    const list = this.#lanes.get(lane);
    const head = this.#heads.get(lane) ?? 0;
    const expected = list?.[head];
    if (expected === undefined) {
      return { actual: event, reason: "replay derived an event the log does not have" };
    }
    if (expected.seq >= before) {
      return {
        expected,
        actual: event,
        reason: "replay derived an event the log has only after the restart ahead",
      };
    }
    if (comparable(expected) !== comparable(event)) {
      return { expected, actual: event, reason: "replay derived a different event" };
    }
    this.#heads.set(lane, head + 1);
    this.#matched += 1;
    this.#time = Math.max(this.#time, Date.parse(expected.ts));
    return undefined;
  }

  /** The logged events not matched yet, among those with seq below `before`, oldest first. */
  unmatched(before = Number.POSITIVE_INFINITY): SpoolEvent[] {
    const out: SpoolEvent[] = [];
    for (const [lane, list] of this.#lanes) {
      for (let index = this.#heads.get(lane) ?? 0; index < list.length; index++) {
        if (list[index]!.seq < before) out.push(list[index]!);
      }
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Marks a logged event as accounted for without a derived one (taken from the log). */
  skip(event: SpoolEvent): void {
    const lane = laneOf(event);
    const list = this.#lanes.get(lane);
    const head = this.#heads.get(lane) ?? 0;
    if (list?.[head] === event) {
      this.#heads.set(lane, head + 1);
      this.#matched += 1;
      this.#time = Math.max(this.#time, Date.parse(event.ts));
    }
  }
}
