import { describe, expect, it } from "vitest";
import { verifyChain } from "../src/log/verify-chain.js";
import { createScriptedProvider } from "../src/providers/index.js";
import type { ProviderRequest } from "../src/providers/provider.js";
import { replayContinuity } from "../src/replay/index.js";
import type { EventData } from "../src/spec/index.js";
import {
  filler,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  SUMMARIZER_MARK,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import { checkHandoffCoverage } from "./support/handoff-coverage.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-handoff-");

function foregroundProvider() {
  return createScriptedProvider({
    model: SMALL_MODEL,
    loop: true,
    script: ["<response>Noted.</response>"],
  });
}

function lastUserText(request: ProviderRequest): string {
  const last = request.messages.at(-1);
  return last?.role === "user" && typeof last.content === "string" ? last.content : "";
}

describe("handoff to a continuation thread", () => {
  it("hands a filling thread off at the trigger pressure and keeps one conversation", async () => {
    const foreground = foregroundProvider();
    const summarizer = scriptedSummarizer();
    const runtime = longRunRuntime(temp.store, routedProvider(foreground, summarizer));
    const pinnedFact = "The user's cat is called Miso.";
    await temp.store.append({
      continuity,
      type: "context.pinned",
      data: { id: "pin-cat", kind: "fact", text: pinnedFact, by: "user" },
    });
    const turns = 80;
    for (let turn = 1; turn <= turns; turn++) {
      const result = await runtime.submit(continuity, {
        text: filler(turn),
        actor: "ada",
        origin: "test",
      });
      expect(result.status).toBe("completed");
    }
    await runtime.close();
    const events = await readAll(temp.store, continuity);

    const continued = events.filter((event) => event.type === "thread.continued");
    expect(continued.length).toBeGreaterThanOrEqual(2);
    for (const event of continued) {
      const data = event.data as EventData<"thread.continued">;
      expect(data.mode).toBe("summary");
      // At the trigger, or before a compile that would have had to leave messages out.
      if (!data.reason.includes("full")) expect(data.pressure_ratio).toBeGreaterThanOrEqual(0.9);
      expect(data.tokens_after!).toBeLessThan(data.tokens_before!);
    }
    // Summaries were pre-computed in the background from 0.8, before each trigger.
    const fired = events.filter(
      (event) =>
        event.type === "hook.fired" &&
        (event.data as EventData<"hook.fired">).hook === "default_compaction",
    );
    expect(fired.length).toBeGreaterThanOrEqual(continued.length);
    const precomputed = events.filter(
      (event) =>
        event.type === "summary.completed" &&
        (event.data as EventData<"summary.completed">).mode === "precompute",
    );
    expect(precomputed.length).toBeGreaterThanOrEqual(1);

    // Every foreground call fitted its budget, carried the pinned fact and the newest turn.
    const compiled = events.filter((event) => event.type === "context.compiled");
    for (const event of compiled) {
      const data = event.data as EventData<"context.compiled">;
      expect(data.tokens).toBeLessThanOrEqual(data.budget);
      expect(data.over_budget).toBeUndefined();
      // No message is ever dropped unsummarized: a thread hands off before that.
      expect(data.omitted).toBe(0);
    }
    const calls = foreground.requests;
    expect(calls.length).toBe(turns);
    calls.forEach((request, index) => {
      expect(request.system).toContain(pinnedFact);
      expect(lastUserText(request)).toContain(filler(index + 1));
    });
    // Reported input stays under the window at every call.
    for (const event of events.filter((event) => event.type === "message.completed")) {
      const usage = (event.data as EventData<"message.completed">).usage;
      expect(usage.input_tokens).toBeLessThan(8192);
    }
    // The summarizer ran on its own directive, never on the foreground's prompt.
    for (const request of summarizer.requests) expect(request.system).toContain(SUMMARIZER_MARK);

    // Every message of every old thread is carried verbatim or in a summary that read it.
    const coverage = await checkHandoffCoverage(temp.store, continuity);
    expect(coverage.handoffs).toBe(continued.length);
    expect(coverage.uncovered).toEqual([]);

    expect((await verifyChain(temp.store, { continuity })).ok).toBe(true);
    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store: target, provider, intercept }) =>
        longRunRuntime(target, provider, { intercept }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  }, 120_000);
});
