import type { Projection } from "../src/log/event-store.js";
import type { AnyNewEvent, SpoolEvent } from "../src/spec/index.js";

/** Text length giving a stored row of about 300 bytes (envelope + hash + data). */
export const ROW_TEXT = 128;
/** Text length giving a data column of about 300 bytes (the replay row). */
export const DATA_TEXT = 290;

const WORDS = "the log keeps every turn of a long lived agent so that nothing said is lost".split(
  " ",
);
const texts = new Map<number, string[]>();

/** One of 64 prepared texts of exactly `length` characters (no JSON escapes), picked by `i`. */
export function text(length: number, i: number): string {
  let pool = texts.get(length);
  if (!pool) {
    pool = Array.from({ length: 64 }, (_, k) => {
      let out = `${k} `;
      for (let w = k; out.length < length; w += 7) out += `${WORDS[w % WORDS.length]} `;
      return out.slice(0, length);
    });
    texts.set(length, pool);
  }
  return pool[i & 63]!;
}

/** A critical `turn.added` input of `textLength` characters. */
export function turnAdded(continuity: string, i: number, textLength = ROW_TEXT): AnyNewEvent {
  return {
    continuity,
    type: "turn.added",
    actor: "bench",
    origin: "cli",
    data: { text: text(textLength, i) },
  };
}

/** Steps the interleaved droppable workload spreads its deltas over. */
export const STEPS = 8;

/**
 * A droppable `token.delta` of step `i % steps`, in block `i % 2`. Adjacent deltas never share a
 * block, so none coalesce and every delta becomes one stored row, like the rows of the raw
 * ceiling. With one step they are a model stream of two interleaved blocks (as reasoning and
 * text interleave); with several, steps streaming at once, each event in another step.
 */
export function tokenDelta(
  continuity: string,
  i: number,
  textLength = ROW_TEXT,
  steps = 1,
): AnyNewEvent {
  return {
    continuity,
    type: "token.delta",
    stream: { kind: "step", id: `step-${i % steps}` },
    data: { block: `b${i % 2}`, text: text(textLength, i) },
  };
}

/** Columns of Spool's `events` table, which the raw ceilings copy. */
export const RAW_COLUMNS = [
  "seq",
  "id",
  "continuity",
  "stream_kind",
  "stream_id",
  "type",
  "ts",
  "actor",
  "origin",
  "criticality",
  "data",
  "hash",
] as const;

const HASH = "5f1e0d9c8b7a69584736251403f2e1d0c9b8a79685746352413f2e1d0c9b8a7f";
const TS = "2026-01-31T12:00:00.000Z";

/** One row of the raw ceilings: the same columns and sizes as a stored `turn.added`. */
export function rawRow(seq: number, textLength = ROW_TEXT): unknown[] {
  return [
    seq,
    seq.toString(32).toUpperCase().padStart(26, "0"),
    "bench",
    "continuity",
    "bench",
    "turn.added",
    TS,
    "bench",
    "cli",
    "critical",
    JSON.stringify({ text: text(textLength, seq) }),
    HASH,
  ];
}

/**
 * The raw rows `first … first + count - 1`, flattened `perGroup` rows at a time into one parameter
 * list per group (a multi-row statement's values, or one row's when `perGroup` is 1). Ceilings
 * build these before their clock starts, so they time the engine alone.
 */
export function rawParameterGroups(first: number, count: number, perGroup: number): unknown[][] {
  const groups: unknown[][] = [];
  for (let start = first; start < first + count; start += perGroup) {
    const values: unknown[] = [];
    for (let seq = start; seq < Math.min(first + count, start + perGroup); seq++) {
      values.push(...rawRow(seq));
    }
    groups.push(values);
  }
  return groups;
}

/** What the replay row folds into: it touches every event's type and data. */
export interface ReplayState {
  events: number;
  chars: number;
  types: Map<string, number>;
}

/** Adds one event's type and data to `state` (the work both Spool and the raw scan do). */
export function countEvent(state: ReplayState, type: string, data: unknown): ReplayState {
  state.events += 1;
  state.types.set(type, (state.types.get(type) ?? 0) + 1);
  const body = data as { text?: unknown };
  if (typeof body.text === "string") state.chars += body.text.length;
  return state;
}

/** The replay projection: counts events by type and sums their text lengths. */
export const replayProjection: Projection<ReplayState> = {
  initial: () => ({ events: 0, chars: 0, types: new Map() }),
  reduce: (state: ReplayState, event: SpoolEvent) => countEvent(state, event.type, event.data),
};
