import { z } from "zod";
import { type FeedEnv, type FeedManifest, parseFeedManifest } from "../feeds/index.js";
import { PROVIDER_NAMES, type ProviderName } from "../providers/index.js";
import { ConfigError } from "../spec/index.js";
import { type DirectiveLimits, MODEL_TIERS, type ModelTier } from "./directive.js";
import { type ItemIssue, itemConfigError, yamlIssue, yamlIssues } from "./item-issues.js";
import { sha256Hex } from "./item-signing.js";
import type { ItemSource, ItemTier } from "./item-source.js";
import { readYamlItem } from "./yaml-item.js";

/** One entry of a manifest's `tools`: a name or glob, whether it is on, and the tool's options. */
export interface ToolSetting {
  /** A tool name or glob (`fs.*`, see `globToRegExp`). */
  pattern: string;
  /** False switches matching tools off (a later entry wins over an earlier one). */
  enabled: boolean;
  /** Every other key of the entry (`allow_hosts`, `timeout_seconds`, …), for the tool to read. */
  options: Record<string, unknown>;
}

/**
 * A parsed agent manifest (`agents/<name>.yaml`): which directive the agent runs, with which
 * tools, feeds, internal actions, model and limits.
 */
export interface AgentManifest {
  /** The agent's name: its file name without `.yaml`. */
  name: string;
  /** The directive it runs (a name resolved through the item spaces). */
  directive: string;
  description?: string;
  /** Overrides of the directive's model: a tier, a concrete model id, a provider. */
  model?: { tier?: ModelTier; id?: string; provider?: ProviderName };
  /** Limits that tighten the directive's (the smaller of the two applies; see `effectiveLimits`). */
  limits: DirectiveLimits;
  /** Default values of the directive's inputs (coerced when the run starts, `checkInputs`). */
  inputs: Record<string, unknown>;
  /** The tools entries in file order; empty when the manifest has no `tools`. */
  tools: ToolSetting[];
  /** `context_feeds`, `internal_actions` and `feed_environment`, as `parseFeedManifest` reads them. */
  feeds: FeedManifest;
  /** `sources` and `source_actions` as written, for the sources module to validate. */
  sources: ManifestSourceSections;
  /**
   * The `browser` section as written (absent when the manifest has none), for the browser module
   * to validate; its issues are reported through `sources.issues` (paths like `browser.viewport`).
   */
  browser?: unknown;
  /**
   * The `watch` section as written (absent when the manifest has none): the stream-watch settings
   * (docs/stream-watch.md), for the frames module to migrate and validate.
   */
  watch?: unknown;
  /**
   * The `mcp` entry as written (absent when the manifest has none): the MCP servers the agent
   * uses (`all`, or a list of server names), for the mcp module to resolve against `mcp.json`.
   */
  mcp?: unknown;
  source: ItemSource;
}

/**
 * An agent manifest's `sources` and `source_actions`, as the YAML has them (absent when it lacks
 * them). The sources module sits above this one, so the composition root (`src/app`) validates
 * them (`parseSourceManifest`) and reports each issue at its line (`issues`).
 */
export interface ManifestSourceSections {
  sources?: unknown;
  source_actions?: unknown;
  /**
   * A `ConfigError` (`config.agent`) of the manifest file listing `found` (each a path as the
   * manifest reads it, `sources[1].batch.max_lines`, and a message) at their lines.
   */
  issues(found: readonly { path: string; message: string }[]): ConfigError;
}

/** Options of `parseAgentManifest`. */
export interface ParseAgentManifestOptions {
  /** The agent's name (its file name without `.yaml`). */
  name: string;
  /** The file's absolute path. */
  path: string;
  /** How the path is shown in messages; default `path`. */
  display?: string;
  /** Default `project`. */
  tier?: ItemTier;
  /** sha256 of the file's bytes; default computed from `text`. */
  sha256?: string;
  signed?: { keyId: string };
  /** Where `${VAR}` in feed parameters is read from; default `process.env`. */
  env?: FeedEnv;
}

const HINT = "Fix each field named; docs/directives.md describes agent manifests";
const FEED_SECTIONS = ["context_feeds", "internal_actions", "feed_environment"];
/** The sections the sources module reads (`SOURCE_MANIFEST_KEYS` there). */
const SOURCE_SECTIONS = ["sources", "source_actions"] as const;

const wholeNumber = (field: string, min: number, example: number) =>
  z
    .number({ error: `${field} must be a whole number, e.g. ${field}: ${example}` })
    .int(`${field} must be a whole number, e.g. ${field}: ${example}`)
    .min(min, `${field} must be at least ${min}, e.g. ${field}: ${example}`);

const manifestSchema = z.strictObject(
  {
    directive: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? "is missing: name the directive the agent runs, e.g. directive: assistant"
            : "must be a directive name, e.g. directive: assistant",
      })
      .trim()
      .min(1, "must name a directive, e.g. directive: assistant"),
    description: z.string({ error: "must be text" }).optional(),
    model: z
      .strictObject(
        {
          tier: z
            .enum(MODEL_TIERS, { error: "must be fast, general or high, e.g. tier: fast" })
            .optional(),
          id: z
            .string({ error: "must be a model id, e.g. id: claude-haiku-4-5" })
            .min(1)
            .optional(),
          provider: z
            .enum(PROVIDER_NAMES, { error: `must be one of ${PROVIDER_NAMES.join(", ")}` })
            .optional(),
        },
        { error: "model has tier, id, provider (check the spelling)" },
      )
      .optional(),
    limits: z
      .strictObject(
        {
          max_turns: wholeNumber("max_turns", 1, 10).optional(),
          max_tokens: wholeNumber("max_tokens", 1, 200000).optional(),
          max_spend: z
            .number({ error: "max_spend must be an amount of US dollars, e.g. max_spend: 0.5" })
            .min(0, "max_spend must be 0 or more")
            .optional(),
          max_wall_seconds: z
            .number({ error: "max_wall_seconds must be a number, e.g. max_wall_seconds: 600" })
            .positive("max_wall_seconds must be more than 0")
            .optional(),
          max_spawn_depth: wholeNumber("max_spawn_depth", 0, 2).optional(),
        },
        {
          error:
            "limits has max_turns, max_tokens, max_spend, max_wall_seconds, max_spawn_depth (check the spelling)",
        },
      )
      .optional(),
    inputs: z
      .record(z.string(), z.unknown(), { error: "must be a mapping of input name to value" })
      .optional(),
    tools: z
      .array(z.unknown(), { error: "must be a list of tool names, globs or mappings" })
      .optional(),
    context_feeds: z.unknown().optional(),
    internal_actions: z.unknown().optional(),
    feed_environment: z.unknown().optional(),
    sources: z.unknown().optional(),
    source_actions: z.unknown().optional(),
    browser: z.unknown().optional(),
    watch: z.unknown().optional(),
    mcp: z.unknown().optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "an agent manifest has directive, description, model, limits, inputs, tools, context_feeds, internal_actions, feed_environment, sources, source_actions, browser, watch, mcp (check the spelling)"
        : "an agent manifest must be a mapping, e.g. directive: assistant",
  },
);

const toolObjectSchema = z
  .object({
    name: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? 'is missing: a tool mapping names its tool, e.g. { name: "http.fetch", allow_hosts: [example.com] }'
            : "must be a tool name or glob",
      })
      .trim()
      .min(1, "must be a tool name or glob"),
    enabled: z.boolean({ error: "must be true or false" }).optional(),
    allow_hosts: z
      .array(z.string().min(1), { error: "must be a list of host names, e.g. [example.com]" })
      .optional(),
  })
  .catchall(z.unknown());

/**
 * Parses an agent manifest's YAML. The feed sections are read by `parseFeedManifest` (so they
 * follow docs/feeds.md exactly); the rest is validated here. Throws one `ConfigError`
 * (`config.agent`) listing every problem as `file:line: field: what is wrong and how to fix it`.
 */
export function parseAgentManifest(
  text: string,
  options: ParseAgentManifestOptions,
): AgentManifest {
  const file = options.display ?? options.path;
  const { document, counter, data } = readYamlItem(text, file, "config.agent", HINT);
  const issues: ItemIssue[] = [];
  const parsed = manifestSchema.safeParse(data ?? {});
  if (!parsed.success) issues.push(...yamlIssues(parsed.error, document, counter));
  const tools: ToolSetting[] = [];
  const rawTools = isRecord(data) && Array.isArray(data.tools) ? (data.tools as unknown[]) : [];
  rawTools.forEach((entry, index) => {
    if (typeof entry === "string") {
      if (entry.trim() === "") {
        issues.push(yamlIssue(document, counter, ["tools", index], "must be a tool name or glob"));
      } else tools.push({ pattern: entry.trim(), enabled: true, options: {} });
      return;
    }
    const tool = toolObjectSchema.safeParse(entry);
    if (!tool.success) {
      issues.push(...yamlIssues(tool.error, document, counter, ["tools", index]));
      return;
    }
    const { name, enabled, ...rest } = tool.data;
    tools.push({ pattern: name, enabled: enabled ?? true, options: rest });
  });
  let feeds: FeedManifest | undefined;
  const hasFeeds = isRecord(data) && FEED_SECTIONS.some((key) => Object.hasOwn(data, key));
  try {
    feeds = parseFeedManifest(hasFeeds ? text : {}, {
      ...(options.env ? { env: options.env } : {}),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...feedIssues(error));
  }
  if (issues.length > 0 || !parsed.success || !feeds) {
    issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw itemConfigError("config.agent", file, issues, HINT);
  }
  const manifest = parsed.data;
  const sections: Record<string, unknown> = {};
  for (const key of SOURCE_SECTIONS) {
    if (isRecord(data) && data[key] !== undefined && data[key] !== null) sections[key] = data[key];
  }
  const sources: ManifestSourceSections = {
    ...sections,
    issues: (found) =>
      itemConfigError(
        "config.agent",
        file,
        found
          .map((issue) => ({
            ...yamlIssue(document, counter, issuePath(issue.path), ""),
            field: issue.path,
            message: issue.message,
          }))
          .sort((a, b) => (a.line ?? 0) - (b.line ?? 0)),
        HINT,
      ),
  };
  return {
    name: options.name,
    directive: manifest.directive,
    ...(manifest.description ? { description: manifest.description } : {}),
    ...(manifest.model ? { model: manifest.model } : {}),
    limits: {
      ...(manifest.limits?.max_turns !== undefined ? { maxTurns: manifest.limits.max_turns } : {}),
      ...(manifest.limits?.max_tokens !== undefined
        ? { maxTokens: manifest.limits.max_tokens }
        : {}),
      ...(manifest.limits?.max_spend !== undefined
        ? { maxSpendUsd: manifest.limits.max_spend }
        : {}),
      ...(manifest.limits?.max_wall_seconds !== undefined
        ? { maxWallSeconds: manifest.limits.max_wall_seconds }
        : {}),
      ...(manifest.limits?.max_spawn_depth !== undefined
        ? { maxSpawnDepth: manifest.limits.max_spawn_depth }
        : {}),
    },
    inputs: manifest.inputs ?? {},
    tools,
    feeds,
    sources,
    ...(isRecord(data) && data.browser !== undefined && data.browser !== null
      ? { browser: data.browser }
      : {}),
    ...(isRecord(data) && data.watch !== undefined && data.watch !== null
      ? { watch: data.watch }
      : {}),
    ...(isRecord(data) && data.mcp !== undefined && data.mcp !== null ? { mcp: data.mcp } : {}),
    source: {
      path: options.path,
      tier: options.tier ?? "project",
      sha256: options.sha256 ?? sha256Hex(text),
      ...(options.signed ? { signed: { ...options.signed } } : {}),
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A path as a manifest reads it (`sources[1].batch.max_lines`), as segments. */
function issuePath(path: string): (string | number)[] {
  return [...path.matchAll(/\[(\d+)\]|[^.[\]]+/g)].map((match) =>
    match[1] !== undefined ? Number(match[1]) : match[0],
  );
}

/** The issues of `parseFeedManifest`'s error, in the item format. */
function feedIssues(error: ConfigError): ItemIssue[] {
  const listed = error.details.issues;
  if (!Array.isArray(listed)) {
    const line = typeof error.details.line === "number" ? error.details.line : undefined;
    return [{ ...(line ? { line } : {}), field: "context_feeds", message: error.message }];
  }
  return listed.map(
    (entry: { path?: unknown; message?: unknown; line?: unknown; feed?: unknown }) => ({
      ...(typeof entry.line === "number" ? { line: entry.line } : {}),
      field: String(entry.path ?? "context_feeds"),
      message: `${String(entry.message)}${typeof entry.feed === "string" ? ` (feed "${entry.feed}"; docs/feeds.md)` : " (docs/feeds.md)"}`,
    }),
  );
}
