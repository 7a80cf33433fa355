/**
 * A delivery turn records the ends its text announces (`ends`), and the runtime's fold of the
 * sources takes that record as what the agent was told: an end logged while the turn was being
 * written (after its digest was planned) is told by the next delivery, not lost. A turn of a log
 * written before turns recorded their ends is read as before: every end with nothing left to
 * deliver counts as told.
 */
import { describe, expect, it } from "vitest";
import { SourceFold } from "../src/runtime/source-fold.js";
import { checkSourceEntry, sourceEntryOf } from "../src/sources/index.js";
import { type AnyNewEvent, prepareEvent, type SpoolEvent } from "../src/spec/index.js";

const continuity = "watch";
const stream = { kind: "source" as const, id: "data" };
const definition = checkSourceEntry({ id: "data", kind: "dataset", target: "data.jsonl" })
  .definition!;

/** `inputs` as stored events, numbered from seq 1. */
function stored(inputs: AnyNewEvent[]): SpoolEvent[] {
  let id = 0;
  const defaults = {
    now: () => "2026-01-01T00:00:00.000Z",
    newId: () => `01JC3V7Q8ZK2N5W4X6Y8A0B${String(++id).padStart(3, "0")}`,
  };
  return inputs.map(
    (input, index) =>
      ({ ...prepareEvent(input, defaults), seq: index + 1, hash: "0" }) as unknown as SpoolEvent,
  );
}

const added: AnyNewEvent = {
  continuity,
  stream,
  type: "source.added",
  data: { source_id: "data", definition: sourceEntryOf(definition), by: "manifest" },
};
const chunk: AnyNewEvent = {
  continuity,
  stream,
  type: "source.chunk",
  data: { source_id: "data", n: 1, lines: ["a"], line_count: 1, bytes: 2, cursor: { o: 2 } },
};
const exhausted: AnyNewEvent = {
  continuity,
  stream,
  type: "source.exhausted",
  data: { source_id: "data", cursor: { o: 2 } },
};
const delivery = (ends?: { source_id: string; status: "exhausted" | "failed" }[]): AnyNewEvent => ({
  continuity,
  type: "turn.added",
  actor: "source:data",
  origin: "source",
  data: {
    text: "Source data: chunk 1",
    sources: [{ source_id: "data", from_chunk: 1, to_chunk: 1, cursor: { o: 2 }, lines: 1 }],
    ...(ends ? { ends } : {}),
  },
});

function fold(events: SpoolEvent[]): SourceFold {
  const result = new SourceFold();
  for (const event of events) result.apply(event);
  return result;
}

describe("the ends a delivery turn records", () => {
  it("are the ends it announces: an end logged while it was written is told by the next turn", () => {
    // The end came after the digest was planned (it records no end) and before it was appended.
    const events = stored([added, chunk, exhausted, delivery([])]);
    const first = fold(events);
    const record = first.delivery(events[3]!.id)!;
    expect(record.sources.map((source) => source.exhausted)).toEqual([undefined]);
    expect(first.deliverable()).toEqual([
      expect.objectContaining({ sourceId: "data", chunks: [], end: expect.anything() }),
    ]);

    const told: AnyNewEvent = {
      continuity,
      type: "turn.added",
      actor: "source:data",
      origin: "source",
      data: {
        text: "Source data is exhausted",
        sources: [],
        ends: [{ source_id: "data", status: "exhausted" }],
      },
    };
    const later = stored([added, chunk, exhausted, delivery([]), told]);
    const second = fold(later);
    expect(second.delivery(later[4]!.id)?.sources).toEqual([
      expect.objectContaining({ sourceId: "data", exhausted: { chunks: 1, cursor: { o: 2 } } }),
    ]);
    expect(second.deliverable()).toEqual([]);
  });

  it("announce, in a log written before they were recorded, every end with nothing left to deliver", () => {
    const events = stored([added, chunk, exhausted, delivery()]);
    const folded = fold(events);
    expect(folded.delivery(events[3]!.id)?.sources).toEqual([
      expect.objectContaining({ sourceId: "data", exhausted: { chunks: 1, cursor: { o: 2 } } }),
    ]);
    expect(folded.deliverable()).toEqual([]);
  });
});
