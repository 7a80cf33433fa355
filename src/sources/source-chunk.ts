import type { EventStore } from "../log/index.js";
import { type EventData, SpoolError, type SpoolEvent } from "../spec/index.js";
import type { SourceChunkEmission, SourceDefinition } from "./source-types.js";

/** Chunks whose lines take more bytes than this go into an artifact by default (256 KiB). */
export const DEFAULT_ARTIFACT_BYTES = 256 * 1024;

/** The media type of a chunk artifact: its lines joined by `\n`. */
export const CHUNK_MEDIA_TYPE = "text/plain; charset=utf-8";

/** A source's named patterns compiled once: what each chunk's `matches` counts. */
export type PatternMatchers = readonly (readonly [name: string, pattern: RegExp])[];

/** Compiles a definition's named patterns (a pattern that does not compile counts nothing). */
export function compilePatterns(definition: SourceDefinition): PatternMatchers {
  const matchers: [string, RegExp][] = [];
  for (const [name, source] of Object.entries(definition.patterns)) {
    try {
      matchers.push([name, new RegExp(source)]);
    } catch {
      // Definitions are validated before they run; one that is not counts nothing for it.
    }
  }
  return matchers;
}

/** How many of `lines` match each pattern; undefined when the source has no patterns. */
export function countMatches(
  matchers: PatternMatchers,
  lines: readonly string[],
): Record<string, number> | undefined {
  if (matchers.length === 0) return undefined;
  const matches: Record<string, number> = {};
  for (const [name, pattern] of matchers) {
    let count = 0;
    for (const line of lines) if (pattern.test(line)) count++;
    matches[name] = count;
  }
  return matches;
}

/**
 * The `source.chunk` data for chunk `n` of `emission`: its lines inline, or, when joined by `\n`
 * they take more than `artifactBytes`, in an artifact put into `store` first (`line_count` says
 * how many either way). Lines that themselves hold a `\n` (an adapter's bug) stay inline, as an
 * artifact could not give them back.
 */
export async function chunkEventData(
  store: EventStore,
  sourceId: string,
  n: number,
  emission: SourceChunkEmission,
  matchers: PatternMatchers,
  artifactBytes: number,
): Promise<EventData<"source.chunk">> {
  const { lines } = emission;
  const joined = lines.join("\n");
  const size = Buffer.byteLength(joined);
  const matches = countMatches(matchers, lines);
  const base = {
    source_id: sourceId,
    n,
    line_count: lines.length,
    bytes: emission.bytes,
    cursor: emission.cursor,
    ...(emission.channel !== undefined ? { channel: emission.channel } : {}),
    ...(emission.skipped !== undefined ? { skipped: emission.skipped } : {}),
    ...(emission.cut !== undefined ? { cut: { ...emission.cut } } : {}),
    ...(emission.invalidBytes !== undefined ? { invalid_bytes: emission.invalidBytes } : {}),
    ...(matches ? { matches } : {}),
  };
  if (size <= artifactBytes || lines.some((line) => line.includes("\n"))) {
    return { ...base, lines: [...lines] };
  }
  const info = await store.artifacts.put(Buffer.from(joined), { mediaType: CHUNK_MEDIA_TYPE });
  return {
    ...base,
    artifact: {
      hash: info.hash,
      size: info.size,
      media_type: info.mediaType,
      name: `${sourceId}-chunk-${n}.txt`,
    },
  };
}

/**
 * The lines of a `source.chunk` event: inline, or read from its artifact and split at `\n`.
 * Throws `SpoolError` `source.bad-chunk` when the event is no chunk or its lines do not number
 * `line_count`, and the store's `artifact.not-found` when the artifact is missing.
 */
export async function readChunkLines(store: EventStore, event: SpoolEvent): Promise<string[]> {
  if (event.type !== "source.chunk") {
    throw new SpoolError("source.bad-chunk", `event ${event.seq} is a ${event.type}, not a chunk`, {
      hint: "Pass a source.chunk event",
    });
  }
  const data = event.data as EventData<"source.chunk">;
  let lines: string[];
  if (data.lines) lines = data.lines;
  else if (data.artifact) {
    const text = (await store.artifacts.get(data.artifact.hash)).toString("utf8");
    lines = data.line_count === 0 ? [] : text.split("\n");
  } else lines = [];
  if (lines.length !== data.line_count) {
    throw new SpoolError(
      "source.bad-chunk",
      `chunk ${data.n} of source "${data.source_id}" (event ${event.seq}) holds ${lines.length} lines, but says ${data.line_count}`,
      { hint: "The log or its artifact was damaged; `spool log verify` checks the chain" },
    );
  }
  return lines;
}
