import type { ContextMessage, SummaryItem } from "./context-bundle.js";

/** A source's position, as its adapter wrote it: JSON, opaque to the continuity module. */
export type ChunkCursor = Readonly<Record<string, unknown>>;

/** Whether a source is processed once in order (`cursor`) or watched live (`state`). */
export type SourceMode = "cursor" | "state";

/** Chunks `fromChunk`..`toChunk` of one source (numbered 1, 2, 3… per source). */
export interface ChunkRange {
  fromChunk: number;
  toChunk: number;
}

/**
 * Chunks of one source and the cursor after the last of them: what a delivery turn carries
 * (`turn.added`'s `sources`), and what a summary covers (`summary.completed`'s `sources`).
 */
export interface ChunkSpan extends ChunkRange {
  sourceId: string;
  cursor: ChunkCursor;
}

/**
 * Where one source stands at a handoff (`handoff.seeded`'s `sources`): the chunks the lineage was
 * delivered, `fromChunk`..`toChunk`, and the cursor after the last, where the continuation goes
 * on (chunk `toChunk + 1`). Of those chunks, `summarized` are in the seed's summary chain and
 * `carried` in its trailing messages, verbatim: the two never overlap, `summarized` starts at
 * `fromChunk` and `carried` ends at `toChunk`. Chunks between them (or all, with neither) were
 * neither: a summary failed and the continuation started from an older one.
 */
export interface StreamPosition extends ChunkSpan {
  summarized?: ChunkRange;
  carried?: ChunkRange;
}

/**
 * The spans per source, merged: for each source (in the order first seen) its lowest and highest
 * chunk, and the cursor after the highest. Chunks of one source are delivered in order with no
 * gap, so the merge of a thread's spans is the range it was delivered. Pure.
 */
export function mergeSpans(spans: Iterable<ChunkSpan>): ChunkSpan[] {
  const merged = new Map<string, ChunkSpan>();
  for (const span of spans) {
    const known = merged.get(span.sourceId);
    if (!known) {
      merged.set(span.sourceId, { ...span });
      continue;
    }
    known.fromChunk = Math.min(known.fromChunk, span.fromChunk);
    if (span.toChunk > known.toChunk) {
      known.toChunk = span.toChunk;
      known.cursor = span.cursor;
    }
  }
  return [...merged.values()];
}

/** The chunks the delivery turns among `messages` hold, merged per source (`mergeSpans`). */
export function deliveredSpans(messages: Iterable<ContextMessage>): ChunkSpan[] {
  const spans: ChunkSpan[] = [];
  for (const entry of messages) if (entry.sources) spans.push(...entry.sources);
  return mergeSpans(spans);
}

/** What `seedPositions` reads. */
export interface SeedPositionsInput {
  /** The thread handing off. */
  thread: string;
  /** Where the sources stood when the thread was seeded (its own `handoff.seeded`), if it was. */
  prior?: readonly StreamPosition[];
  /** The thread's messages (carried and its own). */
  messages: readonly ContextMessage[];
  /** The messages the continuation carries verbatim. */
  trailing: readonly ContextMessage[];
  /** The continuation's summary chain (oldest first), each with the chunks it covers. */
  chain: readonly SummaryItem[];
}

/**
 * Where each source stands at a handoff (see `StreamPosition`): delivered, the lineage's chunks
 * up to the newest the thread was given; carried, the chunks of the trailing messages' delivery
 * turns; summarized, the chunks from the first that the chain's summaries cover without a gap,
 * up to the first carried one. A chunk is backed by a summary when it lies in the summary's own
 * `sources`, in the `summarized` range the thread was seeded with, or, when the chain's newest
 * summary is this thread's, in the range the thread was seeded with verbatim (its summarizer read
 * the carried messages). Pure; sources in the order first delivered.
 */
export function seedPositions(input: SeedPositionsInput): StreamPosition[] {
  const prior = input.prior ?? [];
  const delivered = mergeSpans([...prior, ...deliveredSpans(input.messages)]);
  const carried = new Map(deliveredSpans(input.trailing).map((span) => [span.sourceId, span]));
  const summarizedHere = input.chain.at(-1)?.covers.thread === input.thread;
  return delivered.map((span) => {
    const { sourceId, fromChunk, toChunk, cursor } = span;
    const before = prior.find((position) => position.sourceId === sourceId);
    const backing: ChunkRange[] = [];
    if (before?.summarized) backing.push(before.summarized);
    if (before?.carried && summarizedHere) backing.push(before.carried);
    for (const summary of input.chain) {
      const own = summary.sources?.find((covered) => covered.sourceId === sourceId);
      if (own) backing.push(own);
    }
    const kept = carried.get(sourceId);
    const end = Math.min(reach(fromChunk, backing), kept ? kept.fromChunk - 1 : toChunk);
    return {
      sourceId,
      fromChunk,
      toChunk,
      cursor,
      ...(end >= fromChunk ? { summarized: { fromChunk, toChunk: end } } : {}),
      ...(kept ? { carried: { fromChunk: kept.fromChunk, toChunk: kept.toChunk } } : {}),
    };
  });
}

/** The highest chunk `h` such that `from`..`h` all lie in `ranges` (`from - 1` when none). */
function reach(from: number, ranges: readonly ChunkRange[]): number {
  const sorted = [...ranges].sort((a, b) => a.fromChunk - b.fromChunk);
  let reached = from - 1;
  for (const range of sorted) {
    if (range.fromChunk > reached + 1) break;
    reached = Math.max(reached, range.toChunk);
  }
  return reached;
}

/**
 * The `sources` input of a summarizer run: one line per source its transcript's delivery turns
 * hold, with the source's mode when known, the chunk range and the exact cursor after it, e.g.
 * `- app-log (cursor mode): chunks 48–52; cursor after chunk 52: {"offset":51847}`. Empty when
 * the transcript holds no delivery. Pure.
 */
export function renderSourcesInput(
  spans: readonly ChunkSpan[],
  modes: ReadonlyMap<string, SourceMode> = new Map(),
): string {
  return spans
    .map((span) => {
      const mode = modes.get(span.sourceId);
      return `- ${span.sourceId} (${mode ? `${mode} mode` : "mode not declared"}): ${chunkWords(span)}; cursor after chunk ${span.toChunk}: ${JSON.stringify(span.cursor)}`;
    })
    .join("\n");
}

/** `chunk 7` or `chunks 7–12`. */
export function chunkWords(range: ChunkRange): string {
  return range.fromChunk === range.toChunk
    ? `chunk ${range.fromChunk}`
    : `chunks ${range.fromChunk}–${range.toChunk}`;
}
