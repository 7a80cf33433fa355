import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore, SubscriptionMessage } from "../../src/log/index.js";
import { turn } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

/** Pulls messages from a subscription until `stop` says so. */
async function take(
  iterator: AsyncIterator<SubscriptionMessage>,
  stop: (messages: SubscriptionMessage[]) => boolean,
): Promise<SubscriptionMessage[]> {
  const messages: SubscriptionMessage[] = [];
  while (!stop(messages)) {
    const next = await iterator.next();
    if (next.done) break;
    messages.push(next.value);
  }
  return messages;
}

const seqs = (messages: SubscriptionMessage[]) =>
  messages.flatMap((m) => (m.type === "event" ? [m.event.seq] : []));

/** subscribe: catch-up, the up-to-date marker, live follow, races, filters, ending. */
export function subscribeContract(factory: HarnessFactory): void {
  describe("subscribe", () => {
    let harness: StoreHarness;
    let store: EventStore;
    beforeEach(async () => {
      harness = await factory();
      store = await harness.open({ pageSize: 5 });
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    it("catches up, marks up-to-date once, then follows live", async () => {
      for (let i = 0; i < 12; i++) await store.append(turn("main", `old ${i}`));
      const iterator = store.subscribe({ after: 3 })[Symbol.asyncIterator]();
      const caughtUp = await take(iterator, (m) => m.at(-1)?.type === "up-to-date");
      expect(seqs(caughtUp)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12]);
      expect(caughtUp.at(-1)).toEqual({ type: "up-to-date", seq: 12 });
      const next = iterator.next();
      await store.append(turn("main", "live 1"));
      await store.append(turn("main", "live 2"));
      const live = [
        (await next).value as SubscriptionMessage,
        ...(await take(iterator, (m) => m.length === 1)),
      ];
      expect(seqs(live)).toEqual([13, 14]);
      expect(live.every((m) => m.type === "event")).toBe(true);
      await iterator.return?.();
    });

    it("sends up-to-date at once for an empty log", async () => {
      const iterator = store.subscribe()[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toEqual({ type: "up-to-date", seq: 0 });
      await iterator.return?.();
    });

    it("delivers every event exactly once when appends race the switch to live", async () => {
      const total = 400;
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 100; i++) writes.push(store.append(turn("main", `before ${i}`)));
      const iterator = store.subscribe()[Symbol.asyncIterator]();
      const first = iterator.next();
      for (let i = 100; i < total; i++) {
        writes.push(store.append(turn(i % 2 ? "main" : "other", `racing ${i}`)));
        if (i % 50 === 0) await Promise.resolve();
      }
      const messages = [(await first).value as SubscriptionMessage];
      while (seqs(messages).length < total)
        messages.push((await iterator.next()).value as SubscriptionMessage);
      await Promise.all(writes);
      const got = seqs(messages);
      expect(got).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect(messages.filter((m) => m.type === "up-to-date")).toHaveLength(1);
      await iterator.return?.();
    });

    it("follows one continuity only, and resumes after a given seq", async () => {
      await store.appendBatch([turn("a", "1"), turn("b", "2"), turn("a", "3")]);
      const iterator = store.subscribe({ continuity: "a", after: 1 })[Symbol.asyncIterator]();
      const caughtUp = await take(iterator, (m) => m.at(-1)?.type === "up-to-date");
      expect(seqs(caughtUp)).toEqual([3]);
      expect(caughtUp.at(-1)).toEqual({ type: "up-to-date", seq: 3 });
      const next = iterator.next();
      await store.appendBatch([turn("b", "4"), turn("b", "5"), turn("a", "6")]);
      expect((await next).value).toMatchObject({
        type: "event",
        event: { seq: 6, continuity: "a" },
      });
      await iterator.return?.();
    });

    it("sees appends made through another connection", async () => {
      const other = await harness.open();
      const iterator = store.subscribe()[Symbol.asyncIterator]();
      await take(iterator, (m) => m.at(-1)?.type === "up-to-date");
      const next = iterator.next();
      await other.append(turn("main", "from elsewhere"));
      expect((await next).value).toMatchObject({
        type: "event",
        event: { seq: 1, data: { text: "from elsewhere" } },
      });
      await iterator.return?.();
      await other.close();
    });

    it("ends on abort, on break and on close", async () => {
      await store.append(turn("main", "x"));
      const controller = new AbortController();
      const aborted = store.subscribe({ signal: controller.signal })[Symbol.asyncIterator]();
      await take(aborted, (m) => m.at(-1)?.type === "up-to-date");
      const pending = aborted.next();
      controller.abort();
      expect((await pending).done).toBe(true);

      let seen = 0;
      for await (const message of store.subscribe()) {
        if (message.type === "event") seen += 1;
        break;
      }
      expect(seen).toBe(1);

      const open = store.subscribe()[Symbol.asyncIterator]();
      await take(open, (m) => m.at(-1)?.type === "up-to-date");
      const waiting = open.next();
      await store.close();
      expect((await waiting).done).toBe(true);
    });
  });
}
