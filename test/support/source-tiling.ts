/**
 * The stream invariant of a handoff, checked against a whole log: at every `handoff.seeded`, for
 * each source the old thread's lineage was delivered, the chunks the seed says are summarized and
 * those it carries verbatim tile the delivered chunks (the first to the last, no gap, no
 * overlap); the carried ones are exactly those of the trailing messages' delivery turns; each
 * summarized chunk lies in the `sources` of a summary of the lineage made before the seed; the
 * stated cursor is the one logged after the last delivered chunk; and the next chunk the lineage
 * is delivered after the seed is the one the seed says it continues at. Every `summary.completed`
 * records exactly the chunks of its own thread's delivery turns inside its `covers`.
 */
import { isDeepStrictEqual } from "node:util";
import {
  type ChunkSpan,
  mergeSpans,
  positionFromData,
  type StreamPosition,
  spanFromData,
} from "../../src/continuity/index.js";
import type { EventStore } from "../../src/log/index.js";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";

/** What `checkSourceTiling` found. */
export interface SourceTiling {
  /** Handoffs whose lineage had been delivered chunks. */
  handoffs: number;
  /** Handoffs that carried some chunks verbatim and summarized others. */
  split: number;
  /** Handoffs of a thread that was itself seeded with source positions. */
  chained: number;
  /** Each seed's positions, by continuation thread. */
  positions: Map<string, StreamPosition[]>;
  problems: string[];
}

interface Run {
  seq: number;
  thread: string;
  spans: ChunkSpan[];
}

interface Summary {
  seq: number;
  data: EventData<"summary.completed">;
}

/** What the log says of deliveries: each run that took a delivery turn, and every summary. */
interface Deliveries {
  runs: Run[];
  summaries: Summary[];
  /** Each thread's chain root: the threads of one lineage share it. */
  rootOf: Map<string, string>;
}

/** Checks every handoff of `continuity` in `store` (see the file's comment). */
export async function checkSourceTiling(
  store: EventStore,
  continuity: string,
): Promise<SourceTiling> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity })) events.push(event);
  const log = readDeliveries(events);
  const result: SourceTiling = {
    handoffs: 0,
    split: 0,
    chained: 0,
    positions: new Map(),
    problems: [],
  };
  for (const { data } of log.summaries) {
    const { thread, from_seq, to_seq } = data.covers;
    const expected = mergeSpans(
      log.runs
        .filter((run) => run.thread === thread && run.seq >= from_seq && run.seq <= to_seq)
        .flatMap((run) => run.spans),
    );
    const recorded = (data.sources ?? []).map(spanFromData);
    if (!isDeepStrictEqual(sorted(recorded), sorted(expected))) {
      result.problems.push(
        `${data.id} records ${JSON.stringify(recorded)}, its range delivered ${JSON.stringify(expected)}`,
      );
    }
  }
  for (const seeded of events.filter((event) => event.type === "handoff.seeded")) {
    checkSeed(log, seeded, result);
  }
  return result;
}

function readDeliveries(events: readonly SpoolEvent[]): Deliveries {
  const turnSpans = new Map<string, ChunkSpan[]>();
  const log: Deliveries = { runs: [], summaries: [], rootOf: new Map() };
  /** Turns a run took: a later run of the same turn (a resumed one) delivers nothing new. */
  const taken = new Set<string>();
  for (const event of events) {
    if (event.type === "turn.added") {
      const data = event.data as EventData<"turn.added">;
      if (data.sources) turnSpans.set(event.id, data.sources.map(spanFromData));
    } else if (event.type === "thread.started") {
      log.rootOf.set(event.stream.id, (event.data as EventData<"thread.started">).chain_root);
    } else if (event.type === "run.started") {
      const turn = (event.data as EventData<"run.started">).turn;
      if (turn === undefined || taken.has(turn)) continue;
      taken.add(turn);
      const spans = turnSpans.get(turn);
      if (spans) log.runs.push({ seq: event.seq, thread: event.stream.id, spans });
    } else if (event.type === "summary.completed") {
      log.summaries.push({ seq: event.seq, data: event.data as EventData<"summary.completed"> });
    }
  }
  return log;
}

/** Checks one `handoff.seeded` against what its lineage was delivered before and after it. */
function checkSeed(log: Deliveries, seeded: SpoolEvent, result: SourceTiling): void {
  const data = seeded.data as EventData<"handoff.seeded">;
  const at = `handoff ${data.from} → ${seeded.stream.id}`;
  const root = log.rootOf.get(data.from);
  const inLineage = (thread: string) => log.rootOf.get(thread) === root;
  const before = log.runs.filter((run) => run.seq < seeded.seq && inLineage(run.thread));
  const after = log.runs.filter((run) => run.seq > seeded.seq && inLineage(run.thread));
  const delivered = mergeSpans(before.flatMap((run) => run.spans));
  const positions = (data.sources ?? []).map(positionFromData);
  if ((result.positions.get(data.from)?.length ?? 0) > 0) result.chained += 1;
  result.positions.set(seeded.stream.id, positions);
  if (delivered.length > 0) result.handoffs += 1;
  const carried = mergeSpans(
    data.trailing.flatMap((message) =>
      message.role === "user" && message.sources ? message.sources.map(spanFromData) : [],
    ),
  );
  const backing = log.summaries
    .filter((summary) => summary.seq < seeded.seq && inLineage(summary.data.covers.thread))
    .flatMap((summary) => (summary.data.sources ?? []).map(spanFromData));
  if (positions.length !== delivered.length) {
    result.problems.push(
      `${at}: ${positions.length} positions for ${delivered.length} sources delivered`,
    );
  }
  for (const span of delivered) {
    const of = `${at}, ${span.sourceId}`;
    const position = positions.find((entry) => entry.sourceId === span.sourceId);
    if (!position) {
      result.problems.push(`${of}: no position`);
      continue;
    }
    if (position.summarized && position.carried) result.split += 1;
    const found = [
      ...positionProblems(position, span, carried),
      ...gaps(position),
      ...unbacked(position, backing),
    ];
    const next = after
      .flatMap((run) => run.spans)
      .find((entry) => entry.sourceId === span.sourceId);
    if (next && next.fromChunk !== position.toChunk + 1) {
      found.push(`continues at ${position.toChunk + 1}, the next delivery is ${next.fromChunk}`);
    }
    for (const text of found) result.problems.push(`${of}: ${text}`);
  }
}

/** Where a position differs from what was delivered (`span`) and carried verbatim. */
function positionProblems(
  position: StreamPosition,
  span: ChunkSpan,
  carried: readonly ChunkSpan[],
): string[] {
  const found: string[] = [];
  if (position.fromChunk !== span.fromChunk || position.toChunk !== span.toChunk) {
    found.push(
      `says ${position.fromChunk}–${position.toChunk}, delivered ${span.fromChunk}–${span.toChunk}`,
    );
  }
  if (!isDeepStrictEqual(position.cursor, span.cursor)) {
    found.push(`cursor ${JSON.stringify(position.cursor)}, logged ${JSON.stringify(span.cursor)}`);
  }
  const kept = carried.find((entry) => entry.sourceId === span.sourceId);
  if (!isDeepStrictEqual(range(position.carried), range(kept))) {
    found.push(
      `says carried ${JSON.stringify(position.carried)}, trailing holds ${JSON.stringify(kept)}`,
    );
  }
  return found;
}

/** The chunks a position says are summarized that no summary's recorded `sources` holds. */
function unbacked(position: StreamPosition, backing: readonly ChunkSpan[]): string[] {
  const found: string[] = [];
  const { summarized } = position;
  for (let n = summarized?.fromChunk ?? 1; n <= (summarized?.toChunk ?? 0); n++) {
    const backed = backing.some(
      (covered) =>
        covered.sourceId === position.sourceId && covered.fromChunk <= n && n <= covered.toChunk,
    );
    if (!backed) found.push(`chunk ${n} stated summarized, no summary covers it`);
  }
  return found;
}

/** Where a position's parts do not tile its chunks: a gap or an overlap. */
function gaps(position: StreamPosition): string[] {
  const { summarized, carried } = position;
  const found: string[] = [];
  if (summarized && summarized.fromChunk !== position.fromChunk) {
    found.push(`summarized starts at ${summarized.fromChunk}, not ${position.fromChunk}`);
  }
  if (carried && carried.toChunk !== position.toChunk) {
    found.push(`carried ends at ${carried.toChunk}, not ${position.toChunk}`);
  }
  const end = summarized ? summarized.toChunk : position.fromChunk - 1;
  const start = carried ? carried.fromChunk : position.toChunk + 1;
  if (end + 1 < start)
    found.push(`chunks ${end + 1}–${start - 1} are neither summarized nor carried`);
  if (end + 1 > start) found.push(`chunks ${start}–${end} are both summarized and carried`);
  return found;
}

function range(span: { fromChunk: number; toChunk: number } | undefined) {
  return span ? { fromChunk: span.fromChunk, toChunk: span.toChunk } : undefined;
}

function sorted(spans: ChunkSpan[]): ChunkSpan[] {
  return [...spans].sort((a, b) => a.sourceId.localeCompare(b.sourceId));
}
