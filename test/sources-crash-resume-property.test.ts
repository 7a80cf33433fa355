/**
 * A crash at any point (the process's store stops completing appends from a random one on, and
 * the runtime is dropped without a close) and a resume by a fresh runtime: every chunk the source
 * read is delivered exactly once, in order, with no gap, for a file source and for a paced
 * dataset (one chunk a delivery); every line of the input is read once; the resumed log replays
 * identically. A property over random stop points and input sizes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeSources } from "../src/runtime/index.js";
import type { EventData } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import {
  chunkNumbers,
  deliveredRanges,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
} from "./support/memory-sources.js";
import { withAppends } from "./support/store-taps.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "crashy";

/**
 * `inner` as a process that dies at its `k`-th append: that append and every later one never
 * complete and write nothing. `died` resolves at the death.
 */
function dyingAfter(inner: EventStore, k: number): { store: EventStore; died: Promise<void> } {
  let appends = 0;
  let die: () => void = () => {};
  const died = new Promise<void>((resolve) => {
    die = resolve;
  });
  const never = new Promise<never>(() => {});
  const dead = () => {
    appends += 1;
    if (appends >= k) die();
    return appends >= k;
  };
  return {
    died,
    store: {
      ...withAppends(inner, {
        append: (event) => (dead() ? never : inner.append(event)),
        appendBatch: (events) => (dead() ? never : inner.appendBatch(events)),
      }),
      // The dead process's store is closed by the test, not by the runtime it ran.
      close: async () => {},
    },
  };
}

async function crashAndResume(kind: "file" | "dataset", lines: number, stopAt: number) {
  const temp = await tempStore("spool-sources-crash-");
  const workspace = mkdtempSync(join(tmpdir(), "spool-sources-crash-ws-"));
  try {
    const input = new MemoryInput();
    input.append(...Array.from({ length: lines }, (_, index) => `record ${index + 1}`));
    input.end();
    const sources: RuntimeSources = {
      manifest: sourceManifest({
        sources: [{ id: "data", kind, target: "data.txt", batch: { max_lines: 2 } }],
      }),
      access: { workspace, allowPaths: [], allowHosts: [], shell: false },
      adapters: memoryAdapters({ "data.txt": input }),
    };
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Processed.</response>"],
    });
    const make = (store: EventStore, used: Provider, extra: Partial<AgentRuntimeOptions> = {}) =>
      longRunRuntime(store, used, { sources, ...extra });

    const dying = dyingAfter(temp.store, stopAt);
    const died = dying.died.then(() => "died" as const);
    const first = make(dying.store, provider);
    const finished = first
      .submit(continuity, { text: "Process the data.", actor: "ada", origin: "t" })
      .then(() => first.sources(continuity).untilExhausted())
      .then(() => first.close())
      .then(() => "finished" as const);
    // The process dies at its stop point, or finishes (and closes) before it reaches it.
    const outcome = await Promise.race([finished, died]);
    if (outcome === "died") {
      // The crashed runtime is dropped as it is (what it had written before it died is in the
      // log: its appends under way are let commit first); a fresh one takes the continuity up.
      await temp.store.flush();
      const second = make(temp.store, provider);
      await second.resume(continuity);
      await second.sources(continuity).untilExhausted();
      await second.close();
    }
    const events = await readAll(temp.store, continuity);

    const numbers = chunkNumbers(events, "data");
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
    const read = events
      .filter((event) => event.type === "source.chunk")
      .flatMap((event) => (event.data as EventData<"source.chunk">).lines ?? []);
    expect(read).toEqual(input.lines);
    const ranges = deliveredRanges(events).get("data") ?? [];
    const delivered = ranges.flatMap(({ from, to }) =>
      Array.from({ length: to - from + 1 }, (_, index) => from + index),
    );
    expect(delivered).toEqual(numbers);
    if (kind === "dataset") for (const range of ranges) expect(range.to).toBe(range.from);

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => make(store, world.provider, { world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    return outcome;
  } finally {
    await temp.cleanup();
    rmSync(workspace, { recursive: true, force: true });
  }
}

describe("sources across a crash", () => {
  it("deliver every chunk exactly once, in order, wherever the process stops (property)", async () => {
    const outcomes: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("file" as const, "dataset" as const),
        fc.integer({ min: 3, max: 9 }),
        fc.integer({ min: 1, max: 25 }),
        async (kind, lines, stopAt) => {
          outcomes.push(await crashAndResume(kind, lines, stopAt));
        },
      ),
      { numRuns: 24 },
    );
    // The stop points reached into the runs (most runs crashed somewhere along the way).
    expect(outcomes.filter((outcome) => outcome === "died").length).toBeGreaterThan(12);
  });
});
