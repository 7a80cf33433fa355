import { describe, expect, it } from "vitest";
import { createScriptedProvider, type ScriptedTurn } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntime } from "../src/runtime/index.js";
import type { EventData, EventType, SpoolEvent } from "../src/spec/index.js";
import {
  filler,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import { dyingAt } from "./support/dying-store.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-handoff-faults-");

const SUMMARY =
  "<response>## Completed Work\nNoted every message.\n\n## Pending Work\nNone.\n\n## Key Decisions & Context\nNone.\n\n## Tool Results\nNone.\n\n## Next\nAnswer.</response>";
const FAIL: ScriptedTurn = { text: "", error: { code: "provider.bad-request", message: "bad" } };
const EMPTY: ScriptedTurn = "<response></response>";

function foreground() {
  return createScriptedProvider({
    model: SMALL_MODEL,
    loop: true,
    script: ["<response>Noted.</response>"],
  });
}

/** Submits `count` turns of `words` words (300: about a tenth of the window each). */
async function talk(runtime: AgentRuntime, from: number, count: number, words = 300) {
  for (let turn = from; turn < from + count; turn++) {
    const result = await runtime.submit(continuity, {
      text: filler(turn, words),
      actor: "ada",
      origin: "test",
    });
    expect(result.status).toBe("completed");
  }
}

const data = <T extends EventType>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type).map((event) => event.data as EventData<T>);

async function expectReplayIdentical(recoveries = 0) {
  const report = await replayContinuity({
    source: temp.store,
    continuity,
    stallMs: 5000,
    makeRuntime: ({ store: target, provider, intercept }) =>
      longRunRuntime(target, provider, { intercept }),
  });
  expect(report.difference).toBeUndefined();
  expect(report).toMatchObject({ identical: true, recoveries });
}

/** Every continuation was started once, and each continued thread names the one it made. */
function expectOneContinuationEach(events: SpoolEvent[]) {
  const started = events
    .filter((event) => event.type === "thread.started")
    .map((event) => (event.data as EventData<"thread.started">).continuation_of)
    .filter((from): from is string => from !== undefined);
  expect(new Set(started).size).toBe(started.length);
  const continued = events.filter((event) => event.type === "thread.continued");
  expect(continued.map((event) => event.stream.id).sort()).toEqual([...started].sort());
}

describe("summarizer faults at each phase of a handoff", () => {
  it("defers the handoff while the thread still fits, retries, and continues once the summary comes", async () => {
    // Pre-compute fails, the handoff's own summary fails, the retry succeeds.
    const summarizer = scriptedSummarizer([
      { text: SUMMARY, error: { code: "provider.bad-request", message: "bad", times: 2 } },
    ]);
    const runtime = longRunRuntime(temp.store, routedProvider(foreground(), summarizer));
    // Small turns (about 2% of the window each): the trigger is met while the thread still fits.
    await talk(runtime, 1, 60, 60);
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    const failed = data(events, "summary.failed");
    expect(failed.map((item) => [item.mode, item.reason])).toEqual([
      ["precompute", "error"],
      ["handoff", "error"],
    ]);
    const deferred = data(events, "handoff.deferred");
    expect(deferred).toHaveLength(1);
    expect(deferred[0]!.reason).toContain("still fits");
    const continued = data(events, "thread.continued");
    expect(continued.length).toBeGreaterThanOrEqual(1);
    expect(continued[0]!.mode).toBe("summary");
    // Nothing was lost while waiting: no compile ever left a message out.
    for (const compiled of data(events, "context.compiled")) expect(compiled.omitted).toBe(0);
    expectOneContinuationEach(events);
    await expectReplayIdentical();
  }, 60_000);

  it("falls back to a trailing-only continuation when no summary ever comes", async () => {
    const summarizer = scriptedSummarizer([FAIL]);
    const runtime = longRunRuntime(temp.store, routedProvider(foreground(), summarizer));
    await talk(runtime, 1, 24);
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    const continued = data(events, "thread.continued");
    expect(continued.length).toBeGreaterThanOrEqual(1);
    expect(continued[0]!.mode).toBe("trailing-only");
    expect(continued[0]!.reason).toContain("trailing messages only");
    const seeded = data(events, "handoff.seeded")[0]!;
    expect(seeded.summaries).toEqual([]);
    expect(seeded.trailing.length).toBeGreaterThan(0);
    expect(seeded.trailing[0]!.role).toBe("user");
    // The run went on: every turn completed, and later turns ran on the continuation.
    for (const compiled of data(events, "context.compiled"))
      expect(compiled.over_budget).toBeUndefined();
    expectOneContinuationEach(events);
    await expectReplayIdentical();
  }, 60_000);

  it("treats an empty summary as a failure and keeps the summary it had", async () => {
    // The pre-computed summary succeeds; bringing it up to date answers empty every time (a
    // transcript longer than the summarizer's window is read in several runs: all but the first
    // answer empty too).
    const summarizer = scriptedSummarizer([SUMMARY, ...Array<ScriptedTurn>(40).fill(EMPTY)]);
    const runtime = longRunRuntime(temp.store, routedProvider(foreground(), summarizer));
    await talk(runtime, 1, 24);
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    const failed = data(events, "summary.failed");
    expect(failed.some((item) => item.reason === "empty" && item.mode === "update")).toBe(true);
    const continued = data(events, "thread.continued");
    expect(continued.length).toBeGreaterThanOrEqual(1);
    // The last resort kept the pre-computed summary rather than dropping it.
    expect(continued[0]!.mode).toBe("summary");
    expect(continued[0]!.summary_id).toMatch(/@summary1$/);
    expectOneContinuationEach(events);
    await expectReplayIdentical();
  }, 60_000);

  it("times a hanging summarizer out and goes on", async () => {
    const hanging = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: [SUMMARY],
      timing: { firstTokenMs: 60_000 },
    });
    const runtime = longRunRuntime(temp.store, routedProvider(foreground(), hanging), {
      summaryTimeoutMs: 50,
    });
    await talk(runtime, 1, 24);
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    const failed = data(events, "summary.failed");
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.every((item) => item.reason === "timeout")).toBe(true);
    expect(failed[0]!.error.message).toContain("did not finish in 50 ms");
    const continued = data(events, "thread.continued");
    expect(continued.length).toBeGreaterThanOrEqual(1);
    expect(continued[0]!.mode).toBe("trailing-only");
    expectOneContinuationEach(events);
  }, 60_000);
});

describe("a crash in the middle of a handoff", () => {
  for (const phase of ["summary.completed", "thread.started", "thread.continued"] as const) {
    it(`resumes into exactly one continuation after dying at ${phase}`, async () => {
      const provider = () => routedProvider(foreground(), scriptedSummarizer());
      // The first process dies at the handoff's first `phase` (a continuation's `thread.started`,
      // not the root thread's: the root starts before any handoff).
      const dying = dyingAt(
        temp.store,
        phase,
        (data) =>
          phase !== "thread.started" ||
          (data as { continuation_of?: string }).continuation_of !== undefined,
      );
      const first = longRunRuntime(dying.store, provider());
      let turn = 1;
      const until = dying.died.then(() => "died" as const);
      while (turn < 40) {
        const outcome = await Promise.race([
          first.submit(continuity, { text: filler(turn, 300), actor: "ada", origin: "test" }),
          until,
        ]);
        turn += 1;
        if (outcome === "died") break;
      }
      expect(turn).toBeLessThan(40);
      await temp.store.flush();
      // The restart: a new runtime over the same log.
      const second = longRunRuntime(temp.store, provider());
      await second.resume(continuity);
      await talk(second, turn, 12);
      await second.close();
      const events = await readAll(temp.store, continuity);
      expect(events.some((event) => event.type === "recovery.started")).toBe(true);
      expectOneContinuationEach(events);
      expect(data(events, "thread.continued").length).toBeGreaterThanOrEqual(1);
      await expectReplayIdentical(1);
    }, 60_000);
  }
});
