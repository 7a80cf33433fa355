/**
 * A source's chunks become delivery turns (on SQLite and PostgreSQL): the manifest's source is
 * added when the continuity is taken up, its runner reads the input into the log, and whenever
 * the continuity is idle one turn (actor `source:<id>`, origin `source`) delivers every chunk not
 * delivered yet, once, in order, with no gap; its digest is what the model's context shows, and
 * the source's end is told in a turn too. The run replays identically, opening no source.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { createScriptedProvider, type ProviderRequest } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeSources } from "../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import {
  chunkNumbers,
  deliveredRanges,
  deliveries,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
} from "./support/memory-sources.js";
import { createTestDatabase } from "./support/postgres-server.js";
import { readAll } from "./support/transcripts.js";

const continuity = "watch";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sqliteStore(): Promise<EventStore> {
  const dir = mkdtempSync(join(tmpdir(), "spool-sources-"));
  const store = await openEventStore({ db: join(dir, "store"), durability: "fast" });
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

async function postgresStore(): Promise<EventStore> {
  const store = await openEventStore({ db: await createTestDatabase(inject("postgresUrl")) });
  cleanups.push(() => store.close());
  return store;
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "spool-sources-ws-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The agent's sources: `app-log`, three lines a chunk, counting ERROR lines. */
function appLog(dir: string, input: MemoryInput): RuntimeSources {
  return {
    manifest: sourceManifest({
      sources: [
        {
          id: "app-log",
          kind: "file",
          target: "logs/app.log",
          batch: { max_lines: 3 },
          patterns: { error: "ERROR" },
        },
      ],
    }),
    access: { workspace: dir, allowPaths: [], allowHosts: [], shell: false },
    adapters: memoryAdapters({ "logs/app.log": input }),
  };
}

const turnData = (event: SpoolEvent) => event.data as EventData<"turn.added">;

/** The text of the last user message of a request. */
function lastUser(request: ProviderRequest): string {
  const users = request.messages.filter((message) => message.role === "user");
  const content = users.at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

describe.each([
  ["SQLite", sqliteStore],
  ["PostgreSQL", postgresStore],
])("delivery turns on %s", (_name, openStore) => {
  it("delivers every chunk once, in order, as turns whose digest the model sees; the end is told; replay is identical", async () => {
    const store = await openStore();
    const dir = workspace();
    const input = new MemoryInput();
    const sources = appLog(dir, input);
    const provider = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const make = (target: EventStore, overrides: Partial<AgentRuntimeOptions> = {}) =>
      longRunRuntime(target, overrides.provider ?? provider, { sources, ...overrides });
    input.append("boot ok", "ERROR disk full", "retrying", "ERROR disk full", "recovered");
    // The owner holds the continuity's lease: its own delivery turns are not handed back to it
    // by the lease's follower (each is announced and run once).
    const received: string[] = [];
    const runtime = make(store, {
      lease: { holder: "watcher" },
      observer: (notice) => {
        if (notice.type === "turn-received") received.push(notice.turn);
      },
    });
    await runtime.submit(continuity, { text: "Watch the app log.", actor: "ada", origin: "t" });
    input.append("request 1", "ERROR timeout", "request 2", "request 3");
    input.end();
    await runtime.sources(continuity).untilExhausted();
    const states = runtime.sources(continuity).states();
    await runtime.close();
    const events = await readAll(store, continuity);

    // The manifest's source was added before the first turn, and read to its end.
    const added = events.find((event) => event.type === "source.added");
    expect(added?.data).toMatchObject({ source_id: "app-log", by: "manifest" });
    expect(added!.seq).toBeLessThan(events.find((event) => event.type === "turn.added")!.seq);
    const numbers = chunkNumbers(events, "app-log");
    expect(numbers).toEqual(numbers.map((_, index) => index + 1));
    const lines = events
      .filter((event) => event.type === "source.chunk")
      .flatMap((event) => (event.data as EventData<"source.chunk">).lines ?? []);
    expect(lines).toEqual(input.lines);

    // Every chunk delivered once, in order, no gap; each turn is the source's, from `source`.
    const ranges = deliveredRanges(events).get("app-log") ?? [];
    const covered = ranges.flatMap(({ from, to }) =>
      Array.from({ length: to - from + 1 }, (_, index) => from + index),
    );
    expect(covered).toEqual(numbers);
    const turns = deliveries(events);
    for (const turn of turns) {
      expect(turn.actor).toBe("source:app-log");
      expect(turn.origin).toBe("source");
    }
    expect(received).toEqual(turns.map((turn) => turn.id));
    const started = events
      .filter((event) => event.type === "run.started")
      .map((event) => (event.data as EventData<"run.started">).turn);
    expect(started).toEqual([events.find((event) => event.type === "turn.added")!.id, ...received]);
    // Each delivery's digest is the user message of the model call its run made, with its lines.
    for (const turn of turns) {
      const text = turnData(turn).text;
      expect(provider.requests.some((request) => lastUser(request) === text)).toBe(true);
      for (const entry of turnData(turn).sources ?? []) {
        expect(text).toContain(`Source app-log (file logs/app.log)`);
        const chunkLines = events
          .filter(
            (event) =>
              event.type === "source.chunk" &&
              (event.data as EventData<"source.chunk">).n >= entry.from_chunk &&
              (event.data as EventData<"source.chunk">).n <= entry.to_chunk,
          )
          .flatMap((event) => (event.data as EventData<"source.chunk">).lines ?? []);
        for (const line of chunkLines) expect(text).toContain(line);
        // The turn records what it brought, as its chunks counted it.
        expect(entry.lines).toBe(chunkLines.length);
        const errors = chunkLines.filter((line) => line.includes("ERROR")).length;
        expect(entry.matches).toEqual({ error: errors });
      }
    }
    // The end is told once, in the last delivery.
    const told = turns.filter((turn) => turnData(turn).text.includes("is exhausted"));
    expect(told).toHaveLength(1);
    expect(told[0]).toBe(turns.at(-1));
    expect(turns.map((turn) => turnData(turn).ends)).toEqual([
      ...turns.slice(1).map(() => undefined),
      [{ source_id: "app-log", status: "exhausted" }],
    ]);
    expect(states).toEqual([
      expect.objectContaining({
        id: "app-log",
        status: "exhausted",
        chunks: numbers.length,
        delivered: numbers.length,
        matches: { error: 3 },
      }),
    ]);

    const report = await replayContinuity({
      source: store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store: scratch, world }) =>
        make(scratch, { provider: world.provider, world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.reached).toEqual([]);
    expect(report.identical).toBe(true);
    expect(input.opened).toBe(1);
  });
});
