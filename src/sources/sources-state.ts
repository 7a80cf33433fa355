import type { EventStore, Projection } from "../log/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";
import { checkSourceEntry } from "./source-definition.js";
import type { SourceCursor, SourceDefinition } from "./source-types.js";

/** Where one source stands, folded from its events. */
export interface SourceState {
  id: string;
  /** The definition its latest `source.added` logged; undefined before one (or if it did not validate). */
  definition: SourceDefinition | undefined;
  /**
   * `active`: reading (or to be started); `paused`, `removed`: stopped by someone; `exhausted`:
   * its input ended; `failed`: a final failure (resume or re-add it to read again).
   */
  status: "active" | "paused" | "removed" | "exhausted" | "failed";
  /** The `n` of its last logged chunk (0 before any). */
  chunks: number;
  /** Where it resumes: the cursor of its last chunk, rotation, exhaustion or final failure. */
  cursor: SourceCursor | undefined;
  /** Lines and input bytes of all its chunks. */
  lines: number;
  bytes: number;
  /** Lines of all its chunks matching each named pattern. */
  matches: Record<string, number>;
  /** The last chunk `n` a turn delivered (0 before any). */
  delivered: number;
  /** The cursor after the last delivered chunk. */
  deliveredCursor?: SourceCursor;
  /** When it last started reading (`source.started`). */
  startedAt?: string;
  /** When its last chunk was logged. */
  lastChunkAt?: string;
  /** Its last `source.failed`, final or not. */
  lastError?: { code: string; message: string };
}

/** Every source of a continuity, by id. */
export interface SourcesState {
  sources: Map<string, SourceState>;
}

/** The event types `applySourceEvent` reads. */
export const SOURCES_STATE_EVENT_TYPES = [
  "source.added",
  "source.removed",
  "source.started",
  "source.chunk",
  "source.rotated",
  "source.paused",
  "source.resumed",
  "source.exhausted",
  "source.failed",
  "turn.added",
] as const;

/** A state with no sources. */
export function emptySourcesState(): SourcesState {
  return { sources: new Map() };
}

function entry(state: SourcesState, id: string): SourceState {
  let found = state.sources.get(id);
  if (!found) {
    found = {
      id,
      definition: undefined,
      status: "active",
      chunks: 0,
      cursor: undefined,
      lines: 0,
      bytes: 0,
      matches: {},
      delivered: 0,
    };
    state.sources.set(id, found);
  }
  return found;
}

/**
 * Applies one event: the `source.*` events and `turn.added` with `sources` (what a turn
 * delivered); every other event leaves the state as it is. Deterministic, no I/O, O(1) per event
 * (O(size) of a definition or of a turn's `sources`). Like every `Projection`, it updates `state`
 * in place and returns it; it never mutates the event.
 *
 * - `source.added` sets the definition; again (a changed definition) it replaces the definition
 *   and keeps the position; a removed or failed source becomes active again, a paused or
 *   exhausted one stays so.
 * - `source.chunk` moves `chunks` to its `n` and the cursor to its cursor, and adds its lines,
 *   bytes and matches; `source.rotated` moves the cursor.
 * - `source.failed` records the error; only `final: true` marks it failed.
 * - `source.paused`, `source.removed`, `source.exhausted` set their status; `source.resumed` and
 *   `source.started` make it active (a removed source stays removed).
 */
export function applySourceEvent(state: SourcesState, event: SpoolEvent): SourcesState {
  switch (event.type) {
    case "source.added": {
      const data = event.data as EventData<"source.added">;
      const source = entry(state, data.source_id);
      source.definition = checkSourceEntry(data.definition).definition;
      if (source.status === "removed" || source.status === "failed") source.status = "active";
      return state;
    }
    case "source.started": {
      const source = entry(state, (event.data as EventData<"source.started">).source_id);
      source.startedAt = event.ts;
      if (source.status !== "removed") source.status = "active";
      return state;
    }
    case "source.chunk": {
      const data = event.data as EventData<"source.chunk">;
      const source = entry(state, data.source_id);
      source.chunks = data.n;
      source.cursor = data.cursor as SourceCursor;
      source.lines += data.line_count;
      source.bytes += data.bytes;
      source.lastChunkAt = event.ts;
      if (data.matches) {
        for (const [name, count] of Object.entries(data.matches))
          source.matches[name] = (source.matches[name] ?? 0) + count;
      }
      return state;
    }
    case "source.rotated": {
      const data = event.data as EventData<"source.rotated">;
      entry(state, data.source_id).cursor = data.cursor as SourceCursor;
      return state;
    }
    case "source.exhausted": {
      const data = event.data as EventData<"source.exhausted">;
      const source = entry(state, data.source_id);
      source.cursor = data.cursor as SourceCursor;
      source.status = "exhausted";
      return state;
    }
    case "source.failed": {
      const data = event.data as EventData<"source.failed">;
      const source = entry(state, data.source_id);
      source.lastError = { code: data.error.code, message: data.error.message };
      if (data.cursor) source.cursor = data.cursor as SourceCursor;
      if (data.final) source.status = "failed";
      return state;
    }
    case "source.paused":
    case "source.resumed":
    case "source.removed": {
      const source = entry(state, (event.data as { source_id: string }).source_id);
      if (event.type === "source.removed") source.status = "removed";
      else if (event.type === "source.paused") source.status = "paused";
      else if (source.status !== "removed") source.status = "active";
      return state;
    }
    case "turn.added":
      return applyDelivery(state, event.data as EventData<"turn.added">);
    default:
      return state;
  }
}

function applyDelivery(state: SourcesState, data: EventData<"turn.added">): SourcesState {
  for (const delivery of data.sources ?? []) {
    const source = entry(state, delivery.source_id);
    if (delivery.to_chunk >= source.delivered) {
      source.delivered = delivery.to_chunk;
      source.deliveredCursor = delivery.cursor as SourceCursor;
    }
  }
  return state;
}

/** `applySourceEvent` as a `Projection` for `EventStore.fold` and replay. */
export const sourcesStateProjection: Projection<SourcesState> = {
  initial: emptySourcesState,
  reduce: applySourceEvent,
};

/**
 * Folds a continuity's sources from its log, reading only the event types the fold needs
 * (`SOURCES_STATE_EVENT_TYPES`).
 */
export function readSourcesState(store: EventStore, continuity: string): Promise<SourcesState> {
  return store.fold({ continuity, types: SOURCES_STATE_EVENT_TYPES }, sourcesStateProjection);
}
