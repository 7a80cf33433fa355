/**
 * A model's context window is never guessed silently: `resolveModelWindow`'s precedence
 * (SPOOL_CONTEXT_WINDOW > config.yaml model_info > the server > the catalogue > an assumed
 * window), the `model_info:` section of config.yaml and `SPOOL_CONTEXT_WINDOW` with their
 * errors, and `discoverModelWindow` asking real loopback servers shaped like vLLM, Ollama and
 * llama.cpp.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { mergeConfigLayers, parseConfigLayer } from "../src/directives/index.js";
import {
  createModelCatalogue,
  discoverModelWindow,
  modelInfoOverrides,
  parseContextWindowEnv,
  resolveModelWindow,
  UNKNOWN_MODEL_WINDOW,
} from "../src/providers/index.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";

const catalogue = createModelCatalogue();
const source = { tier: "project", path: "/w/.ai/config.yaml" } as never;

describe("resolveModelWindow", () => {
  const server = { contextWindow: 32_768, detail: "GET /v1/models max_model_len of m" };

  it("takes SPOOL_CONTEXT_WINDOW over config, config over the server, the server over the catalogue", () => {
    const configured = { "gpt-4o": { contextWindow: 16_384 } };
    const all = { model: "gpt-4o", catalogue, configured, server };
    expect(resolveModelWindow({ ...all, envWindow: 9_000 })).toMatchObject({
      contextWindow: 9_000,
      source: "env",
    });
    expect(resolveModelWindow(all)).toMatchObject({ contextWindow: 16_384, source: "config" });
    expect(resolveModelWindow({ model: "gpt-4o", catalogue, server })).toMatchObject({
      contextWindow: 32_768,
      source: "server",
    });
    expect(resolveModelWindow({ model: "gpt-4o", catalogue })).toMatchObject({
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      source: "catalogue",
    });
  });

  it("assumes a small window for a model nothing knows, and says so with the line to add", () => {
    const window = resolveModelWindow({ model: "acme-7b", catalogue });
    expect(window).toMatchObject({ contextWindow: UNKNOWN_MODEL_WINDOW, source: "default" });
    expect(window.maxOutputTokens).toBeLessThanOrEqual(UNKNOWN_MODEL_WINDOW / 4);
  });

  it("finds a model_info entry by the model's catalogue id (a dated snapshot, an alias)", () => {
    const configured = { "claude-sonnet-4-5": { contextWindow: 100_000, maxOutputTokens: 8_000 } };
    expect(
      resolveModelWindow({ model: "claude-sonnet-4-5-20250929", catalogue, configured }),
    ).toMatchObject({ contextWindow: 100_000, maxOutputTokens: 8_000, source: "config" });
  });

  it("never reserves more output than the window holds", () => {
    const window = resolveModelWindow({ model: "gpt-5.5", catalogue, envWindow: 4_096 });
    expect(window.maxOutputTokens).toBe(4_096);
  });
});

describe("SPOOL_CONTEXT_WINDOW", () => {
  it("is a whole number of tokens", () => {
    expect(parseContextWindowEnv({})).toBeUndefined();
    expect(parseContextWindowEnv({ SPOOL_CONTEXT_WINDOW: "32768" })).toBe(32_768);
    expect(parseContextWindowEnv({ SPOOL_CONTEXT_WINDOW: "32_768" })).toBe(32_768);
  });

  it.each(["lots", "8k", "100", "1.5e4", "-8192"])("refuses %s with a hint", (value) => {
    expect(() => parseContextWindowEnv({ SPOOL_CONTEXT_WINDOW: value })).toThrow(
      expect.objectContaining({
        code: "config.context-window",
        hint: expect.stringContaining("SPOOL_CONTEXT_WINDOW="),
      }),
    );
  });
});

describe("model_info in config.yaml", () => {
  it("is merged over the tiers key by key", () => {
    const user = parseConfigLayer(
      'model_info:\n  "qwen3:8b": { context_window: 40960, input_price: 0 }\n',
      "~/.ai/config.yaml",
    );
    const project = parseConfigLayer(
      'model_info:\n  "qwen3:8b": { context_window: 8192 }\n  gpt-4o: { cached_price: 1 }\n',
      ".ai/config.yaml",
    );
    const merged = mergeConfigLayers([
      { layer: user, source },
      { layer: project, source },
    ]);
    expect(merged.modelInfo).toEqual({
      "qwen3:8b": { contextWindow: 8192, inputPerMTok: 0 },
      "gpt-4o": { cachedPerMTok: 1 },
    });
  });

  it.each([
    [
      "model_info: { m: { context_window: lots } }",
      /model_info\.m\.context_window: must be a whole number of tokens/,
    ],
    ["model_info: { m: { context_window: 100 } }", /context_window: must be 1024 tokens or more/],
    [
      "model_info: { m: { context_windw: 8192 } }",
      /has context_window, max_output_tokens, input_price/,
    ],
    ["model_info: { m: { input_price: -1 } }", /input_price: must be USD per million tokens/],
    [
      "model_info: { m: { context_window: 8192, max_output_tokens: 9000 } }",
      /max_output_tokens: max_output_tokens must not exceed context_window/,
    ],
    ["model_info: [1]", /must map model ids to their limits/],
  ])("refuses %s, naming the field", (yaml, message) => {
    expect(() => parseConfigLayer(`${yaml}\n`, ".ai/config.yaml")).toThrow(message);
  });

  it("prices a known model and adds an unknown priced one to the catalogue", () => {
    const overrides = modelInfoOverrides(
      {
        "gpt-4o": { inputPerMTok: 1, contextWindow: 8_192 },
        "acme-7b": { inputPerMTok: 0.1, outputPerMTok: 0.2 },
        "free-7b": { contextWindow: 4_096 },
      },
      catalogue,
    );
    const priced = createModelCatalogue(overrides);
    expect(priced.lookup("gpt-4o")).toMatchObject({
      contextWindow: 8_192,
      maxOutputTokens: 2_048,
      pricing: { inputPerMTok: 1, outputPerMTok: 10 },
    });
    expect(priced.lookup("acme-7b")?.pricing).toEqual({ inputPerMTok: 0.1, outputPerMTok: 0.2 });
    expect(priced.lookup("free-7b")).toBeUndefined();
    // Its window is still the server's to say: the entry made for its prices does not decide it.
    const server = { contextWindow: 65_536, detail: "GET /props" };
    expect(resolveModelWindow({ model: "acme-7b", catalogue: priced, server })).toMatchObject({
      contextWindow: 65_536,
      source: "server",
    });
    expect(resolveModelWindow({ model: "acme-7b", catalogue: priced }).source).toBe("default");
  });
});

describe("discoverModelWindow asks the server", () => {
  let local: LocalModelServer | undefined;
  afterEach(async () => {
    await local?.close();
    local = undefined;
  });
  const none = () => ({ text: "", inputTokens: 0 });

  it("vLLM: GET /v1/models max_model_len of the model served", async () => {
    local = await startLocalModelServer({
      kind: "vllm",
      model: "Qwen/Qwen3-8B",
      window: 32_768,
      answer: none,
    });
    const found = await discoverModelWindow({
      baseURL: local.baseURL,
      model: "Qwen/Qwen3-8B",
      kind: "vllm",
      apiKey: "sk-local-1",
    });
    expect(found).toEqual({
      contextWindow: 32_768,
      detail: "GET /v1/models max_model_len of Qwen/Qwen3-8B",
    });
  });

  it("Ollama: num_ctx when the model sets it, else the architecture's context_length", async () => {
    local = await startLocalModelServer({
      kind: "ollama",
      model: "qwen3:8b",
      window: 8_192,
      answer: none,
    });
    expect(
      await discoverModelWindow({ baseURL: local.baseURL, model: "qwen3:8b", kind: "ollama" }),
    ).toEqual({ contextWindow: 8_192, detail: "POST /api/show parameters num_ctx" });
    expect(JSON.parse(local.requests[0]!.body)).toEqual({ model: "qwen3:8b" });
    await local.close();
    local = await startLocalModelServer({
      kind: "ollama",
      model: "qwen3:8b",
      window: 40_960,
      archOnly: true,
      answer: none,
    });
    expect(
      await discoverModelWindow({ baseURL: local.baseURL, model: "qwen3:8b", kind: "ollama" }),
    ).toEqual({
      contextWindow: 40_960,
      detail: 'POST /api/show model_info["qwen3.context_length"]',
    });
  });

  it("llama.cpp: GET /props n_ctx; `any` tries each question until one is answered", async () => {
    local = await startLocalModelServer({
      kind: "llamacpp",
      model: "default",
      window: 4_096,
      answer: none,
    });
    expect(
      await discoverModelWindow({ baseURL: local.baseURL, model: "default", kind: "any" }),
    ).toEqual({ contextWindow: 4_096, detail: "GET /props default_generation_settings.n_ctx" });
    expect(local.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "GET /v1/models",
      "GET /props",
    ]);
  });

  it("gives no answer for a server that knows none of the questions, or never answers", async () => {
    local = await startLocalModelServer({ kind: "plain", model: "m", answer: none });
    expect(
      await discoverModelWindow({ baseURL: local.baseURL, model: "m", kind: "any" }),
    ).toBeUndefined();
    const silent = createServer(() => {
      // Never answers: the discovery's own timeout ends the question.
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const found = await discoverModelWindow({
        baseURL: `http://127.0.0.1:${port}/v1`,
        model: "m",
        kind: "any",
        timeoutMs: 200,
      });
      expect(found).toBeUndefined();
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
