import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assembleMessage,
  createModelCatalogue,
  createProvider,
  messageText,
  resolveProviderSettings,
} from "../src/providers/index.js";
import { ConfigError } from "../src/spec/index.js";
import { anthropicTextFrames } from "./support/anthropic-sse.js";
import { collect } from "./support/events.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

let server: ReplayServer;
beforeAll(async () => {
  server = await startReplayServer();
});
afterAll(async () => {
  await server.close();
});

const ask = { model: "", messages: [{ role: "user" as const, content: "hi" }] };

describe("createProvider", () => {
  it("builds an Anthropic provider from settings, with the catalogue's output limit", async () => {
    const settings = resolveProviderSettings(
      { model: "claude-haiku-4-5" },
      { ANTHROPIC_API_KEY: "sk-ant-create-test-0000000000000", ANTHROPIC_BASE_URL: server.url },
    );
    const provider = createProvider(settings);
    expect(provider.format).toBe("anthropic");
    server.respond({ chunks: anthropicTextFrames(["made ", "it"]) });
    const parts = await collect(provider.stream({ ...ask, model: settings.model }));
    expect(messageText(assembleMessage("anthropic", parts))).toBe("made it");
    const body = JSON.parse(server.requests.at(-1)!.body);
    expect(body.max_tokens).toBe(
      createModelCatalogue().require("claude-haiku-4-5").maxOutputTokens,
    );
    expect(JSON.stringify(settings)).not.toContain("sk-ant-create-test-0000000000000");
  });

  it("builds an OpenAI-compatible provider for a local flavour without a key", async () => {
    const settings = resolveProviderSettings(
      { provider: "ollama", model: "llama3.3", baseURL: `${server.url}/v1` },
      {},
    );
    const provider = createProvider(settings);
    expect(provider).toMatchObject({ name: "ollama", format: "openai-chat" });
    const chunk = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
    const base = {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "llama3.3",
    };
    server.respond({
      chunks: [
        chunk({
          ...base,
          choices: [
            { index: 0, delta: { role: "assistant", content: "local" }, finish_reason: null },
          ],
        }),
        chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
        "data: [DONE]\n\n",
      ],
    });
    const parts = await collect(provider.stream({ ...ask, model: settings.model }));
    expect(messageText(assembleMessage("openai-chat", parts))).toBe("local");
    expect(server.requests.at(-1)!.url).toBe("/v1/chat/completions");
  });

  it("plays a script for the scripted provider and refuses one without a script", async () => {
    const settings = resolveProviderSettings({ provider: "scripted" }, {});
    expect(() => createProvider(settings)).toThrow(ConfigError);
    const provider = createProvider(settings, { scripted: { script: ["scripted hello"] } });
    const parts = await collect(provider.stream({ ...ask, model: settings.model }));
    expect(messageText(assembleMessage("scripted", parts))).toBe("scripted hello");
  });
});
