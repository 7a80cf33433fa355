/**
 * The live proof of "never lose the thread": a real model keeps a fact stated in turn 1 after
 * three handoffs. It runs only when a key is set (Anthropic first, then OpenAI) and is skipped,
 * with that reason in its title, otherwise. The model's window is made small in the catalogue so
 * that handoffs come after a few turns; it sends about 150,000 input tokens (some 30 calls).
 */
import { describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createOpenAIChatProvider } from "../src/providers/openai/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import type { EventData } from "../src/spec/index.js";
import { filler, longRunAgent, summarizerSpec } from "./support/continuity-run.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const anthropicKey = process.env.ANTHROPIC_API_KEY;
const openaiKey = process.env.OPENAI_API_KEY;
const live = anthropicKey
  ? { key: anthropicKey, model: process.env.SPOOL_LIVE_ANTHROPIC_MODEL ?? "claude-haiku-4-5" }
  : openaiKey
    ? { key: openaiKey, model: process.env.SPOOL_LIVE_OPENAI_MODEL ?? "gpt-4.1-mini" }
    : undefined;

const temp = useTempStore("spool-live-handoff-");

describe("one chat forever, live", () => {
  it.skipIf(!live)(
    `a real model keeps a fact from turn 1 after three handoffs${live ? "" : " (skipped: neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set)"}`,
    async () => {
      const { key, model } = live!;
      const provider = anthropicKey
        ? createAnthropicProvider({ apiKey: key })
        : createOpenAIChatProvider({ apiKey: key });
      const catalogue = createModelCatalogue({
        [model]: { contextWindow: 6000, maxOutputTokens: 400 },
      });
      const summarizer = { ...summarizerSpec(), model, limits: { maxTurns: 2 } };
      const runtime = createAgentRuntime({
        store: temp.store,
        provider,
        catalogue,
        agent: longRunAgent({
          model,
          instructions:
            "Answer each message with one short sentence. Keep track of what the user tells you about themselves.",
        }),
        agents: {
          get: (name) => (name === summarizer.directive ? summarizer : undefined),
          names: () => [summarizer.directive],
        },
      });
      const say = (text: string) => runtime.submit("live", { text, actor: "ada", origin: "test" });
      await say("Please remember this: my locker code is 4719. Just acknowledge it.");
      let handoffs = 0;
      for (let turn = 2; turn <= 60 && handoffs < 3; turn++) {
        const result = await say(
          `Here is a log excerpt to skim, answer "ok": ${filler(turn, 350)}`,
        );
        expect(result.status).toBe("completed");
        handoffs = (await readAll(temp.store, "live")).filter(
          (event) => event.type === "thread.continued",
        ).length;
      }
      expect(handoffs).toBeGreaterThanOrEqual(3);
      const answer = await say("What is my locker code? Answer with the digits only.");
      await runtime.close();
      expect(answer.status).toBe("completed");
      expect(answer.result?.replace(/\D/g, "")).toContain("4719");
      const events = await readAll(temp.store, "live");
      for (const event of events.filter((item) => item.type === "thread.continued")) {
        expect((event.data as EventData<"thread.continued">).mode).toBe("summary");
      }
      expect(JSON.stringify(events)).not.toContain(key);
    },
    600_000,
  );
});
