import { z } from "zod";
import { type ModelInfoSetting, PROVIDER_NAMES, type ProviderName } from "../providers/index.js";
import { deepMerge } from "./deep-merge.js";
import { MODEL_TIERS, type ModelTier } from "./directive.js";
import { itemConfigError, yamlIssues } from "./item-issues.js";
import type { ItemSource } from "./item-source.js";
import { readYamlItem } from "./yaml-item.js";

/** Defaults of one tool for every agent (`tools` in `config.yaml`), merged by `id`. */
export interface ToolDefaults {
  /** False switches the tool off unless an agent manifest switches it on. Default true. */
  enabled: boolean;
  /** Every other key of the entry, for the tool to read; a manifest's options override them. */
  options: Record<string, unknown>;
}

/**
 * The configuration in force: every tier's `config.yaml` merged (`deepMerge`, project over user
 * over built-in), with defaults for what none of them sets.
 */
export interface SpaceConfig {
  /** The concrete model of each tier, per provider. */
  models: Record<ModelTier, Partial<Record<ProviderName, string>>>;
  policy: {
    /**
     * Whether unsigned project and user items are refused. True when any tier sets it: a project
     * cannot switch off what the user's config switched on.
     */
    requireSignatures: boolean;
  };
  /** Tool defaults by tool id. */
  tools: Record<string, ToolDefaults>;
  /** HTTP services the agent may call as relics (`<id>.request`), merged by id across tiers. */
  relics: HttpRelicConfig[];
  /**
   * What config.yaml says of models by id (`model_info:`), merged key by key across tiers: their
   * context window, output limit and prices. A window here wins over the server's answer and the
   * catalogue; only `SPOOL_CONTEXT_WINDOW` wins over it.
   */
  modelInfo: Record<string, ModelInfoSetting>;
  /** The config files merged, lowest precedence (built-in) first. */
  sources: ItemSource[];
}

/** One `relics` entry of config.yaml: an HTTP service relic. */
export interface HttpRelicConfig {
  id: string;
  type: "http";
  baseUrl: string;
  allowedHosts: string[];
  headers: Record<string, string>;
}

const HINT = "Fix each field named; docs/directives.md describes config.yaml";

const TOKENS = "must be a whole number of tokens, e.g. 32768";
const PRICE = "must be USD per million tokens, e.g. 0.5";

/** One `model_info:` entry: a model's limits and prices, every field optional. */
const modelInfoSchema = z
  .strictObject(
    {
      context_window: z
        .number({ error: TOKENS })
        .int(TOKENS)
        .min(1024, "must be 1024 tokens or more")
        .optional(),
      max_output_tokens: z.number({ error: TOKENS }).int(TOKENS).positive(TOKENS).optional(),
      input_price: z.number({ error: PRICE }).finite().nonnegative(PRICE).optional(),
      output_price: z.number({ error: PRICE }).finite().nonnegative(PRICE).optional(),
      cached_price: z.number({ error: PRICE }).finite().nonnegative(PRICE).optional(),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? "a model_info entry has context_window, max_output_tokens, input_price, output_price, cached_price (check the spelling)"
          : "must map a model id to { context_window, max_output_tokens, input_price, output_price, cached_price }",
    },
  )
  .refine(
    (entry) =>
      entry.context_window === undefined ||
      entry.max_output_tokens === undefined ||
      entry.max_output_tokens <= entry.context_window,
    { message: "max_output_tokens must not exceed context_window", path: ["max_output_tokens"] },
  );

const COORDINATION_MOVED =
  "coordination moved to its own file: put this block, with the same keys (coordination: { continuation: … }), in coordination.yaml beside this config.yaml, and remove it here";

const configSchema = z.strictObject(
  {
    models: z
      .partialRecord(
        z.enum(MODEL_TIERS, { error: "a tier is fast, general or high" }),
        z
          .partialRecord(
            z.enum(PROVIDER_NAMES, { error: `a provider is one of ${PROVIDER_NAMES.join(", ")}` }),
            z.string({ error: "must be a model id, e.g. claude-haiku-4-5" }).min(1),
            {
              error: (issue) =>
                issue.code === "invalid_type"
                  ? "must map providers to models, e.g. { anthropic: claude-haiku-4-5 }"
                  : `a provider is one of ${PROVIDER_NAMES.join(", ")}`,
            },
          )
          .nullable(),
        {
          error: (issue) =>
            issue.code === "invalid_type"
              ? "must map tiers to providers' models, e.g. fast: { anthropic: claude-haiku-4-5 }"
              : "a tier is fast, general or high",
        },
      )
      .optional(),
    policy: z
      .strictObject(
        { require_signatures: z.boolean({ error: "must be true or false" }).optional() },
        { error: "policy has require_signatures (check the spelling)" },
      )
      .optional(),
    tools: z
      .array(
        z
          .object({
            id: z
              .string({
                error: "each tool default needs an id (the tool's name), e.g. id: http.fetch",
              })
              .min(1),
            enabled: z.boolean({ error: "must be true or false" }).optional(),
          })
          .catchall(z.unknown()),
        { error: "must be a list of { id: <tool>, …options }" },
      )
      .optional(),
    relics: z
      .array(
        z.strictObject(
          {
            id: z
              .string({ error: "each relic needs an id, e.g. id: weather" })
              .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, "must be a name of letters, digits, _ and -"),
            type: z.literal("http", { error: 'the built-in relic type here is "http"' }),
            base_url: z.url({ error: "must be an http(s) URL, e.g. https://api.example.com/v1" }),
            allowed_hosts: z.array(z.string()).optional(),
            headers: z.record(z.string(), z.string()).optional(),
          },
          { error: "a relic has id, type, base_url, allowed_hosts, headers" },
        ),
        { error: "must be a list of { id, type: http, base_url }" },
      )
      .optional(),
    model_info: z
      .record(z.string().trim().min(1, "a model id"), modelInfoSchema, {
        error: 'must map model ids to their limits, e.g. "llama3.2": { context_window: 8192 }',
      })
      .optional(),
    // Moved to its own item: say where, rather than "unknown field".
    coordination: z.never({ error: COORDINATION_MOVED }).optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "config.yaml has models, model_info, policy, tools, relics (check the spelling)"
        : "config.yaml must be a mapping with models, model_info, policy, tools, relics",
  },
);

/** One tier's `config.yaml`, validated but not merged: the data as written. */
export type ConfigLayer = z.output<typeof configSchema>;

/**
 * Validates the YAML of one `config.yaml` (every section optional). Throws one `ConfigError`
 * (`config.space`) listing every problem as `file:line: field: message`.
 */
export function parseConfigLayer(text: string, display: string): ConfigLayer {
  const { document, counter, data } = readYamlItem(text, display, "config.space", HINT);
  const parsed = configSchema.safeParse(data ?? {});
  if (!parsed.success) {
    throw itemConfigError(
      "config.space",
      display,
      yamlIssues(parsed.error, document, counter),
      HINT,
    );
  }
  return parsed.data;
}

/**
 * Merges config layers, lowest precedence first (built-in, user, project), by `deepMerge`, and
 * fills in defaults. `policy.require_signatures` is the OR of the layers. Pure.
 */
export function mergeConfigLayers(
  layers: readonly { layer: ConfigLayer; source: ItemSource }[],
): SpaceConfig {
  let merged: ConfigLayer = {};
  for (const { layer } of layers) merged = deepMerge(merged, layer) as ConfigLayer;
  const tools: Record<string, ToolDefaults> = {};
  for (const { id, enabled, ...options } of merged.tools ?? []) {
    tools[id] = { enabled: enabled ?? true, options };
  }
  return {
    models: {
      fast: { ...merged.models?.fast },
      general: { ...merged.models?.general },
      high: { ...merged.models?.high },
    },
    policy: {
      requireSignatures: layers.some(({ layer }) => layer.policy?.require_signatures === true),
    },
    tools,
    relics: (merged.relics ?? []).map((relic) => ({
      id: relic.id,
      type: relic.type,
      baseUrl: relic.base_url,
      allowedHosts: relic.allowed_hosts ?? [],
      headers: relic.headers ?? {},
    })),
    modelInfo: Object.fromEntries(
      Object.entries(merged.model_info ?? {}).map(([id, entry]) => [id, modelInfoSetting(entry)]),
    ),
    sources: layers.map(({ source }) => source),
  };
}

function modelInfoSetting(entry: z.output<typeof modelInfoSchema>): ModelInfoSetting {
  return {
    ...(entry.context_window !== undefined ? { contextWindow: entry.context_window } : {}),
    ...(entry.max_output_tokens !== undefined ? { maxOutputTokens: entry.max_output_tokens } : {}),
    ...(entry.input_price !== undefined ? { inputPerMTok: entry.input_price } : {}),
    ...(entry.output_price !== undefined ? { outputPerMTok: entry.output_price } : {}),
    ...(entry.cached_price !== undefined ? { cachedPerMTok: entry.cached_price } : {}),
  };
}

/**
 * The concrete model for `tier` on `provider`: `id` when given (a directive's or manifest's
 * explicit model wins), else the config's map, else `undefined` (the provider's default model).
 */
export function modelFor(
  config: Pick<SpaceConfig, "models">,
  tier: ModelTier,
  provider: ProviderName,
  id?: string,
): string | undefined {
  return id ?? config.models[tier][provider];
}
