import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActionCall,
  type CheckedActionExecutor,
  createStepScheduler,
  createStoreActionLog,
  createVariableStore,
  SerialQueue,
} from "../src/actions/index.js";
import type { EventStore } from "../src/log/index.js";
import type { ActionRequest } from "../src/protocol/action-request.js";
import { SpoolError } from "../src/spec/index.js";
import { action } from "./support/actions-helpers.js";
import { killCount } from "./support/events.js";
import { refusingIntents } from "./support/store-taps.js";
import { tempStore } from "./support/transcripts.js";

const RUNS = killCount(process.env.SPOOL_PURE_EARLY_RUNS, 200);

/** What one action's tool does on each attempt. */
type Behaviour = "ok" | "fail" | "flaky" | "later";

interface PlannedAction {
  pure: boolean;
  mode: ActionRequest["mode"];
  behaviour: Behaviour;
  retry: number;
  /** Indexes of earlier actions it depends on. */
  after: number[];
  /** The store refuses its `action.dispatched`. */
  refused: boolean;
}

const plannedAction = (index: number): fc.Arbitrary<PlannedAction> =>
  fc.record({
    pure: fc.boolean(),
    mode: fc.constantFrom<ActionRequest["mode"]>("sync", "async", "fire_and_forget"),
    behaviour: fc.constantFrom<Behaviour>("ok", "fail", "flaky", "later"),
    retry: fc.integer({ min: 0, max: 1 }),
    after:
      index === 0
        ? fc.constant([])
        : fc.uniqueArray(fc.integer({ min: 0, max: index - 1 }), { maxLength: 2 }),
    refused: fc.boolean().map((refused) => refused && index % 2 === 0),
  });

const plannedStep = fc
  .integer({ min: 1, max: 7 })
  .chain((length) => fc.tuple(...Array.from({ length }, (_, i) => plannedAction(i))));

let temp: Awaited<ReturnType<typeof tempStore>>;
let inner: EventStore;
beforeAll(async () => {
  temp = await tempStore("spool-pure-early-property-");
  inner = temp.store;
});
afterAll(() => temp?.cleanup());

const TERMINAL = new Set([
  "action.succeeded",
  "action.failed",
  "action.skipped",
  "action.cancelled",
  "action.timed-out",
]);

/** Runs one planned step on its own continuity; checks the invariants over what was written. */
async function checkStep(plan: PlannedAction[], continuity: string): Promise<void> {
  const ids = plan.map((_, i) => `a${i}`);
  const refused = new Set(ids.filter((_, i) => plan[i]!.refused));
  const store = refusingIntents(inner, (id) => refused.has(id));
  const sideEffectCalls = new Map<string, number>();
  const attempts = new Map<string, number>();
  const serial = new SerialQueue();
  const run = async (call: ActionCall) => {
    const index = ids.indexOf(call.actionId);
    const planned = plan[index]!;
    if (!planned.pure) {
      sideEffectCalls.set(call.actionId, (sideEffectCalls.get(call.actionId) ?? 0) + 1);
    }
    const attempt = (attempts.get(call.actionId) ?? 0) + 1;
    attempts.set(call.actionId, attempt);
    if (planned.behaviour === "later") await new Promise((resolve) => setImmediate(resolve));
    if (planned.behaviour === "fail" || (planned.behaviour === "flaky" && attempt === 1)) {
      throw new SpoolError("tool.failed", `attempt ${attempt} failed`, { retryable: true });
    }
    return { done: call.actionId, attempt };
  };
  const executor: CheckedActionExecutor = {
    type: "tool",
    pure: (name) => name === "pure",
    serialQueue: (name) => (name === "effect" ? serial : undefined),
    execute: run,
  };
  const log = createStoreActionLog({ store, continuity, step: "s1" });
  const scheduler = createStepScheduler({
    log,
    executors: [executor],
    variables: createVariableStore(),
    random: () => 0,
    backoff: { baseMs: 0, maxMs: 0 },
  });
  for (const [i, planned] of plan.entries()) {
    void scheduler.submit(
      action(ids[i]!, {
        mode: planned.mode,
        name: planned.pure ? "pure" : "effect",
        retry: planned.retry,
        dependsOn: planned.after.map((k) => ids[k]!),
      }),
    );
  }
  scheduler.end();
  const outcome = await scheduler.settled();
  await scheduler.idle();
  await inner.flush();

  const events: Array<{ type: string; id: string }> = [];
  for await (const event of inner.read({ continuity })) {
    events.push({ type: event.type, id: (event.data as { action_id: string }).action_id });
  }
  for (const [i, id] of ids.entries()) {
    const own = events.filter((event) => event.id === id).map((event) => event.type);
    const planned = plan[i]!;
    const dispatched = own[0] === "action.dispatched";
    if (!dispatched) {
      // Never dispatched, or its intent refused: at most a skip (a dependency failed).
      expect(
        own.length <= 1 && own.every((type) => type === "action.skipped"),
        `${id}: ${own}`,
      ).toBe(true);
    } else {
      expect(refused.has(id), id).toBe(false);
      const terminals = own.filter((type) => TERMINAL.has(type));
      expect(terminals, `${id}: ${own}`).toHaveLength(1);
      expect(own.at(-1), `${id}: ${own}`).toBe(terminals[0]);
      expect(
        own.filter((type) => type === "action.dispatched"),
        id,
      ).toHaveLength(1);
    }
    if (!planned.pure) {
      const started = own.filter((type) => type === "action.started").length;
      expect(sideEffectCalls.get(id) ?? 0, `${id} ran as often as it started`).toBe(started);
    }
    const found =
      outcome.actions.find((action) => action.id === id) ??
      (planned.mode === "fire_and_forget" ? scheduler.outcome(id) : undefined);
    expect(found, id).toBeDefined();
    if (found!.status === "skipped" && !dispatched) {
      // Skipped before it was dispatched (a dependency failed): its skip is all the log has.
      expect(own, id).toEqual(["action.skipped"]);
    } else if (refused.has(id)) {
      // Stopped by the refusal, or (a pure call that had already ended) ended as it did, with
      // the refusal a step error: either way the step says its intent was not logged.
      expect(own, id).toEqual([]);
      if (!planned.pure) expect(found!.error?.code, id).toBe("log.write-failed");
      const said = outcome.errors
        .concat(scheduler.errors)
        .some((error) => error.actionId === id && error.code === "log.write-failed");
      expect(said, `${id}: a step error says its intent was refused`).toBe(true);
    } else if (dispatched) {
      const status = own.at(-1)!.slice("action.".length);
      expect(found!.status, `${id}: ${own}`).toBe(status);
    }
  }
}

describe("pure calls ahead of their intents (property)", () => {
  it(`keep the log's action invariants over ${RUNS} random steps`, {
    timeout: 120_000,
  }, async () => {
    let step = 0;
    await fc.assert(
      fc.asyncProperty(plannedStep, async (plan) => {
        step += 1;
        await checkStep(plan, `c${step}`);
      }),
      { numRuns: RUNS },
    );
  });
});
