import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CheckedActionExecutor, SerialQueue } from "../src/actions/index.js";
import { gateExecutor } from "../src/runtime/index.js";
import {
  action,
  drain,
  lifecycle,
  type ManualClock,
  manualClock,
  setup,
} from "./support/actions-helpers.js";

/** A side-effecting tool that runs `run_ms` on the test's clock, through one serial queue. */
function effects(clock: ManualClock, serial: SerialQueue) {
  const spans: Array<{ id: string; start: number; end: number }> = [];
  const inner: CheckedActionExecutor = {
    type: "tool",
    execute: (call) =>
      new Promise((resolve) => {
        const start = clock.now();
        clock.setTimer(call.parameters.run_ms as number, () => {
          spans.push({ id: call.actionId, start, end: clock.now() });
          resolve("done");
        });
      }),
  };
  const executor = gateExecutor(inner, {
    permits: () => true,
    directive: "tester",
    sideEffects: () => true,
    serial,
  });
  return { executor, spans };
}

describe("side effects queued behind each other (scheduler, serial queue)", () => {
  it("a queued action's timeout starts when it runs, not while it waits its turn", async () => {
    const clock = manualClock();
    const { executor, spans } = effects(clock, new SerialQueue());
    const { scheduler, log } = setup([executor], { clock });
    await scheduler.submit(action("slow", { parameters: { run_ms: 1000 } }));
    await scheduler.submit(action("quick", { parameters: { run_ms: 10 }, timeoutMs: 50 }));
    scheduler.end();
    await clock.advanceAll();
    await scheduler.settled();
    expect(lifecycle(log).filter((line) => !line.startsWith("dispatched"))).toEqual([
      "started slow",
      "succeeded slow",
      "started quick",
      "succeeded quick",
    ]);
    expect(spans).toEqual([
      { id: "slow", start: 0, end: 1000 },
      { id: "quick", start: 1000, end: 1010 },
    ]);
    const quick = log.ofType("action.succeeded").find((e) => e.data.action_id === "quick")!;
    expect(quick.data.duration_ms).toBe(10);
  });

  it("property: any queue of side effects, each times out exactly when its own run passes its own timeout, and none overlap", async () => {
    const job = fc.record({
      runMs: fc.integer({ min: 1, max: 200 }),
      // Never equal to the run time: a tie between two timers would test the clock, not us.
      slackMs: fc.integer({ min: -150, max: 150 }).filter((slack) => slack !== 0),
      timed: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(job, { minLength: 1, maxLength: 6 }), async (jobs) => {
        const clock = manualClock();
        const { executor, spans } = effects(clock, new SerialQueue());
        const { scheduler, log } = setup([executor], { clock });
        const expected: string[] = [];
        for (const [i, { runMs, slackMs, timed }] of jobs.entries()) {
          const timeoutMs = Math.max(1, runMs + slackMs);
          const times = timed && runMs >= timeoutMs;
          expected.push(`${times ? "timed-out" : "succeeded"} j${i}`);
          await scheduler.submit(
            action(`j${i}`, {
              parameters: { run_ms: runMs },
              ...(timed ? { timeoutMs } : {}),
            }),
          );
        }
        scheduler.end();
        await clock.advanceAll();
        await scheduler.settled();
        const ends = lifecycle(log).filter((line) => /^(succeeded|timed-out) /.test(line));
        expect([...ends].sort()).toEqual([...expected].sort());
        // One at a time: each call starts once the one before it has ended, in dispatch order.
        expect(spans.map((span) => span.id)).toEqual(jobs.map((_, i) => `j${i}`));
        for (let i = 1; i < spans.length; i++) {
          expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("a cancel while an action waits its turn ends it without calling the executor", async () => {
    const clock = manualClock();
    const { executor, spans } = effects(clock, new SerialQueue());
    const { scheduler, log } = setup([executor], { clock });
    await scheduler.submit(action("first", { parameters: { run_ms: 100 } }));
    await scheduler.submit(action("second", { parameters: { run_ms: 100 } }));
    await drain();
    await scheduler.cancel("stop");
    await clock.advanceAll();
    expect(spans.map((span) => span.id)).toEqual(["first"]);
    expect(lifecycle(log).filter((line) => !line.startsWith("dispatched"))).toEqual([
      "started first",
      "cancelled first",
      "cancelled second",
    ]);
  });
});
