/**
 * Live calls to the real provider APIs. Each runs only when its key is set in the environment and
 * is skipped, with that reason in its title, otherwise. They cost a few hundred tokens.
 */
import { describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../src/providers/anthropic/index.js";
import { assembleMessage, messageText } from "../src/providers/index.js";
import {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
} from "../src/providers/openai/index.js";
import { collect } from "./support/events.js";

const anthropicKey = process.env.ANTHROPIC_API_KEY;
const openaiKey = process.env.OPENAI_API_KEY;
const ask = (model: string) => ({
  model,
  maxOutputTokens: 64,
  messages: [{ role: "user" as const, content: "Reply with exactly the word: pong" }],
});

describe("live provider APIs", () => {
  it.skipIf(!anthropicKey)(
    `Anthropic Messages streams a reply${anthropicKey ? "" : " (skipped: ANTHROPIC_API_KEY is not set)"}`,
    async () => {
      const provider = createAnthropicProvider({ apiKey: anthropicKey! });
      const parts = await collect(
        provider.stream(ask(process.env.SPOOL_LIVE_ANTHROPIC_MODEL ?? "claude-haiku-4-5")),
      );
      const message = assembleMessage("anthropic", parts);
      expect(message.error).toBeUndefined();
      expect(messageText(message).toLowerCase()).toContain("pong");
      expect(message.usage.inputTokens).toBeGreaterThan(0);
      expect(message.responseId).toMatch(/^msg_/);
      expect(JSON.stringify(parts)).not.toContain(anthropicKey!);
    },
  );

  it.skipIf(!openaiKey)(
    `OpenAI Chat Completions streams a reply with usage${openaiKey ? "" : " (skipped: OPENAI_API_KEY is not set)"}`,
    async () => {
      const provider = createOpenAIChatProvider({ apiKey: openaiKey! });
      const message = assembleMessage(
        "openai-chat",
        await collect(provider.stream(ask("gpt-4o-mini"))),
      );
      expect(message.error).toBeUndefined();
      expect(messageText(message).toLowerCase()).toContain("pong");
      expect(message.usage.outputTokens).toBeGreaterThan(0);
    },
  );

  it.skipIf(!openaiKey)(
    `OpenAI Responses continues from previous_response_id${openaiKey ? "" : " (skipped: OPENAI_API_KEY is not set)"}`,
    async () => {
      const provider = createOpenAIResponsesProvider({ apiKey: openaiKey! });
      const first = assembleMessage(
        "openai-responses",
        await collect(provider.stream(ask("gpt-4o-mini"))),
      );
      expect(first.responseId).toMatch(/^resp_/);
      const second = assembleMessage(
        "openai-responses",
        await collect(
          provider.stream({
            model: "gpt-4o-mini",
            maxOutputTokens: 64,
            previousResponseId: first.responseId!,
            messages: [{ role: "user", content: "What word did you just reply with? One word." }],
          }),
        ),
      );
      expect(second.error).toBeUndefined();
      expect(messageText(second).toLowerCase()).toContain("pong");
    },
  );
});
