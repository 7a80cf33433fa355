import { describe, expect, it } from "vitest";
import {
  BUILT_IN_MODELS,
  costOf,
  createModelCatalogue,
  type ModelInfo,
  pressureRatio,
} from "../src/providers/models/index.js";
import type { Usage } from "../src/providers/stream-part.js";
import { ConfigError } from "../src/spec/index.js";

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const usage = (fields: Partial<Usage>): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...fields,
});

describe("the built-in table", () => {
  it("has unique ids and aliases, sane limits and prices", () => {
    const names = BUILT_IN_MODELS.flatMap((m) => [m.id, ...(m.aliases ?? [])]);
    expect(new Set(names).size).toBe(names.length);
    for (const model of BUILT_IN_MODELS) {
      expect(model.id).toBe(model.id.toLowerCase());
      expect(model.maxOutputTokens).toBeLessThanOrEqual(model.contextWindow);
      expect(model.pricing.outputPerMTok).toBeGreaterThanOrEqual(model.pricing.inputPerMTok);
      expect(model.pricing.cacheReadPerMTok ?? 0).toBeLessThan(model.pricing.inputPerMTok);
    }
  });

  it("covers the common models of every maker", () => {
    const catalogue = createModelCatalogue();
    for (const id of [
      "claude-opus-4-1",
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "claude-3-5-haiku",
      "claude-3-7-sonnet",
      "gpt-4o",
      "gpt-4o-mini",
      "gpt-4.1",
      "gpt-4.1-mini",
      "o3",
      "o4-mini",
      "gpt-5",
      "gpt-5-mini",
      "gpt-oss-20b",
      "gpt-oss-120b",
      "llama-3.3-70b",
      "llama-3.1-8b",
      "qwen2.5-72b-instruct",
      "qwen3-32b",
      "deepseek-chat",
      "deepseek-reasoner",
      "mistral-large",
      "mistral-small",
      "kimi-k2",
    ]) {
      expect(catalogue.lookup(id)?.id, id).toBe(id);
    }
  });
});

describe("lookup", () => {
  const catalogue = createModelCatalogue();
  const idOf = (name: string) => catalogue.lookup(name)?.id;

  it("matches ids exactly and case-insensitively", () => {
    expect(idOf("gpt-4o")).toBe("gpt-4o");
    expect(idOf("GPT-4o")).toBe("gpt-4o");
    expect(idOf("gpt-4o-mini")).toBe("gpt-4o-mini");
    expect(idOf("o3")).toBe("o3");
  });

  it("matches aliases", () => {
    expect(idOf("llama-3.3-70b-versatile")).toBe("llama-3.3-70b");
    expect(idOf("claude-opus-4-0")).toBe("claude-opus-4");
    expect(idOf("mistral-large-latest")).toBe("mistral-large");
    expect(idOf("gpt-oss:20b")).toBe("gpt-oss-20b");
  });

  it("matches dated snapshots and -latest names to their model", () => {
    expect(idOf("claude-sonnet-4-5-20250929")).toBe("claude-sonnet-4-5");
    expect(idOf("claude-3-5-haiku-20241022")).toBe("claude-3-5-haiku");
    expect(idOf("claude-3-7-sonnet-latest")).toBe("claude-3-7-sonnet");
    expect(idOf("gpt-4o-2024-08-06")).toBe("gpt-4o");
    expect(idOf("gpt-4.1-mini-2025-04-14")).toBe("gpt-4.1-mini");
    expect(idOf("claude-haiku-4-5@20251001")).toBe("claude-haiku-4-5");
    expect(idOf("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe("claude-sonnet-4-5");
  });

  it("matches through provider prefixes", () => {
    expect(idOf("openai/gpt-4o")).toBe("gpt-4o");
    expect(idOf("groq/llama-3.3-70b-versatile")).toBe("llama-3.3-70b");
    expect(idOf("meta-llama/Llama-3.3-70B-Instruct")).toBe("llama-3.3-70b");
    expect(idOf("moonshotai/kimi-k2-instruct")).toBe("kimi-k2");
    expect(idOf("openrouter/anthropic/claude-sonnet-4.5")).toBe("claude-sonnet-4-5");
    expect(idOf("ft:gpt-4o-mini-2024-07-18:acme::abc123")).toBe("gpt-4o-mini");
  });

  it("does not match what it does not know, and does not confuse neighbours", () => {
    expect(idOf("my-finetune")).toBeUndefined();
    expect(idOf("gpt-4")).toBeUndefined();
    expect(idOf("gpt-5-mini")).toBe("gpt-5-mini");
    expect(idOf("gpt-4.1-nano")).toBe("gpt-4.1-nano");
    expect(idOf("claude-opus-4-1-20250805")).toBe("claude-opus-4-1");
  });
});

describe("require", () => {
  it("throws model.unknown naming near matches and the configuration key to add", () => {
    const catalogue = createModelCatalogue();
    const error = thrown(() => catalogue.require("claude-sonet-4-5"));
    expect(error.code).toBe("model.unknown");
    expect(error.message).toContain('"claude-sonnet-4-5"');
    expect(error.message).toContain("models.claude-sonet-4-5");
    expect(error.details.nearMatches).toContain("claude-sonnet-4-5");
    expect(catalogue.require("gpt-4o").id).toBe("gpt-4o");
  });

  it("quotes configuration keys that are not plain words", () => {
    const error = thrown(() => createModelCatalogue().require("acme.model.v2"));
    expect(error.message).toContain('models["acme.model.v2"]');
  });
});

describe("overrides", () => {
  it("change fields of a built-in model, merging pricing field by field", () => {
    const catalogue = createModelCatalogue({
      "gpt-4o": { pricing: { inputPerMTok: 2 }, contextWindow: 64_000 },
    });
    const model = catalogue.require("gpt-4o-2024-08-06");
    expect(model.pricing).toEqual({ inputPerMTok: 2, outputPerMTok: 10, cacheReadPerMTok: 1.25 });
    expect(model.contextWindow).toBe(64_000);
    expect(model.maxOutputTokens).toBe(16_384);
    expect(createModelCatalogue().require("gpt-4o").pricing.inputPerMTok).toBe(2.5);
  });

  it("add a new model, defaulting its tokenizer", () => {
    const catalogue = createModelCatalogue({
      "acme-7b": {
        provider: "acme",
        format: "openai-chat",
        contextWindow: 32_000,
        maxOutputTokens: 4_000,
        pricing: { inputPerMTok: 0, outputPerMTok: 0 },
        aliases: ["Acme:7B"],
      },
    });
    expect(catalogue.require("acme:7b")).toMatchObject({ id: "acme-7b", tokenizer: "estimate" });
    expect(catalogue.list().at(-1)?.id).toBe("acme-7b");
  });

  it("give a snapshot its own entry inheriting the model's fields", () => {
    const catalogue = createModelCatalogue({
      "claude-sonnet-4-5-20250929": { pricing: { outputPerMTok: 20 } },
    });
    const snapshot = catalogue.require("claude-sonnet-4-5-20250929");
    expect(snapshot.id).toBe("claude-sonnet-4-5-20250929");
    expect(snapshot.pricing).toMatchObject({ inputPerMTok: 3, outputPerMTok: 20 });
    expect(catalogue.require("claude-sonnet-4-5").pricing.outputPerMTok).toBe(15);
  });

  it("are rejected with precise paths", () => {
    const bad = thrown(() =>
      createModelCatalogue({
        "gpt-4.1": { pricing: { inputPerMTok: -1 } },
        o3: { contextWindow: 1.5, colour: "red" } as never,
      }),
    );
    expect(bad.code).toBe("model.invalid-override");
    const paths = (bad.details.issues as { path: string }[]).map((issue) => issue.path);
    expect(paths).toContain('models["gpt-4.1"].pricing.inputPerMTok');
    expect(paths).toContain("models.o3.contextWindow");
    expect(bad.message).toContain("colour");
  });

  it("for a new model must give its limits, format and prices", () => {
    const bad = thrown(() => createModelCatalogue({ "acme-7b": { provider: "acme" } }));
    const paths = (bad.details.issues as { path: string }[]).map((issue) => issue.path);
    expect(paths).toEqual([
      "models.acme-7b.format",
      "models.acme-7b.contextWindow",
      "models.acme-7b.maxOutputTokens",
      "models.acme-7b.pricing.inputPerMTok",
      "models.acme-7b.pricing.outputPerMTok",
    ]);
  });

  it("may not make the output limit exceed the window", () => {
    const bad = thrown(() => createModelCatalogue({ "gpt-4o": { contextWindow: 8_000 } }));
    expect(bad.message).toContain("models.gpt-4o.maxOutputTokens");
  });
});

describe("costOf and pressureRatio", () => {
  const sonnet = createModelCatalogue().require("claude-sonnet-4-5");

  it("prices uncached input, cache reads and writes, and output apart", () => {
    const cost = costOf(
      usage({
        inputTokens: 1_000_000,
        cacheReadTokens: 600_000,
        cacheWriteTokens: 100_000,
        outputTokens: 200_000,
      }),
      sonnet,
    );
    expect(cost.input).toBeCloseTo(0.9, 10); // 300K × $3
    expect(cost.cacheRead).toBeCloseTo(0.18, 10); // 600K × $0.30
    expect(cost.cacheWrite).toBeCloseTo(0.375, 10); // 100K × $3.75
    expect(cost.output).toBeCloseTo(3, 10); // 200K × $15
    expect(cost.total).toBeCloseTo(4.455, 10);
  });

  it("never counts negative uncached input, and prices unpriced cache at the input price", () => {
    const model: ModelInfo = {
      ...sonnet,
      pricing: { inputPerMTok: 2, outputPerMTok: 4 },
    };
    const cost = costOf(usage({ inputTokens: 10, cacheReadTokens: 1_000_000 }), model);
    expect(cost.input).toBe(0);
    expect(cost.cacheRead).toBeCloseTo(2, 10);
  });

  it("gives the share of the context window the input filled", () => {
    expect(pressureRatio({ inputTokens: 50_000 }, sonnet)).toBe(0.25);
  });
});
