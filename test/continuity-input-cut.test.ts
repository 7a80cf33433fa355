import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import type { ProviderRequest } from "../src/providers/provider.js";
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
const temp = useTempStore("spool-input-cut-");
const WINDOW = 8192;

/** About a megabyte of text that differs all along (so a kept excerpt is checkable). */
function megabyte(tag: string): string {
  const parts: string[] = [];
  let length = 0;
  for (let index = 0; length < 999_000; index++) {
    const part = `${tag}-${index} `;
    parts.push(part);
    length += part.length;
  }
  return parts.join("");
}

const BIG_TURN = megabyte("turn");
const BIG_OUTPUT = megabyte("output");
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

const dump = defineTool({
  name: "dump",
  description: "Dumps a large text.",
  parameters: z.object({}),
  idempotent: true,
  execute: () => BIG_OUTPUT,
});

/** Characters of a request, as the scripted provider counts input (4 a token). */
function requestTokens(request: ProviderRequest): number {
  return Math.ceil(JSON.stringify([request.system, request.messages, request.tools]).length / 4);
}

describe("an input too long for the window", () => {
  it("is cut to an artifact the model can recall, and no request exceeds the window", async () => {
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        // The 1 MB turn: the model dumps a 1 MB output, then reads back parts of both.
        { toolCalls: [{ id: "toolu_dump", name: "dump", input: {} }], stopReason: "tool-use" },
        `<action type="internal" mode="sync" id="r1">{"name":"recall","parameters":{"artifact":"${sha256(BIG_OUTPUT)}","offset":500000,"max_chars":300}}</action><action type="internal" mode="sync" id="r2">{"name":"recall","parameters":{"artifact":"${sha256(BIG_TURN)}","offset":900000,"max_chars":300}}</action>`,
        "<response>Read both.</response>",
        "<response>Fine.</response>",
        "<response>Still here.</response>",
      ],
    });
    const summarizer = scriptedSummarizer();
    const requests: ProviderRequest[] = [];
    const runtime = longRunRuntime(
      temp.store,
      routedProvider(foreground, summarizer, (request) => requests.push(request)),
      { agent: longRunAgent({ tools: [dump] }) },
    );
    for (const text of [BIG_TURN, "and now a short one", "one more"]) {
      const result = await runtime.submit(continuity, { text, actor: "ada", origin: "t" });
      expect(result.status).toBe("completed");
    }
    await runtime.close();
    const events = await readAll(temp.store, continuity);

    // Every request the provider received, the summarizer's too, fits the window.
    expect(requests.length).toBeGreaterThanOrEqual(5);
    for (const request of requests) expect(requestTokens(request)).toBeLessThan(WINDOW);
    for (const event of events.filter((item) => item.type === "context.compiled")) {
      const data = event.data as EventData<"context.compiled">;
      expect(data.over_budget).toBeUndefined();
      expect(data.tokens).toBeLessThanOrEqual(data.budget);
    }

    // Both inputs were cut (decided and logged before the compile that used them), stored whole.
    const cuts = events.filter((item) => item.type === "context.input-cut");
    const cutData = cuts.map((item) => item.data as EventData<"context.input-cut">);
    expect(cutData.map((data) => [data.role, data.artifact.hash])).toEqual([
      ["user", sha256(BIG_TURN)],
      ["tool", sha256(BIG_OUTPUT)],
    ]);
    for (const [index, cut] of cuts.entries()) {
      const data = cutData[index]!;
      const stored = (await temp.store.artifacts.get(data.artifact.hash)).toString("utf8");
      expect(stored).toBe(index === 0 ? BIG_TURN : BIG_OUTPUT);
      const compiled = events.find(
        (item) => item.type === "context.compiled" && item.seq > cut.seq,
      );
      expect(compiled).toBeDefined();
    }
    // The model was told: the excerpt, then how to read the rest.
    const first = foreground.requests[0]!.messages[0]!;
    expect(first.role).toBe("user");
    const told = first.role === "user" && typeof first.content === "string" ? first.content : "";
    expect(told.startsWith("turn-0 turn-1 ")).toBe(true);
    expect(told).toContain(`recall {"artifact": "${sha256(BIG_TURN)}"`);
    const toolMessage = foreground.requests[1]!.messages.find((message) => message.role === "tool");
    expect(toolMessage?.role === "tool" && toolMessage.results[0]!.output).toContain(
      `recall {"artifact": "${sha256(BIG_OUTPUT)}"`,
    );
    // And recall reached the whole texts, far past the excerpts.
    const recalled = events
      .filter((item) => item.type === "action.succeeded")
      .map((item) => JSON.stringify((item.data as EventData<"action.succeeded">).output));
    expect(recalled.some((text) => text.includes(BIG_OUTPUT.slice(500_000, 500_050)))).toBe(true);
    expect(recalled.some((text) => text.includes(BIG_TURN.slice(900_000, 900_050)))).toBe(true);

    expect((await checkHandoffCoverage(temp.store, continuity)).uncovered).toEqual([]);
    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store: target, provider, intercept }) =>
        longRunRuntime(target, provider, { intercept, agent: longRunAgent({ tools: [dump] }) }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  }, 120_000);

  it("is cut before the compile on a thread that already ran, so no handoff carries it whole", async () => {
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const requests: ProviderRequest[] = [];
    const runtime = longRunRuntime(
      temp.store,
      routedProvider(foreground, scriptedSummarizer(), (request) => requests.push(request)),
    );
    for (const text of ["first", "second", BIG_TURN, "after"]) {
      const result = await runtime.submit(continuity, { text, actor: "ada", origin: "t" });
      expect(result.status).toBe("completed");
    }
    await runtime.close();
    for (const request of requests) expect(requestTokens(request)).toBeLessThan(WINDOW);
    const events = await readAll(temp.store, continuity);
    const cuts = events.filter((item) => item.type === "context.input-cut");
    expect(cuts).toHaveLength(1);
    for (const seeded of events.filter((item) => item.type === "handoff.seeded")) {
      const data = seeded.data as EventData<"handoff.seeded">;
      for (const message of data.trailing) {
        expect(JSON.stringify(message).length).toBeLessThan(BIG_TURN.length / 10);
      }
    }
    expect((await checkHandoffCoverage(temp.store, continuity)).uncovered).toEqual([]);
  });

  it("is never sent when the fixed part alone does not fit: the run fails, saying what to shorten", async () => {
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: ["<response>No.</response>"],
    });
    const runtime = longRunRuntime(temp.store, routedProvider(foreground, scriptedSummarizer()), {
      agent: longRunAgent({ instructions: megabyte("rule").slice(0, 60_000) }),
    });
    const result = await runtime.submit(continuity, { text: "hello", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("context.over-budget");
    expect(result.error?.message).toContain("shorten the directive");
    expect(foreground.requests).toHaveLength(0);
  });
});
