import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../src/providers/index.js";
import type { ProviderRequest } from "../src/providers/provider.js";
import { replayContinuity } from "../src/replay/index.js";
import type { EventData } from "../src/spec/index.js";
import { verifyCheckpoints } from "../src/transcript/checkpoint-verify.js";
import { signerFromPem } from "../src/transcript/signing.js";
import {
  filler,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import { useTempStore } from "./support/transcripts.js";

const continuity = "forever";
const temp = useTempStore("spool-long-run-");

const TURNS = Number(process.env.SPOOL_LONG_RUN_TURNS ?? 10_000);
const PINNED = "The project's code name is Heron.";

/**
 * The proof: 10,000 turns on a model with an 8k window. Every model call's input stays
 * within the budget, handoffs happen at the configured pressure, the pinned fact and the newest
 * user turn are in every request, the whole run replays identically and its checkpoints verify.
 */
describe("one chat forever", () => {
  it("runs 10,000 turns on an 8k window through hundreds of handoffs without losing the thread", async () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const signer = signerFromPem(privateKey.export({ type: "pkcs8", format: "pem" }).toString());
    const problems: string[] = [];
    let calls = 0;
    let expectedTurn = "";
    const inspect = (request: ProviderRequest, summary: boolean) => {
      if (summary) return;
      calls += 1;
      if (!request.system?.includes(PINNED))
        problems.push(`call ${calls}: the pinned fact is missing`);
      const last = request.messages.at(-1);
      const text = last?.role === "user" && typeof last.content === "string" ? last.content : "";
      if (!text.includes(expectedTurn)) problems.push(`call ${calls}: the newest turn is missing`);
      if (request.messages[0]?.role !== "user")
        problems.push(`call ${calls}: starts with ${request.messages[0]?.role}`);
    };
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const provider = routedProvider(foreground, scriptedSummarizer(), inspect);
    const runtime = longRunRuntime(temp.store, provider, { signer });
    await temp.store.append({
      continuity,
      type: "context.pinned",
      data: { id: "pin-heron", kind: "fact", text: PINNED, by: "user" },
    });
    for (let turn = 1; turn <= TURNS; turn++) {
      expectedTurn = filler(turn, 60);
      const result = await runtime.submit(continuity, {
        text: expectedTurn,
        actor: "ada",
        origin: "test",
      });
      if (result.status !== "completed") problems.push(`turn ${turn}: ${result.status}`);
      if (problems.length > 0) break;
    }
    await runtime.close();
    expect(problems).toEqual([]);
    expect(calls).toBe(TURNS);

    let handoffs = 0;
    let overBudget = 0;
    let omitted = 0;
    let underPressure = 0;
    const window = 8192;
    for await (const event of temp.store.read({ continuity })) {
      if (event.type === "context.compiled") {
        const data = event.data as EventData<"context.compiled">;
        if (data.tokens > data.budget || data.over_budget) overBudget += 1;
        if (data.omitted > 0) omitted += 1;
      } else if (event.type === "message.completed") {
        const usage = (event.data as EventData<"message.completed">).usage;
        if (usage.input_tokens >= window) overBudget += 1;
      } else if (event.type === "thread.continued") {
        handoffs += 1;
        const data = event.data as EventData<"thread.continued">;
        if ((data.pressure_ratio ?? 0) < 0.9 && !data.reason.includes("full")) underPressure += 1;
        expect(data.mode).toBe("summary");
      }
    }
    expect(overBudget).toBe(0);
    expect(omitted).toBe(0);
    expect(underPressure).toBe(0);
    expect(handoffs).toBeGreaterThan(TURNS / 50);

    const verified = await verifyCheckpoints(temp.store, {
      continuity,
      publicKeys: new Map([[signer.keyId, signer.publicKey]]),
    });
    expect(verified.firstProblem).toBeUndefined();
    expect(verified.checkpoints).toBeGreaterThanOrEqual(handoffs);

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      makeRuntime: ({ store: target, provider: replayed, intercept }) =>
        longRunRuntime(target, replayed, { intercept }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  }, 900_000);
});
