import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import type { NewEvent } from "../../src/spec/index.js";
import { collect, created, turn } from "../support/events.js";
import type { HarnessFactory } from "./harness.js";

/** One step of a random history: who appends what, or a read to check. */
type Op =
  | { kind: "append"; by: "own" | "foreign"; continuity: "a" | "b"; events: number }
  | { kind: "read"; continuity: "a" | "b"; back: number; limit?: number; until?: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("append" as const),
    by: fc.constantFrom("own" as const, "own" as const, "foreign" as const),
    continuity: fc.constantFrom("a" as const, "b" as const),
    events: fc.integer({ min: 1, max: 4 }),
  }),
  fc.record(
    {
      kind: fc.constant("read" as const),
      continuity: fc.constantFrom("a" as const, "b" as const),
      back: fc.integer({ min: 0, max: 12 }),
      limit: fc.integer({ min: 1, max: 5 }),
      until: fc.integer({ min: 0, max: 6 }),
    },
    { requiredKeys: ["kind", "continuity", "back"] },
  ),
);

/** An action result whose output's keys are not in canonical order (a read gives them sorted). */
function unsorted(continuity: string, text: string): NewEvent {
  return {
    continuity,
    type: "action.succeeded",
    stream: { kind: "step", id: "th-1:0" },
    data: {
      output: { zeta: text, alpha: [{ y: 1, x: 2 }] },
      attempt: 1,
      action_id: "a1",
      duration_ms: 1,
    },
  };
}

/**
 * Reads of a continuity's recent events (what a thread's catch-up before each step does) are
 * answered from what the store wrote itself when nothing else was committed since: over random
 * histories of appends by this store and by another connection, every read equals the same read
 * by a third connection that never writes (and so always asks the database).
 */
export function recentReadsContract(factory: HarnessFactory): void {
  describe("reads of recent events", () => {
    it("equal the database's answer whoever appended in between", async () => {
      let answeredAtOnce = 0;
      let kind: string | undefined;
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          const harness = await factory();
          const stores: EventStore[] = [];
          try {
            const own = await harness.open();
            const foreign = await harness.open();
            const reference = await harness.open();
            stores.push(own, foreign, reference);
            await own.appendBatch([created("a"), created("b")]);
            let n = 0;
            for (const step of ops) {
              if (step.kind === "append") {
                const store = step.by === "own" ? own : foreign;
                const events = Array.from({ length: step.events }, () =>
                  n++ % 2 ? turn(step.continuity, `t${n}`) : unsorted(step.continuity, `d${n}`),
                );
                if (events.length === 1) await store.append(events[0]!);
                else await store.appendBatch(events);
                await store.flush();
                continue;
              }
              const head = await reference.head();
              const query = {
                continuity: step.continuity,
                after: Math.max(0, head - step.back),
                ...(step.limit !== undefined ? { limit: step.limit } : {}),
                ...(step.until !== undefined ? { until: Math.max(0, head - step.until) } : {}),
              };
              const seen = await collect(own.read(query));
              const truth = await collect(reference.read(query));
              expect(seen.map((event) => [event.seq, event.type, event.hash])).toEqual(
                truth.map((event) => [event.seq, event.type, event.hash]),
              );
              // As stored, key order included: a thread renders tool outputs from this data.
              expect(seen.map((event) => JSON.stringify(event.data))).toEqual(
                truth.map((event) => JSON.stringify(event.data)),
              );
              // The catch-up's read at once, when the store can give one: the same events.
              const recent = own.readRecent?.(step.continuity, query.after);
              if (recent === undefined) continue;
              answeredAtOnce += 1;
              const whole = await collect(
                reference.read({ continuity: step.continuity, after: query.after }),
              );
              expect(recent.map((event) => [event.seq, event.type, event.hash])).toEqual(
                whole.map((event) => [event.seq, event.type, event.hash]),
              );
              expect(recent.map((event) => JSON.stringify(event.data))).toEqual(
                whole.map((event) => JSON.stringify(event.data)),
              );
            }
            kind = own.kind;
          } finally {
            for (const store of stores) await store.close();
            await harness.cleanup();
          }
        }),
        { numRuns: Number(process.env.SPOOL_TAIL_RUNS ?? 25) },
      );
      // SQLite reads its head at once, so its catch-ups skip the database's read path.
      if (kind === "sqlite") expect(answeredAtOnce).toBeGreaterThan(0);
    }, 120_000);
  });
}
