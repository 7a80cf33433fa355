/**
 * The routes that change a running agent's inputs, through `createServer(...).request` over a real
 * SQLite store and a real `AgentHost`: sources added, paused, resumed and removed through the
 * runtime's own path (the events logged `by: "http"` with the token's actor, the runner stopped
 * and started again), the stream-watch settings read and changed (a bad value refused with the
 * message naming its range), and frames pushed into the agent's push frame source, read back as
 * the latest frame and by hash. The agent is a workspace manifest with a file source and
 * `watch: { source: { push: true } }` on the scripted provider: nothing is mocked. Every test runs
 * on SQLite and on PostgreSQL (the test run's embedded server, a fresh database per test).
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { AccessTokens, AgentHost, createServer } from "../src/server/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { createTestDatabase } from "./support/postgres-server.js";

let dir: string;
let store: EventStore;
let host: AgentHost;
let api: ReturnType<typeof createServer>;
let owner: string;
let reader: string;
const CONTINUITY = "desk";

const MANIFEST = `directive: assistant
description: watches a log and the screen
sources:
  - id: app-log
    kind: file
    target: app.log
source_actions: { enabled: true, kinds: [file] }
watch:
  source: { push: true }
`;

function call(
  method: string,
  path: string,
  secret: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(
    api.request(path, {
      method,
      headers: { Authorization: `Bearer ${secret}`, ...headers },
      ...(body === undefined
        ? {}
        : { body: body instanceof Uint8Array ? body : JSON.stringify(body) }),
    }),
  );
}

const base = `/api/continuities/${CONTINUITY}`;

/** Resolves with the first event after `after` of one of `types` that `match` accepts. */
async function until(
  types: string[],
  match: (event: SpoolEvent) => boolean = () => true,
  after = 0,
): Promise<SpoolEvent> {
  const stop = new AbortController();
  for await (const message of store.subscribe({
    continuity: CONTINUITY,
    types,
    signal: stop.signal,
  })) {
    if (message.type === "event" && message.event.seq > after && match(message.event)) {
      stop.abort();
      return message.event;
    }
  }
  throw new Error(`the log ended without ${types.join(", ")}`);
}

const of = (id: string) => (event: SpoolEvent) =>
  (event.data as { source_id?: string }).source_id === id;

async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  return ((await res.json()) as { error: { code: string; message: string } }).error;
}

function jpeg(rgb: [number, number, number], width = 64, height = 36): Promise<Buffer> {
  const [r, g, b] = rgb;
  return sharp({ create: { width, height, channels: 3, background: { r, g, b } } })
    .jpeg()
    .toBuffer();
}

describe.each(["sqlite", "postgres"] as const)("on %s", (backend) => {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-server-inputs-"));
    mkdirSync(join(dir, ".ai", "agents"), { recursive: true });
    writeFileSync(join(dir, ".ai", "agents", "watcher.yaml"), MANIFEST);
    writeFileSync(join(dir, "app.log"), "booted\n");
    const db =
      backend === "sqlite"
        ? join(dir, "spool.db")
        : await createTestDatabase(inject("postgresUrl"));
    store = await openEventStore({ db, cwd: dir, env: {} });
    host = new AgentHost({ store, workspace: dir, env: { HOME: dir }, lease: { ttlMs: 5_000 } });
    const tokens = new AccessTokens(store);
    owner = (await tokens.create({ actor: "alice", role: "owner", by: "test" })).secret;
    reader = (await tokens.create({ actor: "rita", role: "reader", by: "test" })).secret;
    api = createServer({ store, host, tokens, rateLimit: { burst: 1000, perSecond: 1000 } });
    const created = await call("POST", "/api/continuities", owner, {
      id: CONTINUITY,
      agent: "watcher",
    });
    expect(created.status).toBe(201);
  });

  afterEach(async () => {
    await host.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("sources over HTTP", () => {
    it("adds, pauses, resumes and removes a source through the runtime: logged by http, runner stopped and started", async () => {
      writeFileSync(join(dir, "extra.log"), "one\ntwo\n");
      const added = await call("POST", `${base}/sources`, owner, {
        id: "extra",
        kind: "file",
        target: "extra.log",
      });
      expect(added.status).toBe(201);
      expect(((await added.json()) as { source: { status: string } }).source.status).toBe("active");
      const firstStart = await until(["source.started"], of("extra"));
      await until(["source.chunk"], of("extra"));

      const paused = await call("POST", `${base}/sources/extra/pause`, owner, { reason: "noisy" });
      expect(paused.status).toBe(200);
      expect(((await paused.json()) as { source: { status: string } }).source.status).toBe(
        "paused",
      );
      appendFileSync(join(dir, "extra.log"), "three\n");
      const resumed = await call("POST", `${base}/sources/extra/resume`, owner, {});
      expect(resumed.status).toBe(200);
      // Resuming starts a new runner (a new source.started from its cursor): the pause stopped the
      // old one, or the start would have found it still running and logged nothing.
      const again = await until(["source.started"], of("extra"), firstStart.seq);
      expect((again.data as { cursor?: unknown }).cursor).toBeDefined();
      const chunk = await until(
        ["source.chunk"],
        (event) => of("extra")(event) && JSON.stringify(event.data).includes("three"),
      );
      expect(chunk.seq).toBeGreaterThan(again.seq);

      const removed = await call("DELETE", `${base}/sources/extra`, owner);
      expect(removed.status).toBe(200);
      const changes: SpoolEvent[] = [];
      for await (const event of store.read({
        continuity: CONTINUITY,
        types: ["source.added", "source.paused", "source.resumed", "source.removed"],
      })) {
        if (of("extra")(event)) changes.push(event);
      }
      expect(
        changes.map((event) => [event.type, (event.data as { by: string }).by, event.actor]),
      ).toEqual([
        ["source.added", "http", "alice"],
        ["source.paused", "http", "alice"],
        ["source.resumed", "http", "alice"],
        ["source.removed", "http", "alice"],
      ]);
      const listed = await call("GET", `${base}/sources`, reader);
      const rows = ((await listed.json()) as { sources: { id: string; status: string }[] }).sources;
      expect(rows.map((row) => [row.id, row.status])).toEqual([
        ["app-log", "active"],
        ["extra", "removed"],
      ]);
    });

    it("refuses readers, unknown sources, bad definitions, targets outside the policy and ids in use", async () => {
      const asReader = await call("POST", `${base}/sources/app-log/pause`, reader, {});
      expect([asReader.status, (await errorOf(asReader)).code]).toEqual([403, "auth.forbidden"]);
      const readerAdd = await call("POST", `${base}/sources`, reader, {
        id: "x",
        kind: "file",
        target: "x.log",
      });
      expect(readerAdd.status).toBe(403);
      const unknown = await call("POST", `${base}/sources/nope/pause`, owner, {});
      expect([unknown.status, (await errorOf(unknown)).code]).toEqual([404, "source.unknown"]);
      const unknownDelete = await call("DELETE", `${base}/sources/nope`, owner);
      expect(unknownDelete.status).toBe(404);
      const bad = await call("POST", `${base}/sources`, owner, { id: "x", kind: "telepathy" });
      const badError = await errorOf(bad);
      expect([bad.status, badError.code]).toEqual([400, "source.bad-definition"]);
      expect(badError.message).toContain("kind");
      const outside = await call("POST", `${base}/sources`, owner, {
        id: "passwords",
        kind: "file",
        target: "/etc/passwd",
      });
      expect([outside.status, (await errorOf(outside)).code]).toEqual([403, "source.denied"]);
      const command = await call("POST", `${base}/sources`, owner, {
        id: "shell",
        kind: "command",
        target: "cat /etc/passwd",
      });
      expect(command.status).toBe(403);
      const taken = await call("POST", `${base}/sources`, owner, {
        id: "app-log",
        kind: "file",
        target: "app.log",
      });
      expect([taken.status, (await errorOf(taken)).code]).toEqual([409, "source.exists"]);
      const extraKey = await call("POST", `${base}/sources/app-log/resume`, owner, { now: true });
      expect([extraKey.status, (await errorOf(extraKey)).code]).toEqual([400, "request.invalid"]);
      const types: string[] = [];
      for await (const event of store.read({
        continuity: CONTINUITY,
        types: ["source.added", "source.paused"],
      })) {
        types.push(`${event.type}:${(event.data as { source_id: string }).source_id}`);
      }
      expect(types).toEqual(["source.added:app-log"]);
    });
  });

  describe("stream-watch settings over HTTP", () => {
    it("reads the settings, saves a valid change through the running watch and refuses a bad one with its range", async () => {
      const first = await call("GET", `${base}/watch/settings`, reader);
      expect(first.status).toBe(200);
      expect(
        ((await first.json()) as { settings: { changeThreshold: number } }).settings
          .changeThreshold,
      ).toBe(0.01);
      const saved = await call("PUT", `${base}/watch/settings`, owner, {
        changeThreshold: 0.2,
        maxNoteEntries: 6,
      });
      expect(saved.status).toBe(200);
      const body = (await saved.json()) as { settings: Record<string, unknown>; watching: boolean };
      expect([body.settings.changeThreshold, body.settings.maxNoteEntries, body.watching]).toEqual([
        0.2,
        6,
        true,
      ]);
      const refused = await call("PUT", `${base}/watch/settings`, owner, { changeThreshold: 5 });
      const error = await errorOf(refused);
      expect([refused.status, error.code]).toEqual([400, "request.invalid"]);
      expect(error.message).toBe("changeThreshold must be a number from 0.005 to 1 (default 0.01)");
      const unknownKey = await call("PUT", `${base}/watch/settings`, owner, {
        change_threshold: 0.3,
      });
      expect((await errorOf(unknownKey)).message).toContain("did you mean changeThreshold?");
      const asReader = await call("PUT", `${base}/watch/settings`, reader, {
        changeThreshold: 0.3,
      });
      expect(asReader.status).toBe(403);
      const after = await call("GET", `${base}/watch/settings`, reader);
      const now = (await after.json()) as { settings: Record<string, unknown>; watching: boolean };
      expect([now.settings.changeThreshold, now.watching]).toEqual([0.2, true]);
      const logged: unknown[] = [];
      for await (const event of store.read({
        continuity: CONTINUITY,
        types: ["watch.settings-changed"],
      })) {
        const data = event.data as { by: string; changed: string[] };
        logged.push([data.by, data.changed, event.actor ?? null]);
      }
      expect(logged).toEqual([
        ["manifest", expect.arrayContaining(["changeThreshold"]), null],
        ["http", ["maxNoteEntries", "changeThreshold"], "alice"],
      ]);
    });
  });

  describe("frames over HTTP", () => {
    it("pushes a frame into the watch; the latest frame and its artifact answer its bytes", async () => {
      const frame = await jpeg([200, 30, 30]);
      const pushed = await call("POST", `${base}/frames`, owner, new Uint8Array(frame), {
        "Content-Type": "image/jpeg",
      });
      expect(pushed.status).toBe(202);
      const looked = await until(
        ["note.added", "note.skipped", "watch.failed"],
        (event) => (event.data as { frame?: unknown }).frame !== undefined,
      );
      const hash = (looked.data as { frame: { hash: string } }).frame.hash;
      const latest = await call("GET", `${base}/frames/latest`, reader);
      expect([latest.status, latest.headers.get("content-type")]).toEqual([200, "image/jpeg"]);
      expect(latest.headers.get("x-frame-hash")).toBe(hash);
      expect(Buffer.from(await latest.arrayBuffer()).equals(frame)).toBe(true);
      const byHash = await call("GET", `${base}/artifacts/${hash}`, reader);
      expect(byHash.status).toBe(200);
      expect(Buffer.from(await byHash.arrayBuffer()).equals(frame)).toBe(true);
      const other = await call("GET", `${base}/artifacts/${"0".repeat(64)}`, reader);
      expect([other.status, (await errorOf(other)).code]).toEqual([404, "artifact.not-found"]);
      const malformed = await call("GET", `${base}/artifacts/not-a-hash`, reader);
      expect(malformed.status).toBe(400);
    });

    it("refuses garbage, truncated, oversized, empty and non-image uploads with typed errors, and readers", async () => {
      const good = await jpeg([10, 120, 10]);
      const cases: [Uint8Array, Record<string, string>, number, string][] = [
        [new TextEncoder().encode("this is not an image at all"), {}, 422, "frame.unsupported"],
        [
          new Uint8Array(good.subarray(0, Math.floor(good.length / 2))),
          {},
          422,
          "frame.undecodable",
        ],
        [new Uint8Array(0), {}, 400, "frame.empty"],
        [new Uint8Array(good), { "Content-Type": "text/plain" }, 415, "frame.unsupported-type"],
        [new Uint8Array(8 * 1024 * 1024 + 1), {}, 413, "frame.too-large"],
      ];
      for (const [body, headers, status, code] of cases) {
        const res = await call("POST", `${base}/frames`, owner, body, {
          "Content-Type": "application/octet-stream",
          ...headers,
        });
        expect([code, res.status, (await errorOf(res)).code]).toEqual([code, status, code]);
      }
      const asReader = await call("POST", `${base}/frames`, reader, new Uint8Array(good), {
        "Content-Type": "image/jpeg",
      });
      expect(asReader.status).toBe(403);
      const none = await call("GET", `${base}/frames/latest`, reader);
      expect([none.status, (await errorOf(none)).code]).toEqual([404, "frame.none"]);
    });
  });
});
