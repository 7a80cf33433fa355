import { z } from "zod";
import { deepMerge } from "./deep-merge.js";
import { type DirectiveLimits, MODEL_TIERS, type ModelTier } from "./directive.js";
import { isItemName } from "./item-files.js";
import { itemConfigError, yamlIssues } from "./item-issues.js";
import type { ItemSource } from "./item-source.js";
import { readYamlItem } from "./yaml-item.js";

/** The limits a `summary_limit_overrides` entry may set on a summarizer run. */
export type SummaryLimits = Pick<
  DirectiveLimits,
  "maxTurns" | "maxTokens" | "maxSpendUsd" | "maxWallSeconds"
>;

/** The budgets of one summarizer (`summarizers.<name>`), each over the global value. */
export interface SummarizerBudget {
  /** Tokens its summary may take; absent: the global `summaryMaxTokens`. */
  summaryMaxTokens?: number;
  /** Tokens of summary plus trailing messages its continuation starts with; absent: the global. */
  resumeCeilingTokens?: number;
}

/**
 * The handoff settings of `coordination.yaml` (`coordination.continuation`), with defaults
 * filled in. Read by the continuity module; `selectSummarizer` picks from them.
 */
export interface ContinuationConfig {
  /** Context pressure (input tokens / window) at which a thread hands off. Default 0.9. */
  triggerThreshold: number;
  /**
   * Context pressure at which the summary starts being computed in the background, so that it is
   * ready at `triggerThreshold`; the built-in `default_compaction` hook reads it. Default 0.8. At
   * or above `triggerThreshold` nothing is computed ahead.
   */
  precomputeThreshold: number;
  /** The summarizer directive when nothing more specific is chosen. Default `thread_summary`. */
  summaryDirective: string;
  /** Summarizer directive by the name of the directive a thread runs. Default none. */
  summaryDirectiveOverrides: Record<string, string>;
  /** Limits by summarizer directive name, in place of that directive's own `<limits>`. */
  summaryLimitOverrides: Record<string, SummaryLimits>;
  /** The tier the summary runs on. Default `fast`. */
  summaryModel: ModelTier;
  /** Tokens of summary plus trailing messages a continuation starts with. Default 16000. */
  resumeCeilingTokens: number;
  /** Tokens a summary may take. Default 4000. */
  summaryMaxTokens: number;
  /** Budgets by summarizer directive name, over `summaryMaxTokens` and `resumeCeilingTokens`. */
  summarizers: Record<string, SummarizerBudget>;
}

/**
 * The coordination settings in force: every tier's `coordination.yaml` merged (`deepMerge`,
 * project over user over built-in), with defaults for what none of them sets.
 */
export interface CoordinationConfig {
  continuation: ContinuationConfig;
  /** The coordination files merged, lowest precedence (built-in) first. */
  sources: ItemSource[];
}

/** The defaults of `ContinuationConfig` when no tier sets a key. */
export const CONTINUATION_DEFAULTS: Readonly<ContinuationConfig> = Object.freeze({
  triggerThreshold: 0.9,
  precomputeThreshold: 0.8,
  summaryDirective: "thread_summary",
  summaryDirectiveOverrides: {},
  summaryLimitOverrides: {},
  summaryModel: "fast",
  resumeCeilingTokens: 16000,
  summaryMaxTokens: 4000,
  summarizers: {},
});

const HINT = "Fix each field named; docs/directives.md describes coordination.yaml";

const CONTINUATION_KEYS = [
  "trigger_threshold",
  "precompute_threshold",
  "summary_directive",
  "summary_model",
  "summary_directive_overrides",
  "summary_limit_overrides",
  "resume_ceiling_tokens",
  "summary_max_tokens",
  "summarizers",
].join(", ");

const positiveWhole = (field: string, example: number) =>
  z
    .number({ error: `${field} must be a whole number, e.g. ${field}: ${example}` })
    .int(`${field} must be a whole number, e.g. ${field}: ${example}`)
    .positive(`${field} must be at least 1`);

const fraction = (example: number) =>
  z
    .number({ error: `must be a number between 0 and 1, e.g. ${example}` })
    .gt(0, "must be more than 0")
    .lte(1, "must be at most 1");

const directiveName = z
  .string({ error: "must be a directive name, e.g. thread_summary" })
  .refine(isItemName, "must be a directive name (letters, digits, _ . -, / between folders)");

const limitsSchema = z.strictObject(
  {
    max_turns: positiveWhole("max_turns", 3).optional(),
    max_tokens: positiveWhole("max_tokens", 8192).optional(),
    max_spend: z
      .number({ error: "max_spend must be US dollars, e.g. max_spend: 0.05" })
      .nonnegative("max_spend must be 0 or more")
      .optional(),
    max_wall_seconds: z
      .number({ error: "max_wall_seconds must be seconds, e.g. max_wall_seconds: 60" })
      .positive("max_wall_seconds must be more than 0")
      .optional(),
  },
  { error: "limits are max_turns, max_tokens, max_spend, max_wall_seconds" },
);

const budgetSchema = z.strictObject(
  {
    summary_max_tokens: positiveWhole("summary_max_tokens", 4000).optional(),
    resume_ceiling_tokens: positiveWhole("resume_ceiling_tokens", 16000).optional(),
  },
  { error: "a summarizer's budgets are summary_max_tokens, resume_ceiling_tokens" },
);

const continuationSchema = z.strictObject(
  {
    trigger_threshold: fraction(0.9).optional(),
    precompute_threshold: fraction(0.8).optional(),
    summary_directive: directiveName.optional(),
    summary_directive_overrides: z
      .record(directiveName, directiveName, {
        error:
          "must map directive names to summarizer directives, e.g. { browser: browser_summary }",
      })
      .optional(),
    summary_limit_overrides: z
      .record(directiveName, limitsSchema, {
        error:
          "must map summarizer directives to limits, e.g. { thread_summary: { max_turns: 2 } }",
      })
      .optional(),
    summary_model: z.enum(MODEL_TIERS, { error: "must be fast, general or high" }).optional(),
    resume_ceiling_tokens: positiveWhole("resume_ceiling_tokens", 16000).optional(),
    summary_max_tokens: positiveWhole("summary_max_tokens", 4000).optional(),
    summarizers: z
      .record(directiveName, budgetSchema, {
        error:
          "must map summarizer directives to budgets, e.g. { x: { summary_max_tokens: 2000 } }",
      })
      .optional(),
  },
  { error: `continuation has ${CONTINUATION_KEYS}` },
);

const coordinationSchema = z.strictObject(
  {
    coordination: z
      .strictObject(
        { continuation: continuationSchema.optional() },
        { error: "coordination has continuation" },
      )
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "coordination.yaml has coordination (check the spelling)"
        : "coordination.yaml must be a mapping: coordination: { continuation: { … } }",
  },
);

/** One tier's `coordination.yaml`, validated but not merged: the data as written. */
export type CoordinationLayer = z.output<typeof coordinationSchema>;

/**
 * Validates the YAML of one `coordination.yaml` (every key optional; an empty file is an empty
 * layer). Throws one `ConfigError` (`config.coordination`) listing every problem as
 * `file:line: field: message`.
 */
export function parseCoordinationLayer(text: string, display: string): CoordinationLayer {
  const { document, counter, data } = readYamlItem(text, display, "config.coordination", HINT);
  const parsed = coordinationSchema.safeParse(data ?? {});
  if (!parsed.success) {
    throw itemConfigError(
      "config.coordination",
      display,
      yamlIssues(parsed.error, document, counter),
      HINT,
    );
  }
  return parsed.data;
}

/**
 * Merges coordination layers, lowest precedence first (built-in, user, project), by `deepMerge`
 * (so the maps merge key by key, and a higher tier's entry for a summarizer merges onto a lower
 * one's), and fills in `CONTINUATION_DEFAULTS`. Pure; never throws.
 */
export function mergeCoordinationLayers(
  layers: readonly { layer: CoordinationLayer; source: ItemSource }[],
): CoordinationConfig {
  let merged: CoordinationLayer = {};
  for (const { layer } of layers) merged = deepMerge(merged, layer) as CoordinationLayer;
  const continuation = merged.coordination?.continuation ?? {};
  const defaults = CONTINUATION_DEFAULTS;
  return {
    continuation: {
      triggerThreshold: continuation.trigger_threshold ?? defaults.triggerThreshold,
      precomputeThreshold: continuation.precompute_threshold ?? defaults.precomputeThreshold,
      summaryDirective: continuation.summary_directive ?? defaults.summaryDirective,
      summaryDirectiveOverrides: { ...continuation.summary_directive_overrides },
      summaryLimitOverrides: mapValues(continuation.summary_limit_overrides, toLimits),
      summaryModel: continuation.summary_model ?? defaults.summaryModel,
      resumeCeilingTokens: continuation.resume_ceiling_tokens ?? defaults.resumeCeilingTokens,
      summaryMaxTokens: continuation.summary_max_tokens ?? defaults.summaryMaxTokens,
      summarizers: mapValues(continuation.summarizers, toBudget),
    },
    sources: layers.map(({ source }) => source),
  };
}

function toLimits(limits: z.output<typeof limitsSchema>): SummaryLimits {
  return {
    ...(limits.max_turns !== undefined ? { maxTurns: limits.max_turns } : {}),
    ...(limits.max_tokens !== undefined ? { maxTokens: limits.max_tokens } : {}),
    ...(limits.max_spend !== undefined ? { maxSpendUsd: limits.max_spend } : {}),
    ...(limits.max_wall_seconds !== undefined ? { maxWallSeconds: limits.max_wall_seconds } : {}),
  };
}

function toBudget(budget: z.output<typeof budgetSchema>): SummarizerBudget {
  return {
    ...(budget.summary_max_tokens !== undefined
      ? { summaryMaxTokens: budget.summary_max_tokens }
      : {}),
    ...(budget.resume_ceiling_tokens !== undefined
      ? { resumeCeilingTokens: budget.resume_ceiling_tokens }
      : {}),
  };
}

function mapValues<T, U>(
  record: Record<string, T> | undefined,
  map: (value: T) => U,
): Record<string, U> {
  const result: Record<string, U> = {};
  for (const [key, value] of Object.entries(record ?? {})) result[key] = map(value);
  return result;
}
