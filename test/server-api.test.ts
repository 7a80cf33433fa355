/**
 * The HTTP API through its public entry points: `createServer(...).request` for the access
 * matrix and input checks, and a real listening server (`serve`) for live events resumed by the
 * `eventsource` package across a server restart, and for the real `openai` SDK. The agent is
 * Spool's built-in demo on the scripted provider (no provider configured): real runtime, real
 * store, nothing mocked. Every test runs on SQLite and on PostgreSQL (the test run's embedded
 * server, a fresh database per test).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventSource } from "eventsource";
import fc from "fast-check";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { AccessTokens, AgentHost, createServer, serve } from "../src/server/index.js";
import { createTestDatabase } from "./support/postgres-server.js";

let dir: string;
let store: EventStore;
const closers: (() => Promise<void>)[] = [];

/** Opens a fresh store of `backend` (and a workspace folder) before each test of the block. */
function storePerTest(backend: "sqlite" | "postgres"): void {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-server-"));
    const db =
      backend === "sqlite"
        ? join(dir, "spool.db")
        : await createTestDatabase(inject("postgresUrl"));
    store = await openEventStore({ db, cwd: dir, env: {} });
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
}

function app() {
  const host = new AgentHost({ store, workspace: dir, env: {}, lease: { ttlMs: 5_000 } });
  closers.push(() => host.close());
  return createServer({ store, host, rateLimit: { burst: 1000, perSecond: 1000 } });
}

const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

/** Whether an answer got past access control: not 401, 403, nor the 404 of a hidden continuity. */
function passed(status: number, body: string): boolean {
  return status !== 401 && status !== 403 && !body.includes('"continuity.not-found"');
}

describe.each(["sqlite", "postgres"] as const)("on %s", (backend) => {
  storePerTest(backend);

  describe("access", () => {
    it("grants each token exactly its role: 0 unauthorized reads or writes over the matrix", async () => {
      const tokens = new AccessTokens(store);
      const owner = await tokens.create({ actor: "alice", role: "owner", by: "test" });
      const api = app();
      for (const id of ["a", "b"]) {
        const res = await api.request("/api/continuities", {
          method: "POST",
          headers: bearer(owner.secret),
          body: JSON.stringify({ id }),
        });
        expect(res.status).toBe(201);
      }
      const reader = await tokens.create({ actor: "rita", role: "reader", by: "test" });
      const scoped = await tokens.create({ actor: "sam", role: "writer", scope: "a", by: "test" });
      const revoked = await tokens.create({ actor: "rex", role: "owner", by: "test" });
      await tokens.revoke(revoked.token.id, "test");
      const cases: { secret: string; continuity: string; read: boolean; write: boolean }[] = [
        { secret: owner.secret, continuity: "a", read: true, write: true },
        { secret: reader.secret, continuity: "a", read: true, write: false },
        { secret: scoped.secret, continuity: "a", read: true, write: true },
        { secret: scoped.secret, continuity: "b", read: false, write: false },
        { secret: revoked.secret, continuity: "a", read: false, write: false },
        { secret: "spool_not-a-token", continuity: "a", read: false, write: false },
      ];
      const reads = ["events", "threads", "pins", "sources", "watch/settings", ""];
      // Routes whose answer depends on more than access (no frame yet, no such artifact): the
      // token passed when the refusal is not about it.
      const gatedReads = ["frames/latest", `artifacts/${"a".repeat(64)}`];
      const writes: [string, string, unknown][] = [
        ["PUT", "watch/settings", { changeThreshold: 0.02 }],
        ["POST", "sources", { id: "extra", kind: "file", target: "extra.log" }],
        ["POST", "sources/nope/pause", {}],
        ["POST", "sources/nope/resume", {}],
        ["DELETE", "sources/nope", undefined],
        ["POST", "frames", "not an image"],
      ];
      for (const item of cases) {
        for (const route of reads) {
          const res = await api.request(
            `/api/continuities/${item.continuity}${route ? `/${route}` : ""}`,
            {
              headers: bearer(item.secret),
            },
          );
          expect([item, route, res.status < 300]).toEqual([item, route, item.read]);
        }
        for (const route of gatedReads) {
          const res = await api.request(`/api/continuities/${item.continuity}/${route}`, {
            headers: bearer(item.secret),
          });
          expect([item, route, passed(res.status, await res.text())]).toEqual([
            item,
            route,
            item.read,
          ]);
        }
        for (const [method, route, body] of writes) {
          const res = await api.request(`/api/continuities/${item.continuity}/${route}`, {
            method,
            headers: { ...bearer(item.secret), "Content-Type": "application/json" },
            ...(body === undefined
              ? {}
              : { body: typeof body === "string" ? body : JSON.stringify(body) }),
          });
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          expect([item, method, route, passed(res.status, text)]).toEqual([
            item,
            method,
            route,
            item.write,
          ]);
        }
        const pin = await api.request(`/api/continuities/${item.continuity}/pins`, {
          method: "POST",
          headers: bearer(item.secret),
          body: JSON.stringify({ text: "a fact" }),
        });
        expect([item, pin.status < 300]).toEqual([item, item.write]);
        const policy = await api.request(`/api/continuities/${item.continuity}/policy`, {
          method: "PUT",
          headers: bearer(item.secret),
          body: JSON.stringify({ policy: "reject" }),
        });
        expect(policy.status < 300).toBe(item.secret === owner.secret);
      }
      const listed = await api.request("/api/continuities", { headers: bearer(scoped.secret) });
      const ids = ((await listed.json()) as { continuities: { id: string }[] }).continuities;
      expect(ids.map((row) => row.id)).toEqual(["a"]);
      // The log holds hashes only: no secret appears in any stored event.
      for await (const event of store.read({})) {
        const text = JSON.stringify(event);
        for (const secret of [owner, reader, scoped, revoked])
          expect(text).not.toContain(secret.secret);
      }
    });

    it("refuses a revoked token at its next request", async () => {
      const tokens = new AccessTokens(store);
      const made = await tokens.create({ actor: "alice", role: "owner", by: "test" });
      const api = app();
      expect((await api.request("/api/me", { headers: bearer(made.secret) })).status).toBe(200);
      // Revoked through another AccessTokens over the same store, as `spool tokens revoke` would.
      await new AccessTokens(store).revoke(made.token.id, "test");
      const res = await api.request("/api/me", { headers: bearer(made.secret) });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: "auth.invalid-token" } });
    });

    it("tells a creator the role it holds in the new continuity, as the list and get do", async () => {
      const made = await new AccessTokens(store).create({
        actor: "wes",
        role: "writer",
        by: "test",
      });
      const api = app();
      const created = await api.request("/api/continuities", {
        method: "POST",
        headers: bearer(made.secret),
        body: JSON.stringify({ id: "w" }),
      });
      expect(created.status).toBe(201);
      const { continuity } = (await created.json()) as { continuity: { role: string } };
      const got = await api.request("/api/continuities/w", { headers: bearer(made.secret) });
      const listed = await api.request("/api/continuities", { headers: bearer(made.secret) });
      const rows = ((await listed.json()) as { continuities: { id: string; role: string }[] })
        .continuities;
      expect(continuity.role).toBe(
        ((await got.json()) as { continuity: { role: string } }).continuity.role,
      );
      expect(rows.find((row) => row.id === "w")?.role).toBe(continuity.role);
    });

    it("answers any body and query with a JSON 4xx, never a 500 or a stack trace", async () => {
      const made = await new AccessTokens(store).create({
        actor: "alice",
        role: "owner",
        by: "test",
      });
      const api = app();
      await api.request("/api/continuities", {
        method: "POST",
        headers: bearer(made.secret),
        body: JSON.stringify({ id: "c" }),
      });
      const routes = [
        ["POST", "/api/continuities"],
        ["POST", "/api/continuities/c/turns"],
        ["POST", "/api/continuities/c/pins"],
        ["PUT", "/api/continuities/c/policy"],
        ["POST", "/api/continuities/c/actors"],
        ["POST", "/api/broadcast"],
        ["POST", "/api/chat"],
        ["POST", "/v1/chat/completions"],
        ["GET", "/api/continuities/c/events"],
        ["GET", "/api/continuities/c/context"],
        ["POST", "/api/continuities/c/sources"],
        ["POST", "/api/continuities/c/sources/s/pause"],
        ["POST", "/api/continuities/c/sources/s/resume"],
        ["DELETE", "/api/continuities/c/sources/s"],
        ["GET", "/api/continuities/c/watch/settings"],
        ["PUT", "/api/continuities/c/watch/settings"],
        ["POST", "/api/continuities/c/frames"],
        ["GET", "/api/continuities/c/frames/latest"],
        ["GET", "/api/continuities/c/artifacts/0123"],
      ] as const;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          fc.oneof(
            fc.string(),
            fc.json(),
            fc.jsonValue().map((value) => JSON.stringify(value)),
          ),
          fc.dictionary(fc.constantFrom("after", "limit", "types", "step", "at", "x"), fc.string()),
          async ([method, path], body, query) => {
            const search = new URLSearchParams(query).toString();
            const res = await api.request(`${path}?${search}`, {
              method,
              headers: bearer(made.secret),
              ...(method === "GET" || method === "DELETE" ? {} : { body }),
            });
            const text = await res.text();
            expect(res.status).toBeLessThan(500);
            expect(text).not.toMatch(/\n\s+at /);
          },
        ),
        { numRuns: 120 },
      );
    });
  });

  describe("over a real socket", () => {
    it("resumes live events with Last-Event-ID across a server restart: every event once, in order", async () => {
      const made = await new AccessTokens(store).create({
        actor: "alice",
        role: "owner",
        by: "test",
      });
      const start = (port = 0) =>
        serve({
          store,
          workspace: dir,
          env: {},
          lease: { ttlMs: 5_000 },
          port,
          heartbeatMs: 60_000,
        });
      let server = await start();
      const port = server.port;
      for (let i = 0; i < 5; i++) {
        await store.append({
          continuity: "live",
          type: "turn.added",
          actor: "alice",
          origin: "test",
          data: { text: `t${i}` },
        });
      }
      const seen: number[] = [];
      let reached!: () => void;
      let target = 5;
      let wait = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const source = new EventSource(`${server.url}/api/continuities/live/events/live`, {
        fetch: (input, init) =>
          fetch(input, { ...init, headers: { ...init?.headers, ...bearer(made.secret) } }),
      });
      source.onmessage = (message) => {
        seen.push(Number(message.lastEventId));
        if (seen.length >= target) reached();
      };
      await wait;
      await server.close();
      for (let i = 5; i < 10; i++) {
        await store.append({
          continuity: "live",
          type: "turn.added",
          actor: "alice",
          origin: "test",
          data: { text: `t${i}` },
        });
      }
      target = 10;
      wait = new Promise<void>((resolve) => {
        reached = resolve;
      });
      server = await start(port);
      closers.push(() => server.close());
      await wait;
      source.close();
      const seqs: number[] = [];
      for await (const event of store.read({ continuity: "live" })) seqs.push(event.seq);
      expect(seen).toEqual(seqs);
    });

    it("lets the openai SDK talk to an agent: the model names it, the token names the actor", async () => {
      const made = await new AccessTokens(store).create({
        actor: "alice",
        role: "writer",
        by: "test",
      });
      const server = await serve({
        store,
        workspace: dir,
        env: {},
        lease: { ttlMs: 5_000 },
        port: 0,
      });
      closers.push(() => server.close());
      const client = new OpenAI({ apiKey: made.secret, baseURL: `${server.url}/v1` });
      const stream = await client.chat.completions.create({
        model: "demo",
        stream: true,
        messages: [{ role: "user", content: "hello there" }],
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      expect(text.length).toBeGreaterThan(0);
      const turns = [];
      for await (const event of store.read({
        continuity: "openai:demo:alice",
        types: ["turn.added"],
      })) {
        turns.push(event);
      }
      expect(turns.map((event) => [event.actor, (event.data as { text: string }).text])).toEqual([
        ["alice", "hello there"],
      ]);
      const models = await client.models.list();
      expect(models.data.map((model) => model.id)).toContain("demo");
    });
  });
});
