/**
 * `spool run --continuity` waiting for the answer to a turn it queued (`awaitTurnAnswer`): it
 * watches the owner's lease, takes the continuity over once the lease is free, and should another
 * process take it first, watches that one's lease in turn. A real SQLite store on a lease clock
 * and timers the test steps by hand.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { awaitTurnAnswer, queueTurn } from "../src/cli/commands/continuity-follower.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { manualTimeouts } from "./support/manual-timeouts.js";

const TTL = 1_000;
const THREAD = "th-01J00000000000000000000000";
const usage = { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 };

describe("awaitTurnAnswer", () => {
  let dir: string;
  let store: EventStore;
  let clock = 1_000_000;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "spool-turn-answer-"));
    store = await openEventStore({ db: dir, env: {}, leaseClock: () => clock });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes over when the owner's lease lapses, and watches the next owner when it loses the race", async () => {
    await store.acquireLease("c", "owner A", TTL);
    const queued = await queueTurn(store, "c", { text: "hi", actor: "ada", origin: "cli" });
    const timeouts = manualTimeouts();
    const takeOvers: string[] = [];
    const answer = awaitTurnAnswer(store, "c", queued.id, queued.seq - 1, {
      watch: { now: () => clock, timers: timeouts.timers },
      takeOver: async () => {
        if (takeOvers.length === 0) {
          // Another process is quicker: it holds the lease now.
          takeOvers.push("lost");
          await store.acquireLease("c", "owner B", TTL);
          return false;
        }
        takeOvers.push("took");
        const stream = { kind: "thread" as const, id: THREAD };
        const common = { directive: "d", model: "m" };
        await store.append({
          continuity: "c",
          stream,
          type: "run.started",
          data: { turn: queued.id, resumed: false, ...common, next_step: 0 },
        });
        await store.append({
          continuity: "c",
          stream,
          type: "run.completed",
          data: {
            turn: queued.id,
            status: "completed",
            steps: 1,
            result: "hello",
            usage,
            cost_usd: 0,
          },
        });
        return true;
      },
    });

    // One timer, to the expiry of A's lease; nothing is taken while it is live.
    expect(await timeouts.armed()).toBe(TTL + 1);
    expect(takeOvers).toEqual([]);
    clock += TTL + 1;
    timeouts.fire();
    // A's lease lapsed; B took it first: B's lease is watched to its expiry.
    expect(await timeouts.armed()).toBe(TTL + 1);
    expect(takeOvers).toEqual(["lost"]);
    clock += TTL + 1;
    timeouts.fire();

    expect(await answer).toMatchObject({ status: "completed", result: "hello" });
    expect(takeOvers).toEqual(["lost", "took"]);
    expect(timeouts.count).toBe(0);
  });
});
