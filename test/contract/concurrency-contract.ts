import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyChain } from "../../src/log/index.js";
import { runToExit, spawnScript } from "../support/child-process.js";
import { collect, turn } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

/** Several connections and several processes appending to one store at once. */
export function concurrencyContract(factory: HarnessFactory): void {
  describe("concurrent writers", () => {
    let harness: StoreHarness;
    beforeEach(async () => {
      harness = await factory();
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    it("keeps one gapless order and intact chains across connections", async () => {
      const stores = await Promise.all([harness.open(), harness.open(), harness.open()]);
      await Promise.all(
        stores.map(async (store, writer) => {
          for (let i = 0; i < 60; i++) {
            if (i % 10 === 0)
              await store.appendBatch([
                turn("shared", `${writer}:${i}`),
                turn(`own-${writer}`, `${writer}:${i}`),
              ]);
            else await store.append(turn(i % 2 ? "shared" : `own-${writer}`, `${writer}:${i}`));
          }
        }),
      );
      const [reader] = stores;
      const events = await collect(reader!.read());
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: 198 }, (_, i) => i + 1),
      );
      for (let writer = 0; writer < 3; writer++) {
        const mine = events.filter(
          (event) =>
            event.actor === "ada" && (event.data as { text: string }).text.startsWith(`${writer}:`),
        );
        const order = mine.map((event) =>
          Number((event.data as { text: string }).text.split(":")[1]),
        );
        expect(order).toEqual([...order].sort((x, y) => x - y));
      }
      expect(await verifyChain(reader!)).toMatchObject({ ok: true, continuities: 4, events: 198 });
      await Promise.all(stores.map((store) => store.close()));
    });

    it("keeps one gapless order and intact chains across processes", async () => {
      const workers = [0, 1, 2].map((worker) => {
        let done = "";
        const child = spawnScript("./append-worker.ts", [
          harness.location,
          worker === 2 ? "solo" : "shared",
          String(worker),
          "150",
        ]);
        return runToExit(child, (line) => {
          done = line;
        }).then((exit) => ({ ...exit, done }));
      });
      const exits = await Promise.all(workers);
      for (const exit of exits) {
        expect(exit.stderr).toBe("");
        expect(exit.code).toBe(0);
        expect(exit.done).toMatch(/^done \d+$/);
      }
      const store = await harness.open();
      const events = await collect(store.read());
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: 450 }, (_, i) => i + 1),
      );
      for (const worker of [0, 1, 2]) {
        const texts = events
          .filter((event) => event.actor === `w${worker}`)
          .map((event) => (event.data as { text: string }).text);
        expect(texts).toEqual(Array.from({ length: 150 }, (_, i) => `${worker}:${i}`));
      }
      expect(await verifyChain(store)).toMatchObject({ ok: true, continuities: 2, events: 450 });
      await store.close();
    });
  });
}
