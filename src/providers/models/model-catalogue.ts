import { z } from "zod";
import { ConfigError } from "../../spec/index.js";
import type { Usage } from "../stream-part.js";
import { BUILT_IN_MODELS } from "./model-data.js";

/** Who makes a model. Open: a configured model may name any maker. */
export type ModelProvider =
  | "anthropic"
  | "openai"
  | "google"
  | "meta"
  | "mistral"
  | "deepseek"
  | "qwen"
  | "moonshot"
  | "groq"
  | "xai"
  | (string & {});

/** The wire formats a model is reached through (the scripted provider has no models). */
export const MODEL_FORMATS = ["anthropic", "openai-chat", "openai-responses"] as const;
/** One of `MODEL_FORMATS`. */
export type ModelFormat = (typeof MODEL_FORMATS)[number];

/** How input tokens are counted: a real BPE tokenizer, or a calibrated characters-per-token guess. */
export const TOKENIZERS = ["o200k_base", "cl100k_base", "estimate"] as const;
/** One of `TOKENIZERS`. */
export type Tokenizer = (typeof TOKENIZERS)[number];

/** Prices in USD per million tokens. Cache prices default to the input price when absent. */
export interface ModelPricing {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
}

/** What Spool knows about a model: its limits, its prices and how to count its tokens. */
export interface ModelInfo {
  /** The canonical id, lowercase, without a date suffix (`claude-sonnet-4-5`, `gpt-4o`). */
  id: string;
  provider: ModelProvider;
  /** The format it is normally reached through. */
  format: ModelFormat;
  /** Input plus output tokens the model accepts in one call. */
  contextWindow: number;
  maxOutputTokens: number;
  pricing: ModelPricing;
  tokenizer: Tokenizer;
  /** It thinks before answering (extended thinking, reasoning effort). */
  reasoning?: boolean;
  /** Open weights, served by many hosts: its maker's API is not inferred from it. */
  openWeights?: boolean;
  /** Other ids that name it exactly (provider aliases, Groq ids, Ollama tags), lowercase. */
  aliases?: string[];
  /**
   * The day (`YYYY-MM-DD`) its maker retires it, when it is deprecated: calls fail from then on.
   * `deprecationNotice` turns it into the one line a run shows.
   */
  retires?: string;
  /** The model its maker recommends instead, when it is deprecated. */
  replacement?: string;
}

/** A change to a built-in model, or a whole new model: what `models.<id>` holds in configuration. */
export type ModelOverride = Partial<Omit<ModelInfo, "pricing">> & {
  pricing?: Partial<ModelPricing>;
};

/**
 * The models Spool knows. Contract: `lookup` never throws; ids match case-insensitively, exactly,
 * then by alias, then without a date or version suffix, then without a `provider/` prefix.
 */
export interface ModelCatalogue {
  /** The model `id` names, or undefined. */
  lookup(id: string): ModelInfo | undefined;
  /** The model `id` names; throws `ConfigError` `model.unknown` naming near matches otherwise. */
  require(id: string): ModelInfo;
  /** Every model, built-in ones first. */
  list(): readonly ModelInfo[];
}

/** Costs of one call in USD. */
export interface CallCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

const priceSchema = z.number().finite().nonnegative();
const tokensSchema = z.number().int().positive();
const overrideSchema = z.strictObject({
  id: z.string().min(1).optional(),
  provider: z.string().min(1).optional(),
  format: z.enum(MODEL_FORMATS).optional(),
  contextWindow: tokensSchema.optional(),
  maxOutputTokens: tokensSchema.optional(),
  pricing: z
    .strictObject({
      inputPerMTok: priceSchema.optional(),
      outputPerMTok: priceSchema.optional(),
      cacheReadPerMTok: priceSchema.optional(),
      cacheWritePerMTok: priceSchema.optional(),
    })
    .optional(),
  tokenizer: z.enum(TOKENIZERS).optional(),
  reasoning: z.boolean().optional(),
  openWeights: z.boolean().optional(),
  aliases: z.array(z.string().trim().min(1)).optional(),
  retires: z.iso.date().optional(),
  replacement: z.string().trim().min(1).optional(),
});
const overridesSchema = z.record(z.string().trim().min(1), overrideSchema);

/** Fields a model not in the built-in table must set. */
const REQUIRED_FOR_NEW = ["provider", "format", "contextWindow", "maxOutputTokens"] as const;

/**
 * A catalogue of the built-in models with `overrides` applied. An override whose key is a built-in
 * id changes that model's fields (pricing merges field by field); a key that only resolves to a
 * built-in model (a dated snapshot, an alias) becomes its own entry inheriting that model's fields;
 * any other key adds a model, which must set provider, format, contextWindow, maxOutputTokens and
 * pricing (tokenizer defaults to `estimate`). Throws `ConfigError` `model.invalid-override` listing
 * every problem with its path (`models["gpt-4.1"].pricing.inputPerMTok`).
 */
export function createModelCatalogue(
  overrides: Record<string, ModelOverride> = {},
): ModelCatalogue {
  const builtIn = buildIndex(BUILT_IN_MODELS);
  const models = applyOverrides(builtIn, overrides);
  const index = buildIndex(models);
  const lookup = (id: string): ModelInfo | undefined => resolve(index, id);
  return {
    lookup,
    require(id) {
      const found = lookup(id);
      if (found) return found;
      const near = nearMatches(index, id);
      throw new ConfigError(
        "model.unknown",
        `Unknown model "${id}"${near.length > 0 ? ` (did you mean ${near.map((n) => `"${n}"`).join(", ")}?)` : ""}`,
        {
          hint: `Add it to the configuration under ${configPath(id.trim().toLowerCase())} with provider, format, contextWindow, maxOutputTokens and pricing`,
          details: { model: id, nearMatches: near },
        },
      );
    },
    list: () => models,
  };
}

/**
 * The cost of a call in USD. `usage.inputTokens` includes cached tokens, so uncached input is
 * `inputTokens − cacheReadTokens − cacheWriteTokens` (never below zero). Cache reads and writes
 * without a price of their own cost the input price; reasoning tokens are part of output.
 */
export function costOf(usage: Usage, model: ModelInfo): CallCost {
  const { pricing } = model;
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const perToken = (perMTok: number) => perMTok / 1_000_000;
  const input = uncached * perToken(pricing.inputPerMTok);
  const output = usage.outputTokens * perToken(pricing.outputPerMTok);
  const cacheRead =
    usage.cacheReadTokens * perToken(pricing.cacheReadPerMTok ?? pricing.inputPerMTok);
  const cacheWrite =
    usage.cacheWriteTokens * perToken(pricing.cacheWritePerMTok ?? pricing.inputPerMTok);
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite };
}

/** How full the context window was: `inputTokens / contextWindow` (1 means full). */
export function pressureRatio(usage: Pick<Usage, "inputTokens">, model: ModelInfo): number {
  return usage.inputTokens / model.contextWindow;
}

interface Index {
  models: readonly ModelInfo[];
  byId: Map<string, ModelInfo>;
  byAlias: Map<string, ModelInfo>;
}

function buildIndex(models: readonly ModelInfo[]): Index {
  const byId = new Map<string, ModelInfo>();
  const byAlias = new Map<string, ModelInfo>();
  for (const model of models) {
    byId.set(model.id, model);
    for (const alias of model.aliases ?? []) byAlias.set(alias, model);
  }
  return { models, byId, byAlias };
}

function resolve(index: Index, id: string): ModelInfo | undefined {
  for (const candidate of candidates(id)) {
    const found = index.byId.get(candidate) ?? index.byAlias.get(candidate);
    if (found) return found;
  }
  return undefined;
}

/**
 * Names to try for `raw`, best first: as given; without a Bedrock prefix and version suffix
 * (`us.anthropic.…-v1:0`); without a date or `-latest` suffix; Claude versions with dots written
 * with dashes (`claude-sonnet-4.5`, as OpenRouter spells them). Then the same for each shorter
 * form without a leading `provider/` segment, and for the base model of an OpenAI fine-tune.
 */
function candidates(raw: string): string[] {
  let id = raw.trim().toLowerCase();
  const fineTune = /^ft:([^:]+):/.exec(id);
  if (fineTune?.[1]) id = fineTune[1];
  const out: string[] = [];
  const segments = id.split("/");
  for (let i = 0; i < segments.length; i++) {
    const base = segments.slice(i).join("/");
    if (base === "") continue;
    const unprefixed = base
      .replace(/^(?:[a-z]{2,4}\.)?anthropic\./, "")
      .replace(/-v\d+(?::\d+)?$/, "");
    const undated = unprefixed
      .replace(/:latest$/, "")
      .replace(/(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$/, "");
    const dashed = undated.startsWith("claude-")
      ? undated.replace(/(\d)\.(\d)/g, "$1-$2")
      : undated;
    for (const name of [base, unprefixed, undated, dashed]) if (!out.includes(name)) out.push(name);
  }
  return out;
}

function nearMatches(index: Index, raw: string): string[] {
  const id = raw.trim().toLowerCase();
  const scored: { id: string; score: number }[] = [];
  for (const model of index.models) {
    let best = Number.POSITIVE_INFINITY;
    for (const name of [model.id, ...(model.aliases ?? [])]) {
      const score = name.includes(id) || id.includes(name) ? 0.5 : distance(id, name);
      best = Math.min(best, score);
    }
    if (best <= Math.max(2, Math.floor(id.length / 3))) scored.push({ id: model.id, score: best });
  }
  scored.sort((a, b) => a.score - b.score || a.id.localeCompare(b.id));
  return scored.slice(0, 3).map((entry) => entry.id);
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function applyOverrides(builtIn: Index, raw: unknown): readonly ModelInfo[] {
  const parsed = overridesSchema.safeParse(raw);
  if (!parsed.success) {
    throw invalidOverride(
      parsed.error.issues.map((issue) => ({
        path: overridePath(issue.path.map(String)),
        message: issue.message,
      })),
    );
  }
  const models = new Map<string, ModelInfo>(builtIn.models.map((model) => [model.id, model]));
  const issues: { path: string; message: string }[] = [];
  for (const [rawKey, override] of Object.entries(parsed.data)) {
    const key = rawKey.trim().toLowerCase();
    if (override.id !== undefined && override.id.trim().toLowerCase() !== key) {
      issues.push({ path: overridePath([rawKey, "id"]), message: `must be "${key}" or absent` });
      continue;
    }
    const base = builtIn.byId.get(key) ?? resolve(builtIn, key);
    const inherited = base && base.id !== key ? { ...base, aliases: undefined } : base;
    if (!inherited) {
      for (const field of REQUIRED_FOR_NEW) {
        if (override[field] === undefined) {
          issues.push({ path: overridePath([rawKey, field]), message: requiredMessage(key) });
        }
      }
      for (const field of ["inputPerMTok", "outputPerMTok"] as const) {
        if (override.pricing?.[field] === undefined) {
          issues.push({
            path: overridePath([rawKey, "pricing", field]),
            message: requiredMessage(key),
          });
        }
      }
    }
    const merged = merge(key, inherited, override);
    if (merged.maxOutputTokens > merged.contextWindow) {
      issues.push({
        path: overridePath([rawKey, "maxOutputTokens"]),
        message: `${merged.maxOutputTokens} exceeds the context window (${merged.contextWindow})`,
      });
    }
    models.set(key, merged);
  }
  if (issues.length > 0) throw invalidOverride(issues);
  return Object.freeze([...models.values()]);
}

function merge(id: string, base: ModelInfo | undefined, override: ModelOverride): ModelInfo {
  const { pricing, aliases, ...fields } = override;
  const model: ModelInfo = {
    tokenizer: "estimate",
    ...base,
    ...stripUndefined(fields),
    id,
    pricing: { ...base?.pricing, ...stripUndefined(pricing ?? {}) } as ModelPricing,
  } as ModelInfo;
  const allAliases = aliases ?? base?.aliases;
  if (allAliases) model.aliases = allAliases.map((alias) => alias.trim().toLowerCase());
  else delete model.aliases;
  Object.freeze(model.pricing);
  if (model.aliases) Object.freeze(model.aliases);
  return Object.freeze(model);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as Partial<T>;
}

function requiredMessage(id: string): string {
  return `required: "${id}" is not a built-in model`;
}

function invalidOverride(issues: { path: string; message: string }[]): ConfigError {
  return new ConfigError(
    "model.invalid-override",
    `Invalid model configuration: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
    {
      hint: "Correct these fields under `models` in the configuration (prices are USD per million tokens)",
      details: { issues },
    },
  );
}

/** `models.<key>.<field>…`, with keys that are not plain words quoted (`models["gpt-4.1"]`). */
function overridePath(path: readonly string[]): string {
  return path.reduce((out, part) => {
    if (/^\d+$/.test(part)) return `${out}[${part}]`;
    return /^[A-Za-z_][\w-]*$/.test(part) ? `${out}.${part}` : `${out}[${JSON.stringify(part)}]`;
  }, "models");
}

function configPath(id: string): string {
  return `\`${overridePath([id])}\``;
}
