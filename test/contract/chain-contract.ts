import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import { verifyChain } from "../../src/log/index.js";
import { canonicalEvent, chainHash, GENESIS_HASH } from "../../src/spec/index.js";
import { collect, created, turn } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

/** The per-continuity hash chain and its verification. */
export function chainContract(factory: HarnessFactory): void {
  describe("hash chain", () => {
    let harness: StoreHarness;
    let store: EventStore;
    beforeEach(async () => {
      harness = await factory();
      store = await harness.open();
      await store.appendBatch([created("a"), created("b")]);
      for (let i = 0; i < 10; i++) await store.append(turn(i % 3 ? "a" : "b", `turn ${i}`));
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    it("links each event to the previous one of its continuity", async () => {
      const events = await collect(store.read());
      const previous = new Map<string, string>();
      for (const event of events) {
        expect(event.hash).toBe(
          chainHash(previous.get(event.continuity) ?? GENESIS_HASH, canonicalEvent(event)),
        );
        previous.set(event.continuity, event.hash);
      }
      expect(await verifyChain(store)).toEqual({ ok: true, continuities: 2, events: 12 });
      expect(await verifyChain(store, { continuity: "b" })).toEqual({
        ok: true,
        continuities: 1,
        events: 5,
      });
    });

    it("names the first event whose content was altered", async () => {
      await harness.tamper(5, JSON.stringify({ text: "forged" }));
      const report = await verifyChain(store);
      expect(report.ok).toBe(false);
      expect(report.mismatch).toMatchObject({ seq: 5, continuity: "a" });
      expect(report.mismatch?.reason).toContain("altered");
      expect((await verifyChain(store, { continuity: "b" })).ok).toBe(true);
    });

    it("notices events removed from the end of a continuity", async () => {
      await harness.dropLast();
      const report = await verifyChain(store);
      expect(report.ok).toBe(false);
      expect(report.mismatch).toMatchObject({ continuity: "b" });
      expect(report.mismatch?.reason).toContain("removed");
    });
  });
}
