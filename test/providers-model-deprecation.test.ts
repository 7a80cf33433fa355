/**
 * Current models: the defaults are current (in the catalogue, not deprecated), a deprecated model
 * is said once per run as one line (`deprecationNotice`, the `model-notice` a chat shows dim), and
 * the Anthropic SDK's own deprecation warning, which it prints on every attempt, is not printed.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createChatRenderer } from "../src/cli/chat/index.js";
import { findBuiltinDir, parseConfigLayer } from "../src/directives/index.js";
import {
  createAnthropicProvider,
  createModelCatalogue,
  createScriptedProvider,
  deprecationNotice,
  PROVIDER_DEFAULTS,
  type StreamPart,
} from "../src/providers/index.js";
import { createAgentRuntime, type RunNotice } from "../src/runtime/index.js";
import { collectOutput, stripColor } from "./support/chat-fakes.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";
import { tempStore } from "./support/transcripts.js";

const catalogue = createModelCatalogue();
const TODAY = "2026-11-26";

describe("the catalogue's current models", () => {
  it("defaults every provider and every built-in tier to a model it knows and that is not deprecated", () => {
    const config = parseConfigLayer(
      readFileSync(join(findBuiltinDir(), "config.yaml"), "utf8"),
      "builtin/config.yaml",
    );
    const tiered = Object.values(config.models ?? {}).flatMap((byProvider) =>
      Object.values(byProvider ?? {}),
    );
    const defaults = Object.values(PROVIDER_DEFAULTS)
      .filter((entry) => entry.format === "anthropic" || entry.flavour === "openai")
      .map((entry) => entry.defaultModel!);
    expect(defaults).toEqual(["claude-sonnet-5-5", "gpt-5.5", "gpt-5.5"]);
    for (const model of [...defaults, ...tiered]) {
      const info = catalogue.lookup(model);
      expect(info, `${model} is in the catalogue`).toBeDefined();
      expect(deprecationNotice(info!, TODAY), `${model} is current`).toBeUndefined();
    }
  });

  it("knows the current figures as the providers publish them", () => {
    expect(catalogue.lookup("claude-sonnet-5.5")).toMatchObject({
      id: "claude-sonnet-5-5",
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      pricing: { inputPerMTok: 2, outputPerMTok: 10, cacheReadPerMTok: 0.2 },
    });
    expect(catalogue.lookup("claude-opus-5-5")?.pricing).toEqual({
      inputPerMTok: 4,
      outputPerMTok: 20,
      cacheReadPerMTok: 0.2,
      cacheWritePerMTok: 5,
    });
    expect(catalogue.lookup("gpt-5.5")).toMatchObject({
      contextWindow: 1_000_000,
      pricing: { inputPerMTok: 5, outputPerMTok: 30, cacheReadPerMTok: 0.5 },
    });
  });
});

describe("deprecationNotice", () => {
  it("names the retirement day, how soon it is and the replacement", () => {
    const sonnet = catalogue.lookup("claude-sonnet-4-5-20250929")!;
    expect(deprecationNotice(sonnet, TODAY)).toBe(
      "claude-sonnet-4-5 is deprecated: its maker retires it on 2026-11-30 (in 4 days); use claude-sonnet-5-5 (SPOOL_MODEL, or the tier's model in .ai/config.yaml)",
    );
    expect(deprecationNotice(sonnet, "2026-11-29")).toContain("(tomorrow)");
    expect(deprecationNotice(sonnet, "2026-11-30")).toMatch(
      /^claude-sonnet-4-5 was retired on 2026-11-30: calls to it fail; use claude-sonnet-5-5/,
    );
    expect(deprecationNotice(catalogue.lookup("claude-haiku-4-5")!, TODAY)).toBeUndefined();
  });
});

describe("a run on a deprecated model", () => {
  it("says so once, however many turns it runs, and the chat shows it as one dim line", async () => {
    const { store, cleanup } = await tempStore("spool-deprecation-");
    try {
      const notices: RunNotice[] = [];
      const runtime = createAgentRuntime({
        store,
        provider: createScriptedProvider({
          model: "claude-sonnet-4-5",
          script: ["<response>one</response>", "<response>two</response>"],
        }),
        agent: {
          directive: "helper",
          instructions: "Be brief.",
          model: "claude-sonnet-4-5",
          limits: { maxTurns: 5 },
          permits: () => false,
          tools: [],
        },
        observer: (notice) => notices.push(notice),
      });
      for (const text of ["first", "second"]) {
        const result = await runtime.submit("c", { text, actor: "ada", origin: "test" });
        expect(result.status).toBe("completed");
      }
      await runtime.close();
      const said = notices.filter((notice) => notice.type === "model-notice");
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ model: "claude-sonnet-4-5" });
      expect((said[0] as { text: string }).text).toContain("2026-11-30");

      const out = collectOutput(false, 120);
      const renderer = createChatRenderer({ output: out, env: {} });
      renderer.observe(said[0]!);
      const lines = stripColor(out.text)
        .split("\n")
        .filter((line) => line !== "");
      expect(lines).toEqual([`note: ${(said[0] as { text: string }).text}`]);
    } finally {
      await cleanup();
    }
  });
});

describe("the Anthropic SDK's deprecation warning", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is not printed, on any of a call's attempts", async () => {
    const overloaded = {
      status: 529,
      headers: { "content-type": "application/json" },
      chunks: [
        JSON.stringify({
          type: "error",
          error: { type: "overloaded_error", message: "Overloaded" },
        }),
      ],
    };
    server.respond(overloaded, overloaded, overloaded);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const provider = createAnthropicProvider({
      apiKey: "sk-ant-api03-deprecation-test-key-abcdefgh",
      baseURL: server.url,
      transport: { maxAttempts: 3, sleep: async () => {}, random: () => 0 },
    });
    const parts: StreamPart[] = [];
    for await (const part of provider.stream({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Hello" }],
      maxOutputTokens: 64,
    })) {
      parts.push(part);
    }
    expect(parts.map((part) => part.type)).toEqual(["retry", "retry", "error"]);
    expect(warn).not.toHaveBeenCalled();
    // console.warn is the caller's again once the SDK call returned.
    console.warn("after");
    expect(warn).toHaveBeenCalledWith("after");
  });
});
