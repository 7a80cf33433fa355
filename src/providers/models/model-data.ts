import type { ModelInfo } from "./model-catalogue.js";

/*
 * Published figures in USD per million tokens. Prices change (and open-weight models cost what
 * their host charges): `model_info:` in config.yaml overrides a model's window, output limit and
 * prices, and `createModelCatalogue(overrides)` any field in code. Each group below names where
 * its figures were read and when; figures not re-read on 2026-11-26 are as of early 2026, from
 * the providers' pricing and model pages (Google Gemini pricing, DeepSeek models & pricing,
 * Mistral pricing, Moonshot platform); open-weight models use Groq's list prices where Groq
 * serves them, otherwise a typical hosted price.
 */

type Entry = ModelInfo;

const claude = (
  id: string,
  contextWindow: number,
  maxOutputTokens: number,
  input: number,
  output: number,
  extra: Partial<Entry> = {},
): Entry => ({
  id,
  provider: "anthropic",
  format: "anthropic",
  contextWindow,
  maxOutputTokens,
  // Anthropic: cache reads cost 10% of input, 5-minute cache writes 125% (the models' pages).
  pricing: {
    inputPerMTok: input,
    outputPerMTok: output,
    cacheReadPerMTok: round(input * 0.1),
    cacheWritePerMTok: round(input * 1.25),
  },
  tokenizer: "estimate",
  ...extra,
});

const openai = (
  id: string,
  contextWindow: number,
  maxOutputTokens: number,
  input: number,
  output: number,
  cacheRead: number | undefined,
  extra: Partial<Entry> = {},
): Entry => ({
  id,
  provider: "openai",
  format: "openai-chat",
  contextWindow,
  maxOutputTokens,
  pricing: {
    inputPerMTok: input,
    outputPerMTok: output,
    ...(cacheRead !== undefined ? { cacheReadPerMTok: cacheRead } : {}),
  },
  tokenizer: "o200k_base",
  ...extra,
});

/** `price` is `[input, output, cacheRead?]`. */
const open = (
  id: string,
  provider: string,
  contextWindow: number,
  maxOutputTokens: number,
  [input, output, cacheRead]: [number, number, number?],
  extra: Partial<Entry> = {},
): Entry => ({
  id,
  provider,
  format: "openai-chat",
  contextWindow,
  maxOutputTokens,
  pricing: {
    inputPerMTok: input,
    outputPerMTok: output,
    ...(cacheRead !== undefined ? { cacheReadPerMTok: cacheRead } : {}),
  },
  tokenizer: "estimate",
  ...extra,
});

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

const REASONING = { reasoning: true } as const;
const RESPONSES_ONLY = { format: "openai-responses", reasoning: true } as const;

/** The built-in model table. Ids are lowercase; dated snapshots resolve to these by matching. */
export const BUILT_IN_MODELS: readonly ModelInfo[] = [
  // Anthropic, read 2026-11-26 from platform.claude.com/docs/en/models/<model>/overview (the
  // "current lineup" table: Fable 5.1, Opus 5.5, Sonnet 5.5, Haiku 4.5) and
  // platform.claude.com/docs/en/about-claude/model-deprecations (retirement dates). Every 5.x
  // model and Opus/Sonnet 4.6 have a 1M window; Sonnet 4.5 and older offered 1M only in beta
  // (a header and long-context prices), so 200K is listed.
  claude("claude-fable-5-1", 1_000_000, 128_000, 10, 50, REASONING),
  // Opus 5.5's cache reads cost $0.20, not a tenth of its input price.
  claude("claude-opus-5-5", 1_000_000, 128_000, 4, 20, {
    ...REASONING,
    pricing: { inputPerMTok: 4, outputPerMTok: 20, cacheReadPerMTok: 0.2, cacheWritePerMTok: 5 },
  }),
  claude("claude-sonnet-5-5", 1_000_000, 128_000, 2, 10, REASONING),
  claude("claude-opus-5", 1_000_000, 128_000, 5, 25, REASONING),
  claude("claude-sonnet-5", 1_000_000, 128_000, 2, 10, REASONING),
  claude("claude-opus-4-8", 1_000_000, 128_000, 5, 25, REASONING),
  claude("claude-opus-4-7", 1_000_000, 128_000, 5, 25, REASONING),
  claude("claude-opus-4-6", 1_000_000, 128_000, 5, 25, REASONING),
  claude("claude-sonnet-4-6", 1_000_000, 64_000, 3, 15, REASONING),
  claude("claude-opus-4-5", 200_000, 64_000, 5, 25, REASONING),
  // Deprecated; Anthropic retires it on 2026-11-30 (model deprecations page).
  claude("claude-sonnet-4-5", 200_000, 64_000, 3, 15, {
    ...REASONING,
    retires: "2026-11-30",
    replacement: "claude-sonnet-5-5",
  }),
  claude("claude-haiku-4-5", 200_000, 64_000, 1, 5, REASONING),
  // Retired: kept so that logs naming them still price and replay; a run on them is told.
  claude("claude-opus-4-1", 200_000, 32_000, 15, 75, {
    ...REASONING,
    retires: "2026-08-05",
    replacement: "claude-opus-5-5",
  }),
  claude("claude-opus-4", 200_000, 32_000, 15, 75, {
    ...REASONING,
    aliases: ["claude-opus-4-0"],
    retires: "2026-06-15",
    replacement: "claude-opus-5-5",
  }),
  claude("claude-sonnet-4", 200_000, 64_000, 3, 15, {
    ...REASONING,
    aliases: ["claude-sonnet-4-0"],
    retires: "2026-06-15",
    replacement: "claude-sonnet-5-5",
  }),
  claude("claude-3-7-sonnet", 200_000, 64_000, 3, 15, {
    ...REASONING,
    retires: "2026-02-19",
    replacement: "claude-sonnet-5-5",
  }),
  claude("claude-3-5-sonnet", 200_000, 8_192, 3, 15, {
    retires: "2025-10-28",
    replacement: "claude-sonnet-5-5",
  }),
  claude("claude-3-5-haiku", 200_000, 8_192, 0.8, 4),
  claude("claude-3-haiku", 200_000, 4_096, 0.25, 1.25),

  // OpenAI. Reached through Chat Completions unless only the Responses API serves the model.
  // GPT-5.5 and GPT-5.5 Pro: OpenAI's own pages could not be read here; the figures are those
  // two resellers list as of 2026-11-26 (docs.venice.ai/models/gpt-5-5: 1M window, 128K output,
  // $5 / $30 per 1M; vercel.com/ai-gateway/models/openai/gpt-5.5: the same window and prices, but
  // 272K output), with the smaller output limit taken and cached input at a tenth of input, as
  // for earlier GPT-5 models. Check them against OpenAI's model page and correct them here (or
  // override them in config.yaml `model_info:`). The others as of early 2026 from OpenAI's API
  // pricing and model pages.
  openai("gpt-5.5", 1_000_000, 128_000, 5, 30, 0.5, REASONING),
  openai("gpt-5.5-pro", 1_000_000, 128_000, 30, 180, 3, RESPONSES_ONLY),
  openai("gpt-5.2", 400_000, 128_000, 1.75, 14, 0.175, REASONING),
  openai("gpt-5.1", 400_000, 128_000, 1.25, 10, 0.125, REASONING),
  openai("gpt-5", 400_000, 128_000, 1.25, 10, 0.125, REASONING),
  openai("gpt-5-mini", 400_000, 128_000, 0.25, 2, 0.025, REASONING),
  openai("gpt-5-nano", 400_000, 128_000, 0.05, 0.4, 0.005, REASONING),
  openai("gpt-5-pro", 400_000, 272_000, 15, 120, undefined, RESPONSES_ONLY),
  openai("gpt-5-codex", 400_000, 128_000, 1.25, 10, 0.125, RESPONSES_ONLY),
  openai("gpt-4.1", 1_047_576, 32_768, 2, 8, 0.5),
  openai("gpt-4.1-mini", 1_047_576, 32_768, 0.4, 1.6, 0.1),
  openai("gpt-4.1-nano", 1_047_576, 32_768, 0.1, 0.4, 0.025),
  openai("gpt-4o", 128_000, 16_384, 2.5, 10, 1.25),
  openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.6, 0.075),
  openai("o3", 200_000, 100_000, 2, 8, 0.5, REASONING),
  openai("o3-pro", 200_000, 100_000, 20, 80, undefined, RESPONSES_ONLY),
  openai("o3-mini", 200_000, 100_000, 1.1, 4.4, 0.55, REASONING),
  openai("o4-mini", 200_000, 100_000, 1.1, 4.4, 0.275, REASONING),
  openai("o1", 200_000, 100_000, 15, 60, 7.5, REASONING),
  // Open weights (Groq prices); served by many hosts, so no provider is inferred from them.
  openai("gpt-oss-120b", 131_072, 65_536, 0.15, 0.6, undefined, {
    ...REASONING,
    openWeights: true,
    aliases: ["gpt-oss:120b"],
  }),
  openai("gpt-oss-20b", 131_072, 65_536, 0.075, 0.3, undefined, {
    ...REASONING,
    openWeights: true,
    aliases: ["gpt-oss:20b"],
  }),

  // Google Gemini, through its OpenAI-compatible endpoint. Prompts over 200K cost more on Pro.
  open("gemini-3-pro-preview", "google", 1_048_576, 65_536, [2, 12, 0.2], REASONING),
  open("gemini-2.5-pro", "google", 1_048_576, 65_536, [1.25, 10, 0.125], REASONING),
  open("gemini-2.5-flash", "google", 1_048_576, 65_536, [0.3, 2.5, 0.03], REASONING),
  open("gemini-2.5-flash-lite", "google", 1_048_576, 65_536, [0.1, 0.4, 0.01]),

  // DeepSeek's own API (V3.2 prices); cache hits cost a tenth, misses the input price.
  open("deepseek-chat", "deepseek", 128_000, 8_192, [0.28, 0.42, 0.028], {
    aliases: ["deepseek-v3", "deepseek-v3.2"],
  }),
  open("deepseek-reasoner", "deepseek", 128_000, 65_536, [0.28, 0.42, 0.028], {
    ...REASONING,
    aliases: ["deepseek-r1"],
  }),

  // Mistral's own API.
  open("mistral-large", "mistral", 131_072, 32_768, [2, 6], {
    aliases: ["mistral-large-latest", "mistral-large-2411"],
  }),
  open("mistral-medium", "mistral", 131_072, 32_768, [0.4, 2], {
    aliases: ["mistral-medium-latest", "mistral-medium-2505"],
  }),
  open("mistral-small", "mistral", 131_072, 32_768, [0.1, 0.3], {
    aliases: ["mistral-small-latest", "mistral-small-2506"],
  }),
  open("codestral", "mistral", 256_000, 32_768, [0.3, 0.9], {
    aliases: ["codestral-latest", "codestral-2501"],
  }),

  // Moonshot Kimi (Moonshot's prices); open weights, also on Groq and OpenRouter.
  open("kimi-k2", "moonshot", 262_144, 16_384, [0.6, 2.5, 0.15], {
    openWeights: true,
    aliases: [
      "kimi-k2-0905-preview",
      "kimi-k2-0711-preview",
      "kimi-k2-instruct",
      "kimi-k2-instruct-0905",
    ],
  }),
  open("kimi-k2-thinking", "moonshot", 262_144, 16_384, [0.6, 2.5, 0.15], {
    ...REASONING,
    openWeights: true,
  }),

  // Meta Llama (Groq ids and prices as aliases; Ollama tags too).
  open("llama-3.3-70b", "meta", 131_072, 32_768, [0.59, 0.79], {
    openWeights: true,
    aliases: ["llama-3.3-70b-versatile", "llama-3.3-70b-instruct", "llama3.3", "llama3.3:70b"],
  }),
  open("llama-3.1-70b", "meta", 131_072, 8_192, [0.88, 0.88], {
    openWeights: true,
    aliases: ["llama-3.1-70b-instruct", "llama-3.1-70b-versatile", "llama3.1:70b"],
  }),
  open("llama-3.1-8b", "meta", 131_072, 8_192, [0.05, 0.08], {
    openWeights: true,
    aliases: ["llama-3.1-8b-instant", "llama-3.1-8b-instruct", "llama3.1", "llama3.1:8b"],
  }),
  open("llama-4-maverick", "meta", 131_072, 8_192, [0.2, 0.6], {
    openWeights: true,
    aliases: ["llama-4-maverick-17b-128e-instruct"],
  }),
  open("llama-4-scout", "meta", 131_072, 8_192, [0.11, 0.34], {
    openWeights: true,
    aliases: ["llama-4-scout-17b-16e-instruct"],
  }),

  // Qwen (typical hosted prices; Groq's for qwen3-32b).
  open("qwen3-235b-a22b", "qwen", 131_072, 32_768, [0.2, 0.6], {
    ...REASONING,
    openWeights: true,
    aliases: ["qwen3:235b"],
  }),
  open("qwen3-32b", "qwen", 131_072, 40_960, [0.29, 0.59], {
    ...REASONING,
    openWeights: true,
    aliases: ["qwen3:32b"],
  }),
  open("qwen2.5-72b-instruct", "qwen", 131_072, 8_192, [0.35, 0.4], {
    openWeights: true,
    aliases: ["qwen2.5-72b", "qwen2.5:72b"],
  }),
  open("qwen2.5-coder-32b-instruct", "qwen", 32_768, 8_192, [0.2, 0.2], {
    openWeights: true,
    aliases: ["qwen2.5-coder-32b", "qwen2.5-coder:32b"],
  }),
];
