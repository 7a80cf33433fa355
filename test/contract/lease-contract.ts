import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import { StoreError } from "../../src/spec/index.js";
import { collect, turn } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

const TTL = 10_000;

/** The continuity lease: one owner at a time, fencing tokens, fenced appends. */
export function leaseContract(factory: HarnessFactory): void {
  describe("continuity leases", () => {
    let harness: StoreHarness;
    /** The lease clock every connection of a test shares: tests move it instead of waiting. */
    let now: number;
    const open = () => harness.open({ leaseClock: () => now });
    beforeEach(async () => {
      harness = await factory();
      now = 1_000_000;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    it("grants a free lease and refuses a live one to everyone else", async () => {
      const [a, b] = await Promise.all([open(), open()]);
      const first = await a.acquireLease("c1", "pid 1", TTL);
      expect(first).toEqual({
        status: "granted",
        continuity: "c1",
        holder: "pid 1",
        token: 1,
        expiresAt: now + TTL,
      });
      expect(await b.acquireLease("c1", "pid 2", TTL)).toEqual({
        status: "held",
        continuity: "c1",
        holder: "pid 1",
        token: 1,
        expiresAt: now + TTL,
      });
      // The same holder name gets no second grant either: two runners would share one name.
      expect((await b.acquireLease("c1", "pid 1", TTL)).status).toBe("held");
      // Another continuity is free.
      expect(await b.acquireLease("c2", "pid 2", TTL)).toMatchObject({
        status: "granted",
        token: 1,
      });
      expect(await b.lease("c1")).toEqual({
        continuity: "c1",
        holder: "pid 1",
        token: 1,
        expiresAt: now + TTL,
        live: true,
      });
      expect(await b.lease("never")).toBeUndefined();
      await Promise.all([a.close(), b.close()]);
    });

    it("grants a lapsed lease with a greater token, and the old holder's renewal is lost", async () => {
      const [a, b] = await Promise.all([open(), open()]);
      await a.acquireLease("c1", "pid 1", TTL);
      now += TTL - 1;
      expect(await a.renewLease("c1", 1, TTL)).toMatchObject({
        status: "granted",
        token: 1,
        expiresAt: now + TTL,
      });
      now += TTL;
      expect((await b.lease("c1"))?.live).toBe(false);
      expect(await b.acquireLease("c1", "pid 2", TTL)).toMatchObject({
        status: "granted",
        token: 2,
      });
      expect(await a.renewLease("c1", 1, TTL)).toEqual({
        status: "lost",
        continuity: "c1",
        holder: "pid 2",
        token: 2,
        expiresAt: now + TTL,
      });
      await Promise.all([a.close(), b.close()]);
    });

    it("renews a lapsed lease nobody took since", async () => {
      const a = await open();
      await a.acquireLease("c1", "pid 1", TTL);
      now += 5 * TTL;
      expect(await a.renewLease("c1", 1, TTL)).toMatchObject({ status: "granted", token: 1 });
      await a.close();
    });

    it("frees a released lease at once and never reuses its token", async () => {
      const [a, b] = await Promise.all([open(), open()]);
      await a.acquireLease("c1", "pid 1", TTL);
      await a.releaseLease("c1", 1);
      expect(await b.lease("c1")).toMatchObject({ holder: undefined, token: 1, live: false });
      expect(await b.acquireLease("c1", "pid 2", TTL)).toMatchObject({
        status: "granted",
        token: 2,
      });
      // A stale release changes nothing.
      await a.releaseLease("c1", 1);
      expect(await b.lease("c1")).toMatchObject({ holder: "pid 2", token: 2, live: true });
      expect((await a.renewLease("c1", 1, TTL)).status).toBe("lost");
      await Promise.all([a.close(), b.close()]);
    });

    it("refuses the appends of a holder whose lease was taken over, writing nothing of them", async () => {
      const [a, b, c] = await Promise.all([open(), open(), open()]);
      await a.acquireLease("c1", "pid 1", TTL);
      await a.append(turn("c1", "a while it holds the lease"));
      await a.append(turn("other", "a elsewhere"));
      now += TTL + 1;
      await b.acquireLease("c1", "pid 2", TTL);
      const head = await c.head();
      const refused = await a.append(turn("c1", "a after the takeover")).catch((error) => error);
      expect(refused).toBeInstanceOf(StoreError);
      expect(refused.code).toBe("store.lease-lost");
      expect(refused.message).toContain("pid 2");
      const batch = await a
        .appendBatch([turn("c1", "batched"), turn("other", "batched elsewhere")])
        .catch((error) => error);
      expect(batch.code).toBe("store.lease-lost");
      // A large batch too (on SQLite it goes to the writer thread).
      const large = await a
        .appendBatch(Array.from({ length: 300 }, (_, i) => turn("c1", `large ${i}`)))
        .catch((error) => error);
      expect(large.code).toBe("store.lease-lost");
      expect(await c.head()).toBe(head);
      // The new holder appends; so does a process holding no lease (a queued turn); and the old
      // holder still may append to continuities it never leased.
      await b.append(turn("c1", "b as the owner"));
      await c.append(turn("c1", "c queues a turn"));
      await a.append(turn("other", "a elsewhere again"));
      const texts = (await collect(c.read({ continuity: "c1" }))).map(
        (event) => (event.data as { text: string }).text,
      );
      expect(texts).toEqual(["a while it holds the lease", "b as the owner", "c queues a turn"]);
      await Promise.all([a.close(), b.close(), c.close()]);
    });

    it("a batch appended after a refused append fails with it and writes nothing, even elsewhere", async () => {
      const [a, b] = await Promise.all([open(), open()]);
      await a.acquireLease("c1", "pid 1", TTL);
      now += TTL + 1;
      await b.acquireLease("c1", "pid 2", TTL);
      // Neither awaited: the batch must follow the refused append, whichever commit that is.
      const refused = a.append(turn("c1", "refused"));
      const follows = a.appendBatch([turn("free", "must follow")], { after: [refused] });
      const free = a.append(turn("free", "free of it"));
      const [first, second, third] = await Promise.allSettled([refused, follows, free]);
      expect(first.status).toBe("rejected");
      expect(second.status).toBe("rejected");
      expect((second as PromiseRejectedResult).reason.code).toBe("store.lease-lost");
      expect(third.status).toBe("fulfilled");
      const texts = (await collect(b.read({ continuity: "free" }))).map(
        (event) => (event.data as { text: string }).text,
      );
      expect(texts).toEqual(["free of it"]);
      // An append refused before it was queued (an invalid event) fails what must follow it.
      const invalid = a.append({ ...turn("free", "x"), data: { text: 42 } } as never);
      const afterInvalid = await a
        .appendBatch([turn("free", "must follow the invalid")], { after: [invalid] })
        .catch((error) => error);
      await invalid.catch(() => undefined);
      expect(afterInvalid).toBeInstanceOf(Error);
      // What follows a written append is written: in its commit or after it.
      const written = a.append(turn("free", "first"));
      const after = await a.appendBatch([turn("free", "second")], { after: [written] });
      expect(after[0]!.seq).toBe((await written).seq + 1);
      await Promise.all([a.close(), b.close()]);
    });

    it("a refused append fails no other continuity's append made beside it", async () => {
      const [a, b] = await Promise.all([open(), open()]);
      await a.acquireLease("c1", "pid 1", TTL);
      now += TTL + 1;
      await b.acquireLease("c1", "pid 2", TTL);
      const results = await Promise.allSettled([
        a.append(turn("free", "one")),
        a.append(turn("c1", "refused")),
        a.append(turn("free", "two")),
        a.appendBatch([turn("free", "three"), turn("free", "four")]),
      ]);
      expect(results.map((result) => result.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect(await collect(b.read({ continuity: "free" }))).toHaveLength(4);
      await Promise.all([a.close(), b.close()]);
    });

    it("grants a contested lease to exactly one of many connections at once", async () => {
      const stores = await Promise.all(Array.from({ length: 6 }, () => open()));
      for (let round = 1; round <= 3; round++) {
        const answers = await Promise.all(
          stores.map((store, i) => store.acquireLease("race", `pid ${i}`, TTL)),
        );
        const granted = answers.filter((answer) => answer.status === "granted");
        expect(granted).toHaveLength(1);
        expect(granted[0]!.token).toBe(round);
        const winner = granted[0]!.holder;
        for (const answer of answers) expect(answer.holder).toBe(winner);
        now += TTL;
      }
      await Promise.all(stores.map((store) => store.close()));
    });

    it("rejects bad lease requests with a typed error", async () => {
      const a = await open();
      for (const call of [
        () => a.acquireLease("", "pid 1", TTL),
        () => a.acquireLease("c1", "", TTL),
        () => a.acquireLease("c1", "pid 1", 0),
        () => a.acquireLease("c1", "pid 1", Number.NaN),
        () => a.renewLease("c1", 1, -5),
      ]) {
        const error = await call().catch((caught) => caught);
        expect(error).toBeInstanceOf(StoreError);
        expect(error.code).toBe("store.bad-lease");
      }
      await a.close();
    });

    it("matches the lease model over random requests from several connections", async () => {
      const stores = await Promise.all([open(), open(), open()]);
      let run = 0;
      const op = fc.oneof(
        fc.record({ kind: fc.constant("acquire" as const), conn: fc.nat(2) }),
        fc.record({ kind: fc.constant("renew" as const), conn: fc.nat(2) }),
        fc.record({ kind: fc.constant("release" as const), conn: fc.nat(2) }),
        fc.record({ kind: fc.constant("append" as const), conn: fc.nat(2) }),
        fc.record({
          kind: fc.constant("advance" as const),
          ms: fc.integer({ min: 1, max: 2 * TTL }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 20 }), async (ops) => {
          run += 1;
          const continuity = `prop-${run}`;
          // The model: the stored row, and the token each connection was last granted.
          let row: { token: number; holder: string | null; expiresAt: number } | undefined;
          const mine: (number | undefined)[] = [undefined, undefined, undefined];
          const fenced: (number | undefined)[] = [undefined, undefined, undefined];
          let lastToken = 0;
          for (const step of ops) {
            if (step.kind === "advance") {
              now += step.ms;
              continue;
            }
            const store = stores[step.conn] as EventStore;
            const holder = `conn ${step.conn}`;
            if (step.kind === "acquire") {
              const answer = await store.acquireLease(continuity, holder, TTL);
              const live = row && row.holder !== null && row.expiresAt > now;
              if (live) {
                expect(answer).toMatchObject({
                  status: "held",
                  holder: row!.holder,
                  token: row!.token,
                });
              } else {
                const token = (row?.token ?? 0) + 1;
                expect(answer).toMatchObject({ status: "granted", token, holder });
                expect(token).toBeGreaterThan(lastToken);
                lastToken = token;
                row = { token, holder, expiresAt: now + TTL };
                mine[step.conn] = token;
                fenced[step.conn] = token;
              }
            } else if (step.kind === "renew") {
              const token = mine[step.conn];
              if (token === undefined) continue;
              const answer = await store.renewLease(continuity, token, TTL);
              if (row && row.token === token && row.holder !== null) {
                expect(answer).toMatchObject({ status: "granted", token });
                row.expiresAt = now + TTL;
              } else {
                expect(answer).toMatchObject({ status: "lost", token: row?.token ?? 0 });
              }
            } else if (step.kind === "release") {
              const token = mine[step.conn];
              if (token === undefined) continue;
              await store.releaseLease(continuity, token);
              if (row && row.token === token && row.holder !== null) {
                row = { ...row, holder: null, expiresAt: 0 };
              }
              if (fenced[step.conn] === token) fenced[step.conn] = undefined;
            } else {
              const token = fenced[step.conn];
              const allowed = token === undefined || (row?.token === token && row.holder !== null);
              const outcome = await store.append(turn(continuity, `by ${step.conn}`)).then(
                () => "ok",
                (error: StoreError) => error.code,
              );
              expect(outcome).toBe(allowed ? "ok" : "store.lease-lost");
            }
          }
        }),
        { numRuns: 25 },
      );
      await Promise.all(stores.map((store) => store.close()));
    });
  });
}
