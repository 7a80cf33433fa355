/**
 * The source runner on real stores (SQLite, PostgreSQL). Exactly-once as a property: a scripted
 * source is stopped at random points (before an emission is handled, while its append is under
 * way, after it is durable), a new runner resumes from the fold each time, and the logged chunks
 * hold the source's lines exactly once, numbered without a gap, each with the cursor a resume
 * starts from. Also: large chunks go to artifacts, a store closed under the runner ends it
 * without a throw, a bad emission is logged as a failure, and pacing holds chunk n back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import {
  checkSourceEntry,
  IN_FLIGHT,
  readChunkLines,
  readSourcesState,
  type Source,
  type SourceContext,
  type SourceEmission,
  type SourceRunner,
  startSourceRunner,
} from "../src/sources/index.js";
import { type EventData, type SpoolEvent, StoreError } from "../src/spec/index.js";
import { createTestDatabase } from "./support/postgres-server.js";

const definition = checkSourceEntry({
  id: "lines",
  kind: "dataset",
  target: "data.txt",
  patterns: { error: "ERROR" },
}).definition!;

/** A step of the scripted source: a chunk of `size` lines, or a notice or rotation between. */
type Step = { type: "chunk"; size: number } | { type: "notice" } | { type: "rotated" };

/** Where a run is stopped: at its `at`-th emission, before it is handled, mid-append, or after. */
interface StopPoint {
  at: number;
  phase: "before" | "in-append" | "after";
}

/** Resolves the first time `predicate` holds; `poke` re-checks it. */
function when(predicate: () => boolean) {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return {
    promise,
    poke: () => {
      if (predicate()) resolve();
    },
  };
}

/**
 * A dataset of `lines` read in `steps` (repeated): its cursor is the number of lines consumed.
 * `onEmit` sees each emission's promise as it is handed over (to stop the runner around it).
 */
function scriptedSource(
  lines: readonly string[],
  steps: readonly Step[],
  onEmit: (emitted: Promise<void>) => Promise<void> = (emitted) => emitted,
): Source {
  return {
    definition,
    async run({ cursor, signal, emit }: SourceContext) {
      let consumed = typeof cursor?.consumed === "number" ? cursor.consumed : 0;
      for (let index = 0; !signal.aborted; index++) {
        const step = steps[index % steps.length]!;
        let emission: SourceEmission;
        let next = consumed;
        if (consumed >= lines.length) emission = { type: "exhausted", cursor: { consumed } };
        else if (step.type === "notice")
          emission = { type: "notice", code: "source.retry", message: "later", retryInMs: 5 };
        else if (step.type === "rotated")
          emission = { type: "rotated", reason: "restarted", cursor: { consumed } };
        else {
          const taken = lines.slice(consumed, consumed + step.size);
          next = consumed + taken.length;
          emission = {
            type: "chunk",
            lines: taken,
            bytes: taken.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0),
            cursor: { consumed: next },
          };
        }
        try {
          await onEmit(emit(emission));
        } catch {
          return;
        }
        if (emission.type === "exhausted") return;
        consumed = next;
      }
    },
  };
}

/** `store` with a hook called right after each append has been handed to the real store. */
function withAppendHook(store: EventStore, hook: () => void): EventStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === "append") {
        return (event: Parameters<EventStore["append"]>[0]) => {
          const pending = target.append(event);
          hook();
          return pending;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function chunkEvents(store: EventStore, continuity: string): Promise<SpoolEvent[]> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity, stream: { kind: "source", id: "lines" } }))
    events.push(event);
  return events;
}

/** Runs the source to its end, stopping one runner per stop point; returns how many runs it took. */
async function runWithStops(
  store: EventStore,
  continuity: string,
  lines: readonly string[],
  steps: readonly Step[],
  stops: readonly StopPoint[],
): Promise<number> {
  for (let run = 0; run <= stops.length + 1; run++) {
    const state = await readSourcesState(store, continuity);
    const position = state.sources.get("lines");
    if (position?.status === "exhausted") return run;
    const stop = stops[run];
    let emissions = 0;
    let appends = 0;
    let runner: SourceRunner | undefined;
    const stopNow = () => void runner?.stop();
    const hooked = withAppendHook(store, () => {
      appends += 1;
      // Append 1 is source.started; emission k is append k + 1.
      if (stop?.phase === "in-append" && appends === stop.at + 1) stopNow();
    });
    const source = scriptedSource(lines, steps, async (emitted) => {
      emissions += 1;
      if (stop?.phase === "before" && emissions === stop.at) stopNow();
      await emitted;
      if (stop?.phase === "after" && emissions === stop.at) stopNow();
    });
    runner = startSourceRunner({
      store: hooked,
      continuity,
      source,
      position: { chunks: position?.chunks ?? 0, cursor: position?.cursor },
    });
    await runner.done;
    expect(runner.outcome?.reason).toMatch(/^(stopped|exhausted)$/);
  }
  throw new Error("the source was not exhausted after every stop point was used");
}

let dir: string;
const stores: EventStore[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-source-runner-"));
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close().catch(() => {})));
  rmSync(dir, { recursive: true, force: true });
});

const locations = {
  sqlite: async () => join(dir, `store-${stores.length}`),
  postgres: async () => createTestDatabase(inject("postgresUrl")),
};

async function open(location: () => Promise<string>): Promise<EventStore> {
  const store = await openEventStore({ db: await location() });
  stores.push(store);
  return store;
}

describe.each(Object.entries(locations))("the source runner on %s", (kind, location) => {
  it("logs every line exactly once, in order, whatever the stop points", async () => {
    const store = await open(location);
    let runs = 0;
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.integer({ min: 1, max: 5 }).map((size) => ({ type: "chunk", size }) as const),
      },
      { weight: 1, arbitrary: fc.constant({ type: "notice" } as const) },
      { weight: 1, arbitrary: fc.constant({ type: "rotated" } as const) },
    );
    const stop: fc.Arbitrary<StopPoint> = fc.record({
      at: fc.integer({ min: 1, max: 6 }),
      phase: fc.constantFrom("before", "in-append", "after"),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constant("ERROR x")), { maxLength: 30 }),
        fc
          .array(step, { minLength: 1, maxLength: 6 })
          .filter((s) => s.some((x) => x.type === "chunk")),
        fc.array(stop, { maxLength: 6 }),
        async (lines, steps, stops) => {
          const continuity = `c${runs++}`;
          await runWithStops(store, continuity, lines, steps, stops);
          const events = await chunkEvents(store, continuity);
          const chunks = events.filter((event) => event.type === "source.chunk");
          const logged: string[] = [];
          let cursor: unknown;
          for (const [index, event] of events.entries()) {
            const data = event.data as Record<string, unknown>;
            // A run resumes from the last cursor logged: a chunk's, or a rotation's.
            if (event.type === "source.started") expect(data.cursor).toEqual(cursor);
            if (event.type === "source.rotated") cursor = data.cursor;
            if (event.type !== "source.chunk") continue;
            const chunk = data as EventData<"source.chunk">;
            expect(chunk.n).toBe(chunks.indexOf(event) + 1);
            logged.push(...(await readChunkLines(store, event)));
            // The chunk's cursor is where a resume starts: just past its lines.
            expect(chunk.cursor).toEqual({ consumed: logged.length });
            expect(chunk.matches).toEqual({
              error: chunk.lines!.filter((line) => line.includes("ERROR")).length,
            });
            cursor = chunk.cursor;
            expect(index).toBeGreaterThan(0);
          }
          expect(logged).toEqual(lines);
          expect(events.filter((event) => event.type === "source.exhausted")).toHaveLength(1);
          expect(events.at(-1)!.type).toBe("source.exhausted");
        },
      ),
      { numRuns: kind === "sqlite" ? 60 : 25 },
    );
  });

  it("puts large chunks in artifacts that readChunkLines reads back", async () => {
    const store = await open(location);
    const lines = ["short", "x".repeat(300), "", "é".repeat(100), "last"];
    const source = scriptedSource(lines, [
      { type: "chunk", size: 1 },
      { type: "chunk", size: 4 },
    ]);
    const runner = startSourceRunner({
      store,
      continuity: "big",
      source,
      position: { chunks: 0, cursor: undefined },
      artifactBytes: 200,
    });
    await runner.done;
    const [first, second] = (await chunkEvents(store, "big")).filter(
      (event) => event.type === "source.chunk",
    );
    const small = first!.data as EventData<"source.chunk">;
    const large = second!.data as EventData<"source.chunk">;
    expect(small.lines).toEqual(["short"]);
    expect(small.artifact).toBeUndefined();
    expect(large.lines).toBeUndefined();
    expect(large).toMatchObject({
      line_count: 4,
      artifact: { media_type: "text/plain; charset=utf-8" },
    });
    expect(await readChunkLines(store, second!)).toEqual(lines.slice(1));
    expect(await store.artifacts.get(large.artifact!.hash)).toEqual(
      Buffer.from(lines.slice(1).join("\n")),
    );
  });

  it("ends without a throw when the store refuses an append, and rejects the source's emit", async () => {
    const store = await openEventStore({ db: await location() });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const rejections: unknown[] = [];
    const first = when(() => true);
    const source: Source = {
      definition,
      async run({ emit }) {
        await emit({ type: "chunk", lines: ["a"], bytes: 2, cursor: { consumed: 1 } });
        first.poke();
        await gate;
        await emit({ type: "chunk", lines: ["b"], bytes: 2, cursor: { consumed: 2 } }).catch(
          (error: unknown) => rejections.push(error),
        );
      },
    };
    const runner = startSourceRunner({
      store,
      continuity: "closing",
      source,
      position: { chunks: 0, cursor: undefined },
    });
    await first.promise;
    await store.close();
    release();
    await expect(runner.done).resolves.toBeUndefined();
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toBeInstanceOf(StoreError);
    expect(runner.outcome).toMatchObject({ reason: "refused", error: rejections[0] });
    await runner.stop();
  });

  it("logs an emission the catalog refuses as the source's final failure", async () => {
    const store = await open(location);
    const source: Source = {
      definition,
      async run({ emit }) {
        await emit({ type: "chunk", lines: ["a"], bytes: -1, cursor: { consumed: 1 } }).catch(
          () => {},
        );
      },
    };
    const runner = startSourceRunner({
      store,
      continuity: "bad",
      source,
      position: { chunks: 0, cursor: undefined },
    });
    await runner.done;
    expect(runner.outcome?.reason).toBe("failed");
    const state = (await readSourcesState(store, "bad")).sources.get("lines")!;
    expect(state).toMatchObject({ status: "failed", chunks: 0 });
    expect(state.lastError?.code).toBe("source.bad-emission");
    expect(state.lastError?.message).toContain("data.bytes");
  });

  it("takes the next chunk before the last one is durable, up to IN_FLIGHT on their way", async () => {
    const store = await open(location);
    const lines = Array.from({ length: IN_FLIGHT * 2 }, (_, index) => `line ${index}`);
    const seen: string[] = [];
    const runner = startSourceRunner({
      store,
      continuity: "pipelined",
      source: scriptedSource(lines, [{ type: "chunk", size: 1 }], async (emitted) => {
        await emitted;
        seen.push("taken");
      }),
      position: { chunks: 0, cursor: undefined },
      appended: (event) => {
        if (event.type === "source.chunk") seen.push("durable");
      },
    });
    await runner.done;
    expect(runner.outcome?.reason).toBe("exhausted");
    // Chunks read together are taken together, and commit together: the source did not wait
    // for chunk 1 to be durable before it handed over chunk 2 (nor more than IN_FLIGHT ahead).
    expect(seen.indexOf("durable")).toBeGreaterThan(1);
    let ahead = 0;
    for (const step of seen) {
      ahead += step === "taken" ? 1 : -1;
      expect(ahead).toBeLessThanOrEqual(IN_FLIGHT);
    }
    const logged = (await chunkEvents(store, "pipelined")).filter(
      (event) => event.type === "source.chunk",
    );
    expect(logged.flatMap((event) => (event.data as EventData<"source.chunk">).lines)).toEqual(
      lines,
    );
  });

  it("holds chunk n until pacing releases it, and logs nothing of a chunk stopped while held", async () => {
    const store = await open(location);
    const lines = ["a", "b", "c"];
    const asked: number[] = [];
    const gates = new Map<number, () => void>();
    const asking = when(() => asked.includes(2));
    const appended: SpoolEvent[] = [];
    const first = when(() => appended.some((event) => (event.data as { n?: number }).n === 1));
    const second = when(() => appended.some((event) => (event.data as { n?: number }).n === 2));
    const third = when(() => asked.includes(3));
    const runner = startSourceRunner({
      store,
      continuity: "paced",
      source: scriptedSource(lines, [{ type: "chunk", size: 1 }]),
      position: { chunks: 0, cursor: undefined },
      pace: (n, signal) => {
        asked.push(n);
        if (n === 1) return Promise.resolve();
        return new Promise<void>((resolve, reject) => {
          gates.set(n, resolve);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          asking.poke();
          third.poke();
        });
      },
      appended: (event) => {
        appended.push(event);
        first.poke();
        second.poke();
      },
    });
    await asking.promise;
    // Pacing is asked for chunk 2 while chunk 1 may still be on its way to the log.
    await first.promise;
    const before = await readSourcesState(store, "paced");
    expect(before.sources.get("lines")!.chunks).toBe(1);
    gates.get(2)!();
    await second.promise;
    await third.promise;
    await runner.stop();
    expect(asked).toEqual([1, 2, 3]);
    const after = (await readSourcesState(store, "paced")).sources.get("lines")!;
    expect(after).toMatchObject({ chunks: 2, cursor: { consumed: 2 }, status: "active" });
    expect(runner.outcome?.reason).toBe("stopped");
  });
});
