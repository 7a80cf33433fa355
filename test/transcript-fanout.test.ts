import { describe, expect, it } from "vitest";
import type { StreamPart } from "../src/providers/stream-part.js";
import { createSinkFanout, type SinkReport, type StreamSink } from "../src/transcript/index.js";

const parts = (count: number): StreamPart[] =>
  Array.from({ length: count }, (_, index) => ({ type: "text", block: 0, text: `t${index}` }));

/** A sink that records what it gets. */
function recorder(name: string): StreamSink & { got: StreamPart[] } {
  const got: StreamPart[] = [];
  return { name, got, write: (part) => void got.push(part) };
}

/** A sink whose writes hang until `release()`. */
function gated(name: string) {
  const got: StreamPart[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let closed = false;
  const sink: StreamSink = {
    name,
    async write(part) {
      got.push(part);
      await gate;
    },
    async close() {
      closed = true;
    },
  };
  return { sink, got, release: open, closed: () => closed };
}

describe("sink fan-out", () => {
  it("a failing sink and a hung sink do not stop the others; every healthy sink gets every part in order", async () => {
    const reports: SinkReport[] = [];
    let seen = 0;
    const failing: StreamSink = {
      name: "failing",
      write() {
        seen += 1;
        if (seen === 3) throw Object.assign(new Error("disk on fire"), { code: "EIO" });
      },
    };
    const hung = gated("hung");
    const healthy = recorder("healthy");
    const fanout = createSinkFanout({
      sinks: [failing, hung.sink, healthy],
      lagLimitParts: 5,
      onReport: (report) => reports.push(report),
    });
    const all = parts(10);
    for (const part of all) fanout.push(part);

    // Synchronous sinks got everything during push; the hung one holds its first part.
    expect(healthy.got).toEqual(all);
    expect(hung.got).toEqual([all[0]]);
    expect(seen).toBe(3);
    expect(reports).toEqual([
      { kind: "failed", sink: "failing", code: "EIO", message: "disk on fire", droppedParts: 0 },
      { kind: "lagging", sink: "hung", queuedParts: 6, lagMs: expect.any(Number) },
    ]);

    const closing = fanout.close();
    hung.release();
    const final = await closing;
    expect(hung.got).toEqual(all);
    expect(hung.closed()).toBe(true);
    expect(final).toEqual([
      { kind: "failed", sink: "failing", code: "EIO", message: "disk on fire", droppedParts: 7 },
      { kind: "lagging", sink: "hung", queuedParts: 6, lagMs: expect.any(Number) },
    ]);
  });

  it("an asynchronous sink that rejects is reported once, its queue counted as dropped", async () => {
    const reports: SinkReport[] = [];
    let reject!: (error: Error) => void;
    const slow: StreamSink = {
      name: "slow",
      write: () =>
        new Promise<void>((_, fail) => {
          reject = fail;
        }),
    };
    const healthy = recorder("healthy");
    const fanout = createSinkFanout({ sinks: [slow, healthy], onReport: (r) => reports.push(r) });
    for (const part of parts(4)) fanout.push(part);
    reject(new Error("gone"));
    const final = await fanout.close();
    expect(healthy.got).toHaveLength(4);
    expect(reports).toEqual([
      { kind: "failed", sink: "slow", code: "sink.write-failed", message: "gone", droppedParts: 3 },
    ]);
    expect(final).toEqual(reports);
  });

  it("close() reports a sink whose close rejects, and resolves", async () => {
    const sink: StreamSink = {
      name: "closer",
      write() {},
      close: () => Promise.reject(new Error("cannot flush")),
    };
    const fanout = createSinkFanout({
      sinks: [sink],
      onReport() {
        throw new Error("a reporter that throws is ignored");
      },
    });
    fanout.push({ type: "start", responseId: null, model: "m" });
    await expect(fanout.close()).resolves.toEqual([
      {
        kind: "failed",
        sink: "closer",
        code: "sink.close-failed",
        message: "cannot flush",
        droppedParts: 0,
      },
    ]);
  });

  it("a sink past the lag limit is reported once, not once per part", async () => {
    const reports: SinkReport[] = [];
    const first = gated("slow");
    const fanout = createSinkFanout({
      sinks: [first.sink],
      lagLimitParts: 2,
      onReport: (r) => reports.push(r),
    });
    for (const part of parts(6)) fanout.push(part);
    expect(reports.map((r) => r.kind)).toEqual(["lagging"]);
    first.release();
    await fanout.close();
    expect(first.got).toHaveLength(6);
    expect(reports).toHaveLength(1);
  });
});
