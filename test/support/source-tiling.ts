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

/** Checks every handoff of `continuity` in `store` (see the file's comment). */
export async function checkSourceTiling(
  store: EventStore,
  continuity: string,
): Promise<SourceTiling> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity })) events.push(event);
  const turnSpans = new Map<string, ChunkSpan[]>();
  const rootOf = new Map<string, string>();
  const runs: Run[] = [];
  /** Turns a run took: a later run of the same turn (a resumed one) delivers nothing new. */
  const taken = new Set<string>();
  const summaries: { seq: number; data: EventData<"summary.completed"> }[] = [];
  for (const event of events) {
    if (event.type === "turn.added") {
      const data = event.data as EventData<"turn.added">;
      if (data.sources) turnSpans.set(event.id, data.sources.map(spanFromData));
    } else if (event.type === "thread.started") {
      rootOf.set(event.stream.id, (event.data as EventData<"thread.started">).chain_root);
    } else if (event.type === "run.started") {
      const turn = (event.data as EventData<"run.started">).turn;
      if (turn === undefined || taken.has(turn)) continue;
      taken.add(turn);
      const spans = turnSpans.get(turn);
      if (spans) runs.push({ seq: event.seq, thread: event.stream.id, spans });
    } else if (event.type === "summary.completed") {
      summaries.push({ seq: event.seq, data: event.data as EventData<"summary.completed"> });
    }
  }

  const result: SourceTiling = {
    handoffs: 0,
    split: 0,
    chained: 0,
    positions: new Map(),
    problems: [],
  };
  const problem = (text: string) => result.problems.push(text);

  for (const { data } of summaries) {
    const { thread, from_seq, to_seq } = data.covers;
    const expected = mergeSpans(
      runs
        .filter((run) => run.thread === thread && run.seq >= from_seq && run.seq <= to_seq)
        .flatMap((run) => run.spans),
    );
    const recorded = (data.sources ?? []).map(spanFromData);
    if (!isDeepStrictEqual(sorted(recorded), sorted(expected))) {
      problem(
        `${data.id} records ${JSON.stringify(recorded)}, its range delivered ${JSON.stringify(expected)}`,
      );
    }
  }

  for (const seeded of events.filter((event) => event.type === "handoff.seeded")) {
    const data = seeded.data as EventData<"handoff.seeded">;
    const at = `handoff ${data.from} → ${seeded.stream.id}`;
    const root = rootOf.get(data.from);
    const inLineage = (thread: string) => rootOf.get(thread) === root;
    const before = runs.filter((run) => run.seq < seeded.seq && inLineage(run.thread));
    const after = runs.filter((run) => run.seq > seeded.seq && inLineage(run.thread));
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
    const backing = summaries
      .filter((summary) => summary.seq < seeded.seq && inLineage(summary.data.covers.thread))
      .flatMap((summary) => (summary.data.sources ?? []).map(spanFromData));
    if (positions.length !== delivered.length) {
      problem(`${at}: ${positions.length} positions for ${delivered.length} sources delivered`);
    }
    for (const span of delivered) {
      const position = positions.find((entry) => entry.sourceId === span.sourceId);
      const of = `${at}, ${span.sourceId}`;
      if (!position) {
        problem(`${of}: no position`);
        continue;
      }
      if (position.fromChunk !== span.fromChunk || position.toChunk !== span.toChunk) {
        problem(
          `${of}: says ${position.fromChunk}–${position.toChunk}, delivered ${span.fromChunk}–${span.toChunk}`,
        );
      }
      if (!isDeepStrictEqual(position.cursor, span.cursor)) {
        problem(
          `${of}: cursor ${JSON.stringify(position.cursor)}, logged ${JSON.stringify(span.cursor)}`,
        );
      }
      const kept = carried.find((entry) => entry.sourceId === span.sourceId);
      if (!isDeepStrictEqual(range(position.carried), range(kept))) {
        problem(
          `${of}: says carried ${JSON.stringify(position.carried)}, trailing holds ${JSON.stringify(kept)}`,
        );
      }
      for (const text of gaps(position)) problem(`${of}: ${text}`);
      if (position.summarized && position.carried) result.split += 1;
      for (
        let n = position.summarized?.fromChunk ?? 1;
        n <= (position.summarized?.toChunk ?? 0);
        n++
      ) {
        const backed = backing.some(
          (covered) =>
            covered.sourceId === span.sourceId && covered.fromChunk <= n && n <= covered.toChunk,
        );
        if (!backed) problem(`${of}: chunk ${n} stated summarized, no summary covers it`);
      }
      const next = after
        .flatMap((run) => run.spans)
        .find((entry) => entry.sourceId === span.sourceId);
      if (next && next.fromChunk !== position.toChunk + 1) {
        problem(
          `${of}: continues at ${position.toChunk + 1}, the next delivery is ${next.fromChunk}`,
        );
      }
    }
  }
  return result;
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
