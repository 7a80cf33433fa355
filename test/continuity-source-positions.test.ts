/**
 * Where sources stand at a handoff, by example: `seedPositions` splits each source's delivered
 * chunks between the summary chain and the messages carried (and says which a failed summary
 * left in neither), `streamPositionsText` tells the continuation's model so with the exact
 * cursor, `renderSourcesInput` is the summarizer's `sources` input, and a thread's history knows
 * which chunks each delivery turn holds, the sources' modes, and the positions it was seeded with.
 */
import { describe, expect, it } from "vitest";
import {
  type ChunkSpan,
  type ContextMessage,
  messageToSeed,
  positionFromData,
  positionToData,
  renderSourcesInput,
  type SummaryItem,
  seedPositions,
  seedToMessage,
  streamPositionsText,
  summaryMessage,
} from "../src/continuity/index.js";
import type { ProviderMessage } from "../src/providers/index.js";
import { ThreadHistory } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";

const span = (sourceId: string, fromChunk: number, toChunk: number): ChunkSpan => ({
  sourceId,
  fromChunk,
  toChunk,
  cursor: { inode: 7, offset: toChunk * 100 },
});

function delivery(seq: number, spans: ChunkSpan[], thread?: string): ContextMessage {
  return {
    message: { role: "user", content: `delivery at ${seq}` },
    seq,
    turn: true,
    sources: spans,
    ...(thread ? { thread } : {}),
  };
}

function reply(seq: number): ContextMessage {
  return { message: { role: "assistant", content: `noted ${seq}` }, seq, turn: false };
}

function summary(thread: string, toSeq: number, spans: ChunkSpan[]): SummaryItem {
  return {
    id: `${thread}@summary1`,
    summarizer: "stream_summarizer",
    text: "## Data Stream\n…",
    tokens: 10,
    covers: { thread, from_seq: 1, to_seq: toSeq },
    sources: spans,
  };
}

describe("seedPositions", () => {
  const messages = [
    delivery(1, [span("log", 1, 3)]),
    reply(2),
    delivery(5, [span("log", 4, 5), span("metrics", 1, 1)]),
    reply(6),
    delivery(9, [span("log", 6, 6)]),
    reply(10),
  ];

  it("summarizes what the trailing messages do not carry, and resumes after the last chunk", () => {
    const positions = seedPositions({
      thread: "t1",
      messages,
      trailing: messages.slice(4),
      chain: [summary("t1", 10, [span("log", 1, 6), span("metrics", 1, 1)])],
    });
    expect(positions).toEqual([
      {
        sourceId: "log",
        fromChunk: 1,
        toChunk: 6,
        cursor: { inode: 7, offset: 600 },
        summarized: { fromChunk: 1, toChunk: 5 },
        carried: { fromChunk: 6, toChunk: 6 },
      },
      {
        sourceId: "metrics",
        fromChunk: 1,
        toChunk: 1,
        cursor: { inode: 7, offset: 100 },
        summarized: { fromChunk: 1, toChunk: 1 },
      },
    ]);
    expect(streamPositionsText(positions)).toBe(
      [
        "### Sources at the handoff",
        "",
        "The chunks each source delivered before this thread began. New chunks arrive as new source turns.",
        "",
        '- log: chunks 1–6 delivered: chunks 1–5 summarized above, chunk 6 in the messages below, verbatim; continues at chunk 7, after cursor {"inode":7,"offset":600}',
        '- metrics: chunk 1 delivered: chunk 1 summarized above; continues at chunk 2, after cursor {"inode":7,"offset":100}',
      ].join("\n"),
    );
  });

  it("says which chunks a stale summary left in neither part", () => {
    // The last summary made covers the first delivery only (the newer one failed).
    const positions = seedPositions({
      thread: "t1",
      messages,
      trailing: messages.slice(4),
      chain: [summary("t1", 2, [span("log", 1, 3)])],
    });
    expect(positions[0]).toMatchObject({
      summarized: { fromChunk: 1, toChunk: 3 },
      carried: { fromChunk: 6, toChunk: 6 },
    });
    expect(positions[1]).not.toHaveProperty("summarized");
    const text = streamPositionsText(positions);
    expect(text).toContain(
      "- log: chunks 1–6 delivered: chunks 1–3 summarized above, chunks 4–5 not in the summary (a summary failed: read them back with `source.recall` if you need them), chunk 6 in the messages below, verbatim; continues at chunk 7",
    );
    expect(text).toContain("- metrics: chunk 1 delivered: chunk 1 not in the summary");
  });

  it("goes on from the positions a continuation was seeded with", () => {
    const prior = seedPositions({
      thread: "t1",
      messages,
      trailing: messages.slice(4),
      chain: [summary("t1", 10, [span("log", 1, 6), span("metrics", 1, 1)])],
    });
    const carried = delivery(9, [span("log", 6, 6)], "t1");
    const own = [
      carried,
      delivery(20, [span("log", 7, 8)]),
      reply(21),
      delivery(25, [span("log", 9, 9)]),
    ];
    const chain = [
      summary("t1", 10, [span("log", 1, 6), span("metrics", 1, 1)]),
      summary("t1.c1", 25, [span("log", 7, 9)]),
    ];
    const positions = seedPositions({
      thread: "t1.c1",
      prior,
      messages: own,
      trailing: own.slice(3),
      chain,
    });
    expect(positions).toEqual([
      {
        sourceId: "log",
        fromChunk: 1,
        toChunk: 9,
        cursor: { inode: 7, offset: 900 },
        summarized: { fromChunk: 1, toChunk: 8 },
        carried: { fromChunk: 9, toChunk: 9 },
      },
      // Not delivered to this thread: where it stood is kept, and all of it is summarized.
      {
        sourceId: "metrics",
        fromChunk: 1,
        toChunk: 1,
        cursor: { inode: 7, offset: 100 },
        summarized: { fromChunk: 1, toChunk: 1 },
      },
    ]);
  });

  it("counts the chunks a continuation was seeded with verbatim as read by its own summary", () => {
    // The summary before failed: the seed carried chunk 6 and summarized 1–3 only.
    const prior = [
      {
        sourceId: "log",
        fromChunk: 1,
        toChunk: 6,
        cursor: { offset: 600 },
        summarized: { fromChunk: 1, toChunk: 3 },
        carried: { fromChunk: 4, toChunk: 6 },
      },
    ];
    const own = [delivery(9, [span("log", 4, 6)], "t1"), delivery(20, [span("log", 7, 7)])];
    const stale = summary("t1", 2, [span("log", 1, 3)]);
    const both = seedPositions({
      thread: "t1.c1",
      prior,
      messages: own,
      trailing: own.slice(1),
      chain: [stale, summary("t1.c1", 20, [])],
    });
    expect(both[0]).toMatchObject({ summarized: { fromChunk: 1, toChunk: 6 } });
    // Without a summary of its own, the carried chunks are in neither part.
    const none = seedPositions({
      thread: "t1.c1",
      prior,
      messages: own,
      trailing: own.slice(1),
      chain: [stale],
    });
    expect(none[0]).toMatchObject({ summarized: { fromChunk: 1, toChunk: 3 } });
  });

  it("keeps every position through handoff.seeded's form", () => {
    const positions = seedPositions({
      thread: "t1",
      messages,
      trailing: messages.slice(2),
      chain: [summary("t1", 10, [span("log", 1, 6), span("metrics", 1, 1)])],
    });
    expect(positions.map(positionToData).map(positionFromData)).toEqual(positions);
    expect(positionToData(positions[0]!)).toEqual({
      source_id: "log",
      from_chunk: 1,
      to_chunk: 6,
      cursor: { inode: 7, offset: 600 },
      summarized: { from_chunk: 1, to_chunk: 3 },
      carried: { from_chunk: 4, to_chunk: 6 },
    });
  });
});

describe("the summarizer's sources input", () => {
  it("names each source's mode, chunks and the exact cursor after them", () => {
    expect(
      renderSourcesInput(
        [span("log", 48, 52), span("btc", 3, 3), span("other", 1, 2)],
        new Map([
          ["log", "cursor"],
          ["btc", "state"],
        ]),
      ),
    ).toBe(
      [
        '- log (cursor mode): chunks 48–52; cursor after chunk 52: {"inode":7,"offset":5200}',
        '- btc (state mode): chunk 3; cursor after chunk 3: {"inode":7,"offset":300}',
        '- other (mode not declared): chunks 1–2; cursor after chunk 2: {"inode":7,"offset":200}',
      ].join("\n"),
    );
    expect(renderSourcesInput([])).toBe("");
  });
});

describe("a thread's history of delivery turns", () => {
  let seq = 0;
  const event = (
    type: string,
    data: unknown,
    stream: SpoolEvent["stream"] = { kind: "continuity", id: "c" },
    id = `e${seq + 1}`,
  ): SpoolEvent =>
    ({
      seq: ++seq,
      id,
      continuity: "c",
      stream,
      type,
      ts: "2024-10-10T10:00:00Z",
      actor: null,
      origin: null,
      criticality: "critical",
      data,
      hash: "",
    }) as unknown as SpoolEvent;
  const wire = { source_id: "log", from_chunk: 1, to_chunk: 3, cursor: { offset: 300 } };

  it("gives a delivery turn's message its chunks, and knows the sources' modes", () => {
    const history = new ThreadHistory("t1");
    history.apply(
      event(
        "source.added",
        {
          source_id: "log",
          definition: { id: "log", kind: "file", mode: "cursor" },
          by: "manifest",
        },
        { kind: "source", id: "log" },
      ),
    );
    history.apply(
      event("turn.added", { text: "chunks 1–3 …", sources: [wire] }, undefined, "turn1"),
    );
    history.apply(
      event(
        "run.started",
        { turn: "turn1", resumed: false, directive: "log_monitor", model: "m", next_step: 0 },
        { kind: "thread", id: "t1" },
      ),
    );
    const view = history.view();
    expect(view.messages[0]!.sources).toEqual([
      { sourceId: "log", fromChunk: 1, toChunk: 3, cursor: { offset: 300 } },
    ]);
    expect(view.sourceModes?.get("log")).toBe("cursor");
    // Carried into a continuation's seed and back, the chunks stay with the message.
    const seed = messageToSeed(view.messages[0]!);
    expect(seed).toMatchObject({ role: "user", sources: [wire] });
    expect(seedToMessage(seed, "t1").sources).toEqual(view.messages[0]!.sources);
    // A continuation's history knows the modes declared before it.
    expect(history.successor("t1.c1").view().sourceModes?.get("log")).toBe("cursor");
  });

  it("reads the positions it was seeded with, and its handoff message tells them", () => {
    const history = new ThreadHistory("t1.c1");
    const position = { ...wire, summarized: { from_chunk: 1, to_chunk: 3 } };
    history.apply(
      event(
        "handoff.seeded",
        {
          from: "t1",
          mode: "summary",
          summaries: [
            {
              id: "t1@summary1",
              summarizer: "stream_summarizer",
              text: "## Data Stream\napp log",
              tokens: 5,
              covers: { thread: "t1", from_seq: 1, to_seq: 9 },
              sources: [wire],
            },
          ],
          trailing: [],
          resume: false,
          sources: [position],
          tokens: { summary: 5, trailing: 0 },
        },
        { kind: "thread", id: "t1.c1" },
      ),
    );
    const view = history.view();
    expect(view.streams).toEqual([positionFromData(position)]);
    expect(view.summaries[0]!.sources).toEqual([
      { sourceId: "log", fromChunk: 1, toChunk: 3, cursor: { offset: 300 } },
    ]);
    const text = (message?: ProviderMessage) =>
      message?.role === "user" && typeof message.content === "string" ? message.content : "";
    const message = text(summaryMessage(view.summaries, view.streams));
    expect(message).toContain("## Data Stream\napp log");
    expect(message).toContain(
      '- log: chunks 1–3 delivered: chunks 1–3 summarized above; continues at chunk 4, after cursor {"offset":300}',
    );
    // Without sources the handoff message is as it always was.
    expect(text(summaryMessage(view.summaries))).toContain("## Data Stream");
    expect(text(summaryMessage(view.summaries))).not.toContain("Sources at the handoff");
  });
});
