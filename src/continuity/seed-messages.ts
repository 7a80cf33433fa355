import { fromBlockData, type ImagePart, toBlockData } from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import type { ContextMessage, PageResult, SummaryItem } from "./context-bundle.js";
import { type ChunkSpan, chunkWords, type StreamPosition } from "./source-coverage.js";

/** A message of a continuation's seed, as `handoff.seeded` stores it. */
export type SeedMessageData = EventData<"handoff.seeded">["trailing"][number];
/** A summary of the chain, as `handoff.seeded` stores it. */
export type SummaryLinkData = EventData<"handoff.seeded">["summaries"][number];
/** A source's chunks as events store them (snake_case). */
export type ChunkSpanData = NonNullable<EventData<"summary.completed">["sources"]>[number];
/** Where a source stands at a handoff, as `handoff.seeded` stores it. */
export type StreamPositionData = NonNullable<EventData<"handoff.seeded">["sources"]>[number];

/** A thread's message in the seed's stored form (snake_case, with the seq it came from). */
export function messageToSeed(entry: ContextMessage): SeedMessageData {
  const { message, seq } = entry;
  switch (message.role) {
    case "user":
      return {
        role: "user",
        content:
          typeof message.content === "string"
            ? message.content
            : message.content.map((part) =>
                part.type === "text"
                  ? { type: "text" as const, text: part.text }
                  : imageToData(part),
              ),
        seq,
        turn: entry.turn,
        ...(entry.sources ? { sources: entry.sources.map(spanToData) } : {}),
        ...pagesToData(entry.pages),
      };
    case "assistant":
      return {
        role: "assistant",
        content:
          typeof message.content === "string" ? message.content : message.content.map(toBlockData),
        seq,
      };
    case "tool":
      return {
        role: "tool",
        results: message.results.map((result) => ({
          tool_call_id: result.toolCallId,
          ...(result.name !== undefined ? { name: result.name } : {}),
          output: result.output,
          ...(result.isError !== undefined ? { is_error: result.isError } : {}),
          ...(result.images ? { images: result.images.map(imageToData) } : {}),
        })),
        seq,
        ...pagesToData(entry.pages),
      };
  }
}

/** A seed message back as a context message of the thread it was carried from. */
export function seedToMessage(data: SeedMessageData, from: string): ContextMessage {
  const base = { seq: data.seq, thread: from };
  switch (data.role) {
    case "user":
      return {
        ...base,
        turn: data.turn,
        ...(data.sources ? { sources: data.sources.map(spanFromData) } : {}),
        ...pagesFromData(data.pages),
        message: {
          role: "user",
          content:
            typeof data.content === "string"
              ? data.content
              : data.content.map((part) =>
                  part.type === "text"
                    ? { type: "text" as const, text: part.text }
                    : imageFromData(part),
                ),
        },
      };
    case "assistant":
      return {
        ...base,
        turn: false,
        message: {
          role: "assistant",
          content:
            typeof data.content === "string" ? data.content : data.content.map(fromBlockData),
        },
      };
    case "tool":
      return {
        ...base,
        turn: false,
        ...pagesFromData(data.pages),
        message: {
          role: "tool",
          results: data.results.map((result) => ({
            toolCallId: result.tool_call_id,
            ...(result.name !== undefined ? { name: result.name } : {}),
            output: result.output,
            ...(result.is_error !== undefined ? { isError: result.is_error } : {}),
            ...(result.images ? { images: result.images.map(imageFromData) } : {}),
          })),
        },
      };
  }
}

type ImageData = Extract<
  Extract<SeedMessageData, { role: "user" }>["content"],
  readonly unknown[]
>[number] & { type: "image" };

function imageToData(part: ImagePart): ImageData {
  return {
    type: "image",
    media_type: part.mediaType,
    data: part.data,
    ...(part.artifact !== undefined ? { artifact: part.artifact } : {}),
  };
}

function imageFromData(part: ImageData): ImagePart {
  return {
    type: "image",
    mediaType: part.media_type,
    data: part.data,
    ...(part.artifact !== undefined ? { artifact: part.artifact } : {}),
  };
}

type PageResultData = NonNullable<Extract<SeedMessageData, { role: "tool" }>["pages"]>[number];

/** A message's page results in the seed's form (nothing when it holds none). */
function pagesToData(pages: readonly PageResult[] | undefined): { pages?: PageResultData[] } {
  if (!pages || pages.length === 0) return {};
  return {
    pages: pages.map((page) => ({
      kind: page.kind,
      action_id: page.actionId,
      native: page.native,
      position: page.position,
      type: page.type,
      name: page.name,
      tab: page.tab,
      url: page.url,
      title: page.title,
      ...(page.diff !== undefined ? { diff: page.diff } : {}),
      ...(page.artifact !== undefined ? { artifact: page.artifact } : {}),
      ...(page.mediaType !== undefined ? { media_type: page.mediaType } : {}),
    })),
  };
}

/** A seed message's page results back in the history's form. */
function pagesFromData(pages: readonly PageResultData[] | undefined): { pages?: PageResult[] } {
  if (!pages || pages.length === 0) return {};
  return {
    pages: pages.map((page) => ({
      kind: page.kind,
      actionId: page.action_id,
      native: page.native,
      position: page.position,
      type: page.type,
      name: page.name,
      tab: page.tab,
      url: page.url,
      title: page.title,
      ...(page.diff !== undefined ? { diff: page.diff } : {}),
      ...(page.artifact !== undefined ? { artifact: page.artifact } : {}),
      ...(page.media_type !== undefined ? { mediaType: page.media_type } : {}),
    })),
  };
}

/** A stored summary link as the compiler's summary item. */
export function summaryFromData(data: SummaryLinkData): SummaryItem {
  return {
    id: data.id,
    summarizer: data.summarizer,
    text: data.text,
    tokens: data.tokens,
    covers: data.covers,
    ...(data.sources ? { sources: data.sources.map(spanFromData) } : {}),
  };
}

/** A source's chunks in the events' form. */
export function spanToData(span: ChunkSpan): ChunkSpanData {
  return {
    source_id: span.sourceId,
    from_chunk: span.fromChunk,
    to_chunk: span.toChunk,
    cursor: { ...span.cursor },
  };
}

/** A source's chunks from the events' form (`turn.added`, `summary.completed`, seeds). */
export function spanFromData(data: ChunkSpanData): ChunkSpan {
  return {
    sourceId: data.source_id,
    fromChunk: data.from_chunk,
    toChunk: data.to_chunk,
    cursor: data.cursor,
  };
}

/** A source's position at a handoff in `handoff.seeded`'s form. */
export function positionToData(position: StreamPosition): StreamPositionData {
  const range = (r: { fromChunk: number; toChunk: number }) => ({
    from_chunk: r.fromChunk,
    to_chunk: r.toChunk,
  });
  return {
    ...spanToData(position),
    ...(position.summarized ? { summarized: range(position.summarized) } : {}),
    ...(position.carried ? { carried: range(position.carried) } : {}),
  };
}

/** A source's position at a handoff from `handoff.seeded`'s form. */
export function positionFromData(data: StreamPositionData): StreamPosition {
  const range = (r: { from_chunk: number; to_chunk: number }) => ({
    fromChunk: r.from_chunk,
    toChunk: r.to_chunk,
  });
  return {
    ...spanFromData(data),
    ...(data.summarized ? { summarized: range(data.summarized) } : {}),
    ...(data.carried ? { carried: range(data.carried) } : {}),
  };
}

/**
 * What a continuation's seed tells its model about the sources: for each, which chunks are in the
 * summary, which are in the messages carried verbatim, which (after a failed summary) are not
 * known to be in either, and where it continues, e.g. `- app-log: chunks 1–412 delivered: chunks 1–399
 * summarized above, chunks 400–412 in the messages below, verbatim; continues at chunk 413,
 * after cursor {"offset":51847}`. The cursor is the logged one, as JSON. Pure.
 */
export function streamPositionsText(positions: readonly StreamPosition[]): string {
  const lines = positions.map((position) => {
    const parts: string[] = [];
    if (position.summarized) parts.push(`${chunkWords(position.summarized)} summarized above`);
    const missingFrom = (position.summarized?.toChunk ?? position.fromChunk - 1) + 1;
    const missingTo = (position.carried?.fromChunk ?? position.toChunk + 1) - 1;
    if (missingTo >= missingFrom) {
      parts.push(
        `${chunkWords({ fromChunk: missingFrom, toChunk: missingTo })} not in the summary (a summary failed: read them back with \`source.recall\` if you need them)`,
      );
    }
    if (position.carried) {
      parts.push(`${chunkWords(position.carried)} in the messages below, verbatim`);
    }
    return `- ${position.sourceId}: ${chunkWords(position)} delivered: ${parts.join(", ")}; continues at chunk ${position.toChunk + 1}, after cursor ${JSON.stringify(position.cursor)}`;
  });
  return `### Sources at the handoff\n\nThe chunks each source delivered before this thread began. New chunks arrive as new source turns.\n\n${lines.join("\n")}`;
}
