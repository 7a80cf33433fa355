import type { EventStore } from "../log/index.js";
import {
  type DigestChunk,
  readChunkLines,
  renderSourceDigest,
  type SourceCursor,
} from "../sources/index.js";
import { type EventData, isIdentifier } from "../spec/index.js";
import type { ContinuityDriver } from "./continuity-driver.js";
import type { Deliverable, DeliveryRecord, PendingChunk, SourceEnd } from "./source-fold.js";

/**
 * Input bytes of one source's chunks a delivery reads from the log for its digest, at most: what
 * piled up beyond it while the agent was busy is counted (the fold knows each chunk's counts),
 * not read, so a delivery's memory stays bounded whatever arrived.
 */
export const DIGEST_READ_BYTES = 4 * 1024 * 1024;

/** The actor of a delivery turn that brings several sources at once. */
export const SOURCES_ACTOR = "sources";

/** The origin of every delivery turn. */
export const SOURCE_ORIGIN = "source";

/**
 * A delivery turn to append: its actor, its text (the digests), the chunks it covers (with their
 * summed counts) and the ends its text announces.
 */
export interface DeliveryPlan {
  actor: string;
  text: string;
  sources: NonNullable<EventData<"turn.added">["sources"]>;
  ends: NonNullable<EventData<"turn.added">["ends"]>;
}

/** The actor a source's turns carry: `source:<id>` (`sources` when that is no identifier). */
export function sourceActor(id: string): string {
  const actor = `source:${id}`;
  return isIdentifier(actor) ? actor : SOURCES_ACTOR;
}

/**
 * The delivery turn for `ready` (never empty): per source a digest of its chunks not delivered
 * (`renderSourceDigest`, the sources sharing `budgetTokens` evenly) and a line for an end that
 * no delivery has told yet. The chunks' lines are read from the log here, `DIGEST_READ_BYTES` of
 * them per source at most (`digestChunks`).
 */
export async function planDelivery(options: {
  store: EventStore;
  continuity: string;
  ready: readonly Deliverable[];
  budgetTokens: number;
  estimate: (text: string) => number;
}): Promise<DeliveryPlan> {
  const { ready } = options;
  const budget = Math.max(64, Math.floor(options.budgetTokens / Math.max(1, ready.length)));
  const parts: string[] = [];
  const sources: DeliveryPlan["sources"] = [];
  const ends: DeliveryPlan["ends"] = [];
  for (const item of ready) {
    const definition = item.state.definition;
    if (item.chunks.length > 0) {
      const chunks = await digestChunks(options.store, options.continuity, item);
      const last = item.chunks.at(-1)!;
      sources.push({
        source_id: item.sourceId,
        from_chunk: item.chunks[0]!.n,
        to_chunk: last.n,
        cursor: last.cursor,
        ...chunkTotals(item.chunks),
      });
      const digest = renderSourceDigest({
        source: item.sourceId,
        definition,
        chunks,
        budgetTokens: budget,
        estimate: options.estimate,
        ...(item.state.deliveredCursor ? { from: item.state.deliveredCursor } : {}),
      });
      // A budget too small for even the digest's first line still says what arrived.
      parts.push(
        digest !== ""
          ? digest
          : `Source ${item.sourceId}: chunks ${item.chunks[0]!.n}-${last.n} (recall them with source.recall).`,
      );
    }
    if (item.end) {
      parts.push(endLine(item.sourceId, item.end, item.state.chunks));
      ends.push({ source_id: item.sourceId, status: item.end.type });
    }
  }
  const actor = ready.length === 1 ? sourceActor(ready[0]!.sourceId) : SOURCES_ACTOR;
  return { actor, text: parts.join("\n\n"), sources, ends };
}

/** The lines, bytes and pattern matches of `chunks`, summed (`matches` only when any are counted). */
function chunkTotals(chunks: readonly PendingChunk[]): {
  lines: number;
  bytes: number;
  matches?: Record<string, number>;
} {
  let lines = 0;
  let bytes = 0;
  const matches: Record<string, number> = {};
  for (const chunk of chunks) {
    lines += chunk.lines;
    bytes += chunk.bytes;
    for (const [name, count] of Object.entries(chunk.matches)) {
      matches[name] = (matches[name] ?? 0) + count;
    }
  }
  return { lines, bytes, ...(Object.keys(matches).length > 0 ? { matches } : {}) };
}

/**
 * The chunks of `item` for its digest, in order: those `chunksToRead` picks with their lines,
 * read from the log (only their events), the others with their counts alone.
 */
async function digestChunks(
  store: EventStore,
  continuity: string,
  item: Deliverable,
): Promise<DigestChunk[]> {
  const read = new Map<number, DigestChunk>();
  for (const run of consecutiveRuns(item.chunks, chunksToRead(item))) {
    const wanted = new Set(run.map((chunk) => chunk.n));
    for await (const event of store.read({
      continuity,
      stream: { kind: "source", id: item.sourceId },
      types: ["source.chunk"],
      after: run[0]!.seq - 1,
      until: run.at(-1)!.seq,
    })) {
      const data = event.data as EventData<"source.chunk">;
      if (!wanted.has(data.n)) continue;
      read.set(data.n, {
        n: data.n,
        lines: await readChunkLines(store, event),
        bytes: data.bytes,
        cursor: data.cursor as SourceCursor,
        ...(data.skipped !== undefined ? { skipped: data.skipped } : {}),
        ...(data.matches !== undefined ? { matches: data.matches } : {}),
        ...(data.channel !== undefined ? { channel: data.channel } : {}),
        at: event.ts,
      });
    }
  }
  return item.chunks.map(
    (chunk) =>
      read.get(chunk.n) ?? {
        n: chunk.n,
        lines: [],
        lineCount: chunk.lines,
        bytes: chunk.bytes,
        cursor: chunk.cursor,
        ...(chunk.skipped > 0 ? { skipped: chunk.skipped } : {}),
        matches: chunk.matches,
        at: chunk.at,
      },
  );
}

/**
 * Which chunks of `item` a digest reads, `DIGEST_READ_BYTES` of input at most (always one): the
 * newest up to half of it, then, oldest first, those with lines matching a named pattern (every
 * chunk, when the source names none).
 */
function chunksToRead(item: Deliverable): Set<number> {
  const chosen = new Set<number>();
  const { chunks } = item;
  let spent = 0;
  for (let index = chunks.length - 1; index >= 0; index--) {
    const chunk = chunks[index]!;
    if (chosen.size > 0 && spent + chunk.bytes > DIGEST_READ_BYTES / 2) break;
    chosen.add(chunk.n);
    spent += chunk.bytes;
  }
  const named = Object.keys(item.state.definition?.patterns ?? {}).length > 0;
  for (const chunk of chunks) {
    if (spent >= DIGEST_READ_BYTES) break;
    if (chosen.has(chunk.n) || spent + chunk.bytes > DIGEST_READ_BYTES) continue;
    if (named && !Object.values(chunk.matches).some((count) => count > 0)) continue;
    chosen.add(chunk.n);
    spent += chunk.bytes;
  }
  return chosen;
}

/** The chunks `chosen` names, in runs of chunks next to each other, in order. */
function consecutiveRuns(
  chunks: readonly PendingChunk[],
  chosen: ReadonlySet<number>,
): PendingChunk[][] {
  const runs: PendingChunk[][] = [];
  let current: PendingChunk[] = [];
  for (const chunk of chunks) {
    if (chosen.has(chunk.n)) {
      current.push(chunk);
      continue;
    }
    if (current.length > 0) runs.push(current);
    current = [];
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

function endLine(id: string, end: SourceEnd, chunks: number): string {
  if (end.type === "exhausted") {
    return `Source "${id}" is exhausted: its input has ended after ${chunks} chunk(s), all of them delivered.`;
  }
  return `Source "${id}" failed and stopped (${end.error?.code ?? "source.failed"}): ${end.error?.message ?? "no reason was given"}. Resume it with source.resume once the cause is fixed.`;
}

/**
 * Fires the stream hooks of a delivery turn as its run starts (the same path live, after a
 * restart and in replay): `stream_chunk_received` once per source whose chunks it delivers, then
 * `stream_source_exhausted` for one whose end it announces, each at the turn's logged time (what
 * hooks' rate limits measure).
 */
export async function fireDeliveryHooks(
  driver: ContinuityDriver,
  record: DeliveryRecord,
  thread: string,
): Promise<void> {
  for (const source of record.sources) {
    const kind = source.definition?.kind ?? "unknown";
    const target = source.definition?.target ?? "";
    if (source.range) {
      const { from, to, chunks, cursor } = source.range;
      const matches: Record<string, number> = {};
      for (const chunk of chunks) {
        for (const [name, count] of Object.entries(chunk.matches)) {
          matches[name] = (matches[name] ?? 0) + count;
        }
      }
      const sum = (field: "lines" | "bytes" | "skipped") =>
        chunks.reduce((total, chunk) => total + chunk[field], 0);
      await driver.fire(
        "stream_chunk_received",
        {
          source_id: source.sourceId,
          kind,
          target,
          from_chunk: from,
          to_chunk: to,
          chunks: to - from + 1,
          lines: sum("lines"),
          bytes: sum("bytes"),
          skipped: sum("skipped"),
          matches,
          cursor,
        },
        thread,
        record.at,
      );
    }
    if (source.exhausted) {
      await driver.fire(
        "stream_source_exhausted",
        { source_id: source.sourceId, kind, target, ...source.exhausted },
        thread,
        record.at,
      );
    }
  }
}
