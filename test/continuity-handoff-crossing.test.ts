import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import type { ProviderMessage } from "../src/providers/provider.js";
import { replayContinuity } from "../src/replay/index.js";
import type { EventData } from "../src/spec/index.js";
import {
  longRunAgent,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import { checkHandoffCoverage } from "./support/handoff-coverage.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-handoff-crossing-");

const lookup = defineTool({
  name: "lookup",
  description: "Looks a word up.",
  parameters: z.object({ word: z.string() }),
  idempotent: true,
  execute: ({ word }) => `RESULT-OF-${word}`,
});

function text(message: ProviderMessage): string {
  if (message.role === "tool") return message.results.map((result) => result.output).join(" ");
  return typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part ? part.text : "")).join(" ");
}

describe("the step that crosses the trigger", () => {
  it("reaches the summary or the continuation: its answer and its tool result are kept", async () => {
    // The second step reports 94% of the 8k window (past 0.8 and 0.9 at once) and calls a tool.
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        "<response>One.</response>",
        {
          text: '<response final="false">ANSWER-CROSSING</response>',
          toolCalls: [{ id: "toolu_cross", name: "lookup", input: { word: "CROSSING" } }],
          stopReason: "tool-use",
          usage: { inputTokens: 7700 },
        },
        "<response>Two.</response>",
        "<response>Three.</response>",
      ],
    });
    const summarizer = scriptedSummarizer();
    const runtime = longRunRuntime(temp.store, routedProvider(foreground, summarizer), {
      agent: longRunAgent({ tools: [lookup] }),
    });
    for (const turn of ["turn one", "turn two", "turn three"]) {
      const result = await runtime.submit(continuity, { text: turn, actor: "ada", origin: "t" });
      expect(result.status).toBe("completed");
    }
    await runtime.close();
    const events = await readAll(temp.store, continuity);
    expect(events.filter((event) => event.type === "thread.continued")).toHaveLength(1);

    // What the continuation and the summarizer were given holds the crossing step.
    const handoffSummary = summarizer.requests.at(-1)!;
    const given = [
      handoffSummary.system ?? "",
      ...foreground.requests.slice(2).flatMap((request) => request.messages.map(text)),
    ].join("\n");
    expect(given).toContain("ANSWER-CROSSING");
    expect(given).toContain("RESULT-OF-CROSSING");

    // And so does the log, for every message of the old thread.
    const coverage = await checkHandoffCoverage(temp.store, continuity);
    expect(coverage.handoffs).toBe(1);
    expect(coverage.uncovered).toEqual([]);

    // One summarizer call for the handoff, though the step crossed 0.8 and 0.9 at once.
    expect(summarizer.requests).toHaveLength(1);
    expect(events.filter((event) => event.type === "summary.started")).toHaveLength(1);
    const continued = events.find((event) => event.type === "thread.continued")!;
    const completed = events.find((event) => event.type === "summary.completed")!;
    expect((continued.data as EventData<"thread.continued">).summary_id).toBe(
      (completed.data as EventData<"summary.completed">).id,
    );

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store: target, provider, intercept }) =>
        longRunRuntime(target, provider, { intercept, agent: longRunAgent({ tools: [lookup] }) }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  }, 60_000);
});
