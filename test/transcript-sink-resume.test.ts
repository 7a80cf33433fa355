import { createHash } from "node:crypto";
import { appendFileSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import {
  createSinkFanout,
  createTranscriptSink,
  rebuildTranscript,
  type SinkReport,
} from "../src/transcript/index.js";
import { onStep, startThread, tempStore } from "./support/transcripts.js";

let env: Awaited<ReturnType<typeof tempStore>>;
let store: EventStore;
let path: string;
beforeEach(async () => {
  env = await tempStore("spool-transcript-resume-");
  store = env.store;
  path = join(env.dir, "threads", "t1", "transcript.jsonl");
});
afterEach(() => env.cleanup());

const delta = (step: string, text: string) =>
  onStep("home", step, "token.delta", { block: "text:0", text });

/** Appends three deltas at once: the store coalesces them into one event of three lines. */
async function threeDeltas(step: string, prefix: string): Promise<void> {
  await Promise.all([1, 2, 3].map((n) => store.append(delta(step, `${prefix}${n}`))));
}

const sink = (options: { fromSeq?: number; thread?: string } = {}) =>
  createTranscriptSink({
    store,
    continuity: "home",
    thread: options.thread ?? "t1",
    path,
    ...(options.fromSeq !== undefined ? { fromSeq: options.fromSeq } : {}),
  });

async function expectRebuilt(thread = "t1"): Promise<void> {
  expect(readFileSync(path).toString()).toBe(
    (await rebuildTranscript(store, "home", thread)).toString(),
  );
}

describe("transcript sink: resuming a file", () => {
  it("a second sink on the same file goes on where the first stopped", async () => {
    const first = sink();
    const step0 = await startThread(store, "home", "t1");
    await threeDeltas(step0, "a");
    await first.close();
    await startThread(store, "home", "t1", { create: false, index: 1 });
    await threeDeltas("t1:1", "b");
    const second = sink();
    await threeDeltas("t1:1", "c");
    await second.close();
    await expectRebuilt();
  });

  it("a torn last event (part of its lines, half a line) is rewritten whole", async () => {
    const first = sink();
    const step = await startThread(store, "home", "t1");
    await threeDeltas(step, "a");
    await threeDeltas(step, "b");
    await first.close();
    const whole = readFileSync(path);
    // Cut inside the second line of the last event: one line and a half survive.
    const cut = whole.lastIndexOf('"text":"b2"');
    truncateSync(path, cut);
    const second = sink();
    await store.append(delta(step, "c"));
    await second.close();
    await expectRebuilt();
    // A trailing half line alone is dropped too.
    appendFileSync(path, '{"seq":99,"type":"tok');
    await sink().close();
    await expectRebuilt();
  });

  it("fromSeq skips a long history for a thread that starts after it; fromSeq 0 starts over", async () => {
    const other = await startThread(store, "home", "t0");
    for (let n = 0; n < 20; n++)
      await store.append(
        onStep("home", other, "action.started", { action_id: `a${n}`, attempt: 1 }),
      );
    const head = await store.head();
    const live = sink({ fromSeq: head });
    await startThread(store, "home", "t1", { create: false });
    await threeDeltas("t1:0", "x");
    await live.close();
    await expectRebuilt();
    writeFileSync(path, "garbage that is not a transcript\n");
    await sink({ fromSeq: 0 }).close();
    await expectRebuilt();
  });

  it("caughtUp covers seqs of other continuities; digestUpTo then hashes the whole file", async () => {
    const live = sink();
    const step = await startThread(store, "home", "t1");
    await threeDeltas(step, "a");
    const elsewhere = await store.append({
      continuity: "other",
      type: "turn.added",
      actor: "ada",
      origin: "test",
      data: { text: "hi" },
    });
    await live.caughtUp(elsewhere.seq);
    const bytes = readFileSync(path);
    expect(bytes.equals(await rebuildTranscript(store, "home", "t1"))).toBe(true);
    expect(live.digestUpTo(elsewhere.seq)).toBe(createHash("sha256").update(bytes).digest("hex"));
    // The digest at an earlier seq leaves out the lines after it (seq 1 is the continuity's own).
    const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
    const firstLine = bytes.subarray(0, bytes.indexOf("\n") + 1);
    const twoLines = bytes.subarray(0, bytes.indexOf("\n", firstLine.length) + 1);
    expect(live.digestUpTo(1)).toBe(sha(Buffer.alloc(0)));
    expect(live.digestUpTo(2)).toBe(sha(firstLine));
    expect(live.digestUpTo(3)).toBe(sha(twoLines));
    expect(() => live.digestUpTo(elsewhere.seq + 100)).toThrow(/not caught up/);
    await live.close();
  });
});

describe("transcript sink: failures", () => {
  it("an unwritable path fails the sink, never the stream", async () => {
    writeFileSync(join(env.dir, "a-file"), "");
    const reports: SinkReport[] = [];
    const broken = createTranscriptSink({
      store,
      continuity: "home",
      thread: "t1",
      path: join(env.dir, "a-file", "transcript.jsonl"),
    });
    const fanout = createSinkFanout({ sinks: [broken], onReport: (r) => reports.push(r) });
    await expect(broken.caughtUp(1)).rejects.toMatchObject({ code: expect.stringMatching(/^E/) });
    fanout.push({ type: "start", responseId: null, model: "m" });
    const final = await fanout.close();
    expect(final).toEqual([
      expect.objectContaining({
        kind: "failed",
        sink: "transcript",
        code: expect.stringMatching(/^E/),
      }),
    ]);
    expect(reports).toHaveLength(1);
  });

  it("a damaged file is not appended to: the sink fails with a hint to rebuild it", async () => {
    await startThread(store, "home", "t1");
    await sink().close();
    const before = readFileSync(path);
    writeFileSync(path, Buffer.concat([Buffer.from("not a line\n"), before]));
    const damaged = sink();
    await expect(damaged.close()).rejects.toMatchObject({ code: "transcript.damaged" });
    expect(readFileSync(path).subarray(11).equals(before)).toBe(true);
  });

  it("a store that closes under a following sink fails it instead of leaving waiters hanging", async () => {
    const live = sink();
    await startThread(store, "home", "t1");
    const head = await store.head();
    await live.caughtUp(head);
    const waiting = live.caughtUp(head + 1000);
    await store.close();
    await expect(waiting).rejects.toMatchObject({ code: "transcript.store-closed" });
    await expect(live.close()).rejects.toMatchObject({ code: "transcript.store-closed" });
    expect(() => live.write({ type: "start", responseId: null, model: "m" })).toThrow(
      /store closed/,
    );
  });
});
