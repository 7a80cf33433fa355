/**
 * The sources fold: each `source.*` event and a turn's `sources` move a source's state as the
 * catalog describes; `readSourcesState` reads the same from a real store (SQLite, PostgreSQL)
 * and is not confused by other continuities or other events.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import {
  applySourceEvent,
  checkSourceEntry,
  emptySourcesState,
  readSourcesState,
  type SourcesState,
  sourceEntryOf,
} from "../src/sources/index.js";
import type { AnyNewEvent, SpoolEvent } from "../src/spec/index.js";
import { createTestDatabase } from "./support/postgres-server.js";

const definition = checkSourceEntry({
  id: "app-log",
  kind: "file",
  target: "logs/app.log",
  patterns: { error: "ERROR" },
}).definition!;
const changed = { ...definition, target: "logs/other.log" };
const stream = { kind: "source" as const, id: "app-log" };

/** The events of one source's life, as a runtime and a runner would append them. */
function life(continuity: string): AnyNewEvent[] {
  const at = { continuity, stream };
  return [
    {
      ...at,
      type: "source.added",
      data: { source_id: "app-log", definition: sourceEntryOf(definition), by: "manifest" },
    },
    { ...at, type: "source.started", data: { source_id: "app-log", kind: "file", target: "x" } },
    {
      ...at,
      type: "source.chunk",
      data: {
        source_id: "app-log",
        n: 1,
        lines: ["a", "ERROR b"],
        line_count: 2,
        bytes: 12,
        cursor: { offset: 12 },
        matches: { error: 1 },
      },
    },
    {
      ...at,
      type: "source.failed",
      data: {
        source_id: "app-log",
        error: { code: "source.io", message: "EIO" },
        final: false,
        retry_in_ms: 100,
      },
    },
    {
      ...at,
      type: "source.chunk",
      data: {
        source_id: "app-log",
        n: 2,
        lines: ["ERROR c"],
        line_count: 1,
        bytes: 8,
        cursor: { offset: 20 },
        matches: { error: 1 },
      },
    },
    {
      continuity,
      type: "turn.added",
      actor: "source:app-log",
      origin: "source:app-log",
      data: {
        text: "digest",
        sources: [{ source_id: "app-log", from_chunk: 1, to_chunk: 2, cursor: { offset: 20 } }],
      },
    },
    {
      ...at,
      type: "source.rotated",
      data: { source_id: "app-log", reason: "truncated", cursor: { offset: 0 } },
    },
    { ...at, type: "source.paused", data: { source_id: "app-log", by: "action", action_id: "a1" } },
    {
      ...at,
      type: "source.added",
      data: { source_id: "app-log", definition: sourceEntryOf(changed), by: "manifest" },
    },
  ];
}

/** Makes stored-looking events out of new ones, for the pure fold. */
function stored(events: AnyNewEvent[]): SpoolEvent[] {
  return events.map((event, index) => ({
    seq: index + 1,
    id: String(index),
    continuity: event.continuity,
    stream: event.stream ?? { kind: "continuity", id: event.continuity },
    type: event.type,
    ts: `2025-01-01T00:00:${String(index).padStart(2, "0")}.000Z`,
    actor: event.actor ?? null,
    origin: event.origin ?? null,
    criticality: "critical",
    data: event.data,
    hash: "",
  }));
}

const fold = (events: SpoolEvent[]): SourcesState =>
  events.reduce(applySourceEvent, emptySourcesState());

describe("applySourceEvent", () => {
  it("follows a source through chunks, notices, a delivery, a rotation, a pause and a re-add", () => {
    const events = stored(life("c"));
    const state = fold(events);
    expect([...state.sources.keys()]).toEqual(["app-log"]);
    expect(state.sources.get("app-log")).toEqual({
      id: "app-log",
      definition: changed,
      status: "paused",
      chunks: 2,
      cursor: { offset: 0 },
      lines: 3,
      bytes: 20,
      matches: { error: 2 },
      delivered: 2,
      deliveredCursor: { offset: 20 },
      startedAt: events[1]!.ts,
      lastChunkAt: events[4]!.ts,
      lastError: { code: "source.io", message: "EIO" },
    });
    // A notice (final: false) leaves it active.
    expect(fold(events.slice(0, 4)).sources.get("app-log")!.status).toBe("active");
  });

  it("marks final failures, exhaustion and removal, and resumes", () => {
    const at = { continuity: "c", stream };
    const base = stored(life("c")).slice(0, 3);
    const then = (...events: AnyNewEvent[]) =>
      fold([...base, ...stored(events)]).sources.get("app-log")!;
    const failed = {
      ...at,
      type: "source.failed",
      data: {
        source_id: "app-log",
        error: { code: "source.denied", message: "no" },
        final: true,
        cursor: { offset: 9 },
      },
    } as const;
    expect(then(failed)).toMatchObject({ status: "failed", cursor: { offset: 9 } });
    const resumed = {
      ...at,
      type: "source.resumed",
      data: { source_id: "app-log", by: "cli" },
    } as const;
    expect(then(failed, resumed).status).toBe("active");
    const exhausted = {
      ...at,
      type: "source.exhausted",
      data: { source_id: "app-log", cursor: { offset: 99 } },
    } as const;
    expect(then(exhausted)).toMatchObject({
      status: "exhausted",
      cursor: { offset: 99 },
      chunks: 1,
    });
    const removed = {
      ...at,
      type: "source.removed",
      data: { source_id: "app-log", by: "action" },
    } as const;
    expect(then(removed, resumed).status).toBe("removed");
    const readded = {
      ...at,
      type: "source.added",
      data: { source_id: "app-log", definition: sourceEntryOf(changed), by: "action" },
    } as const;
    expect(then(removed, readded)).toMatchObject({
      status: "active",
      chunks: 1,
      definition: changed,
    });
    expect(then(exhausted, readded).status).toBe("exhausted");
  });

  it("ignores other events and keeps a later delivery over an earlier one", () => {
    const events = stored([
      { continuity: "c", type: "turn.added", actor: "u", origin: "cli", data: { text: "hi" } },
      {
        continuity: "c",
        type: "turn.added",
        actor: "s",
        origin: "source:x",
        data: {
          text: "d",
          sources: [{ source_id: "x", from_chunk: 3, to_chunk: 4, cursor: { n: 4 } }],
        },
      },
      {
        continuity: "c",
        type: "turn.added",
        actor: "s",
        origin: "source:x",
        data: {
          text: "d",
          sources: [{ source_id: "x", from_chunk: 1, to_chunk: 2, cursor: { n: 2 } }],
        },
      },
    ]);
    expect(fold(events.slice(0, 1)).sources.size).toBe(0);
    expect(fold(events).sources.get("x")).toMatchObject({
      delivered: 4,
      deliveredCursor: { n: 4 },
    });
  });
});

let dir: string;
let stores: EventStore[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-sources-state-"));
  stores = [];
});
afterEach(async () => {
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

const locations = {
  sqlite: async () => join(dir, "store"),
  postgres: async () => createTestDatabase(inject("postgresUrl")),
};

describe.each(Object.entries(locations))("readSourcesState on %s", (_kind, location) => {
  it("reads what the pure fold gives, for its own continuity only", async () => {
    const store = await openEventStore({ db: await location() });
    stores.push(store);
    for (const event of life("other")) await store.append(event);
    await store.append({
      continuity: "c",
      type: "turn.added",
      actor: "u",
      origin: "cli",
      data: { text: "x" },
    });
    const appended: SpoolEvent[] = [];
    for (const event of life("c")) appended.push(await store.append(event));
    const state = await readSourcesState(store, "c");
    expect(state).toEqual(fold(appended));
    expect(state.sources.get("app-log")!.chunks).toBe(2);
  });
});
