/**
 * Live events fan out from one store subscription per continuity (`LiveHub`): many SSE clients of a
 * listening server share one channel, each still resumes from its own `after` with no gap and no
 * duplicate; a client whose queue overflows (a tiny `liveBuffer` under bursts) is disconnected and
 * resumes by `Last-Event-ID` with every event exactly once; a subscriber that never reads does
 * not hold the others up. Real SQLite and PostgreSQL stores, real sockets, the `eventsource`
 * package.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventSource } from "eventsource";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { AccessTokens, LiveHub, serve } from "../src/server/index.js";
import { createTestDatabase } from "./support/postgres-server.js";
import { burstTurns, openSubscribers } from "./support/sse-load.js";

let dir: string;
let store: EventStore;
let secret: string;

function start(hub: LiveHub) {
  return serve({
    store,
    workspace: dir,
    env: {},
    lease: { ttlMs: 5_000 },
    port: 0,
    dashboard: false,
    live: hub,
    rateLimit: { burst: 10_000, perSecond: 10_000 },
  });
}

describe.each(["sqlite", "postgres"] as const)("on %s", (backend) => {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-live-hub-"));
    const db =
      backend === "sqlite"
        ? join(dir, "spool.db")
        : await createTestDatabase(inject("postgresUrl"));
    store = await openEventStore({ db, cwd: dir, env: {} });
    ({ secret } = await new AccessTokens(store).create({
      actor: "ann",
      role: "reader",
      by: "test",
    }));
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("the live hub", () => {
    it("shares one store subscription among 40 clients that each resume from their own position", async () => {
      const hub = new LiveHub(store);
      const server = await start(hub);
      const early = await burstTurns(store, "fan", 30);
      const half = await openSubscribers({
        url: server.url,
        token: secret,
        continuity: "fan",
        count: 20,
        after: 0,
      });
      const late = await openSubscribers({
        url: server.url,
        token: secret,
        continuity: "fan",
        count: 20,
        after: early[14]!,
      });
      try {
        expect([hub.channels, hub.subscribers("fan")]).toEqual([1, 40]);
        const more = await burstTurns(store, "fan", 120, 40);
        await Promise.all([half.reached(more.at(-1)!), late.reached(more.at(-1)!)]);
        for (const record of half.records) expect(record.seqs).toEqual([...early, ...more]);
        for (const record of late.records)
          expect(record.seqs).toEqual([...early.slice(15), ...more]);
      } finally {
        half.close();
        late.close();
      }
      await expect.poll(() => hub.channels).toBe(0);
      await server.close();
    });

    it("disconnects a client that overflows its buffer; it resumes by Last-Event-ID with each event once", async () => {
      const hub = new LiveHub(store, { buffer: 2 });
      const server = await start(hub);
      const subscribers = await openSubscribers({
        url: server.url,
        token: secret,
        continuity: "burst",
        count: 5,
        after: 0,
      });
      try {
        const seqs = await burstTurns(store, "burst", 300, 100);
        await subscribers.reached(seqs.at(-1)!);
        for (const record of subscribers.records) expect(record.seqs).toEqual(seqs);
      } finally {
        subscribers.close();
        await server.close();
      }
    });

    it("hands a client with a types filter only those types, caught up and then live, each once", async () => {
      const hub = new LiveHub(store);
      const server = await start(hub);
      const mixed = async (count: number) => {
        const policies: number[] = [];
        for (let i = 0; i < count; i++) {
          await store.append({
            continuity: "mixed",
            type: "turn.added",
            actor: "ann",
            origin: "test",
            data: { text: `turn ${i}` },
          });
          const policy = await store.append({
            continuity: "mixed",
            type: "policy.set",
            actor: "ann",
            origin: "test",
            data: { policy: i % 2 === 0 ? "queue" : "reject" },
          });
          policies.push(policy.seq);
        }
        return policies;
      };
      const before = await mixed(5);
      const seen: number[] = [];
      const other: string[] = [];
      let live!: () => void;
      const upToDate = new Promise<void>((resolve) => {
        live = resolve;
      });
      let reached: (() => void) | undefined;
      let target = Number.POSITIVE_INFINITY;
      const source = new EventSource(
        `${server.url}/api/continuities/mixed/events/live?after=0&types=policy.set`,
        {
          fetch: (input, init) =>
            fetch(input, {
              ...init,
              headers: { ...init?.headers, Authorization: `Bearer ${secret}` },
            }),
        },
      );
      source.addEventListener("up-to-date", () => live(), { once: true });
      source.onmessage = (message) => {
        const event = JSON.parse(message.data) as { seq: number; type: string };
        seen.push(event.seq);
        if (event.type !== "policy.set") other.push(event.type);
        if (event.seq >= target) reached?.();
      };
      try {
        await upToDate;
        expect(seen).toEqual(before);
        const after = await mixed(20);
        await new Promise<void>((resolve) => {
          reached = resolve;
          target = after.at(-1)!;
          if (seen.at(-1) === target) resolve();
        });
        expect([seen, other]).toEqual([[...before, ...after], []]);
      } finally {
        source.close();
        await server.close();
      }
    });

    it("ends a live stream with event: error auth.revoked once its token is revoked, and leaves the hub", async () => {
      const hub = new LiveHub(store);
      const server = await start(hub);
      const tokens = new AccessTokens(store);
      const made = await tokens.create({ actor: "rex", role: "reader", by: "test" });
      await store.append({
        continuity: "revoke",
        type: "turn.added",
        actor: "ann",
        origin: "test",
        data: { text: "hello" },
      });
      const res = await fetch(`${server.url}/api/continuities/revoke/events/live?after=0`, {
        headers: { Authorization: `Bearer ${made.secret}` },
      });
      expect(res.status).toBe(200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      let revoked = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += value;
        if (!revoked && text.includes("event: up-to-date")) {
          revoked = true;
          await tokens.revoke(made.token.id, "test");
        }
      }
      expect(text).toContain('event: error\ndata: {"code":"auth.revoked"');
      expect(text.match(/^id: /gm)).toHaveLength(1);
      await expect.poll(() => hub.channels).toBe(0);
      await server.close();
    });

    it("drops the queue of a subscriber that never reads, without holding up another", async () => {
      const hub = new LiveHub(store, { buffer: 3 });
      const stuck = await hub.join("slow");
      const reader = await hub.join("slow");
      const seqs: number[] = [];
      const seen: number[] = [];
      for (let i = 0; i < 10; i++) {
        const event = await store.append({
          continuity: "slow",
          type: "turn.added",
          actor: "ann",
          origin: "test",
          data: { text: `turn ${i}` },
        });
        seqs.push(event.seq);
        while (!seen.includes(event.seq)) {
          const frames = await reader.take();
          expect(frames).toBeDefined();
          seen.push(...frames!.map((frame) => frame.seq));
        }
      }
      expect([seen, reader.overflowed]).toEqual([seqs, false]);
      expect(stuck.overflowed).toBe(true);
      stuck.leave();
      reader.leave();
      expect(hub.channels).toBe(0);
    });
  });
});
