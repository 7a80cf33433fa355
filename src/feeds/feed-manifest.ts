import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import type { InternalActionsPolicy } from "../actions/index.js";
import { ConfigError, describeError } from "../spec/index.js";
import { expandEnvString, expandEnvValue, type FeedEnv, isEnabledFlag } from "./env-expansion.js";
import type { EnvironmentPolicy } from "./environment-policy.js";
import { type FeedDefinition, feedDefinitionSchema } from "./feed-definition.js";
import { type FeedIssue, formatIssuePath, unknownFields, zodFeedIssues } from "./feed-issues.js";
import { ALLOW_ALL_INTERNAL_ACTIONS } from "./internal-actions-policy.js";
import { locateYamlPath, type TextPosition } from "./yaml-location.js";

/** The feed parts of an agent manifest, validated, with `${ENV}` expanded. */
export interface FeedManifest {
  /** Enabled feeds, in manifest order. */
  feeds: FeedDefinition[];
  /** Ids of feeds whose `enabled` evaluated false (not validated against the environment). */
  disabled: string[];
  /** The `internal_actions` section (every internal action allowed when absent). */
  internalActions: InternalActionsPolicy;
  /** The `feed_environment` section: what the `environment` source may show (nothing when absent). */
  environment: EnvironmentPolicy;
}

/** Options of `parseFeedManifest`. */
export interface ParseFeedManifestOptions {
  /** Where `${VAR}` is read from. Default `process.env`. */
  env?: FeedEnv;
  /** A name for the input in messages, e.g. the file path. */
  source?: string;
}

const envName = z
  .string({ error: "must be an environment variable name" })
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name (letters, digits, _)");
const flag = z.union([z.boolean(), z.string()], {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows a literal ${ENV} example
  error: 'must be true, false, or a string such as "${DEBUG_MODE}"',
});

const internalActionsSchema = z.strictObject(
  {
    enabled: flag.optional(),
    allowed_actions: z.array(z.string(), { error: "must be a list of action names" }).optional(),
    blocked_actions: z.array(z.string(), { error: "must be a list of action names" }).optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(
            issue.keys,
            "internal_actions has enabled, allowed_actions, blocked_actions",
          )
        : "must be a mapping with enabled, allowed_actions, blocked_actions",
  },
);

const environmentSchema = z.strictObject(
  {
    allow: z.array(envName, { error: "must be a list of variable names" }).optional(),
    allow_secrets: z.array(envName, { error: "must be a list of variable names" }).optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, "feed_environment has allow, allow_secrets")
        : "must be a mapping with allow, allow_secrets",
  },
);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Parses the feed sections of an agent manifest, from YAML text or an already-parsed object:
 * `context_feeds` (a list of feed definitions, each with an optional `enabled`),
 * `internal_actions` and `feed_environment`. Other top-level sections are ignored.
 *
 * `${VAR}` and `${VAR:-default}` are expanded from `env` in every string under a feed's
 * `source.params` (an unset variable without a default is an error naming the feed and field);
 * `enabled` follows `isEnabledFlag` (unset counts as empty, so off). A disabled feed is checked
 * for shape but not expanded. Throws one `ConfigError` listing every problem, each as
 * `<path>: <what is wrong> (feed "<id>", line L)`: code `config.feeds.yaml` for text that is
 * not YAML (with line and column), `config.feeds` otherwise.
 */
export function parseFeedManifest(
  input: unknown,
  options: ParseFeedManifestOptions = {},
): FeedManifest {
  const env = options.env ?? process.env;
  const prefix = options.source ? `${options.source}: ` : "";
  let data = input;
  let locate: (path: readonly (string | number)[]) => TextPosition | undefined = () => undefined;
  if (typeof input === "string") {
    const counter = new LineCounter();
    const document = parseDocument(input, { lineCounter: counter, prettyErrors: false });
    const syntax = document.errors[0];
    if (syntax) {
      const { line, col } = counter.linePos(syntax.pos[0]);
      throw new ConfigError(
        "config.feeds.yaml",
        `${prefix}the manifest is not valid YAML: ${syntax.message} (line ${line}, column ${col})`,
        {
          hint: "Fix the YAML at that position",
          details: { line, column: col, yaml: syntax.code },
        },
      );
    }
    try {
      data = document.toJS({ maxAliasCount: 1000 });
    } catch (error) {
      throw new ConfigError(
        "config.feeds.yaml",
        `${prefix}the manifest cannot be read: ${describeError(error)}`,
        { hint: "Simplify the YAML (fewer aliases)", cause: error },
      );
    }
    locate = (path) => locateYamlPath(document, counter, path);
  }

  const issues: FeedIssue[] = [];
  const manifest: FeedManifest = {
    feeds: [],
    disabled: [],
    internalActions: { ...ALLOW_ALL_INTERNAL_ACTIONS },
    environment: { allow: [], allowSecrets: [] },
  };
  if (data === undefined || data === null) return manifest;
  if (!isRecord(data)) {
    issues.push({
      path: [],
      message: "must be a mapping with context_feeds, internal_actions, feed_environment",
    });
  } else {
    parseFeeds(data.context_feeds, env, manifest, issues);
    parseSections(data, env, manifest, issues);
  }
  if (issues.length > 0) {
    const located = issues.map((issue) => ({ ...issue, position: locate(issue.path) }));
    throw new ConfigError(
      "config.feeds",
      `${prefix}${located
        .map(({ path, message, feed, position }) => {
          const where = [feed ? `feed "${feed}"` : "", position ? `line ${position.line}` : ""]
            .filter(Boolean)
            .join(", ");
          return `${formatIssuePath(path)}: ${message}${where ? ` (${where})` : ""}`;
        })
        .join("; ")}`,
      {
        hint: "Fix each field named; docs/feeds.md describes every field",
        details: {
          issues: located.map(({ path, message, feed, position }) => ({
            path: formatIssuePath(path),
            message,
            ...(feed ? { feed } : {}),
            ...(position ? { line: position.line, column: position.column } : {}),
          })),
        },
      },
    );
  }
  return manifest;
}

function parseFeeds(feeds: unknown, env: FeedEnv, manifest: FeedManifest, issues: FeedIssue[]) {
  if (feeds === undefined || feeds === null) return;
  if (!Array.isArray(feeds)) {
    issues.push({ path: ["context_feeds"], message: "must be a list of feeds" });
    return;
  }
  const seen = new Map<string, number>();
  feeds.forEach((entry: unknown, index) => {
    const at = ["context_feeds", index];
    if (!isRecord(entry)) {
      issues.push({ path: at, message: "must be a mapping with id, type, source" });
      return;
    }
    const feed = typeof entry.id === "string" ? entry.id : undefined;
    const push = (issue: FeedIssue) => issues.push(feed ? { ...issue, feed } : issue);
    const { enabled: rawFlag, ...definition } = entry;
    let enabled = true;
    if (rawFlag !== undefined) {
      const parsedFlag = flag.safeParse(rawFlag);
      if (!parsedFlag.success) {
        for (const issue of zodFeedIssues(parsedFlag.error, [...at, "enabled"])) push(issue);
      } else {
        if (typeof parsedFlag.data === "string") {
          for (const reference of expandEnvString(parsedFlag.data, env, true).invalid)
            push({
              path: [...at, "enabled"],
              message: `${reference} is not an environment reference; write \${NAME}`,
            });
        }
        enabled = isEnabledFlag(parsedFlag.data, env);
      }
    }
    if (feed !== undefined) {
      const first = seen.get(feed);
      if (first !== undefined)
        push({
          path: [...at, "id"],
          message: `"${feed}" is already the id of context_feeds[${first}]; feed ids must be unique`,
        });
      else seen.set(feed, index);
    }
    if (enabled && isRecord(definition.source) && isRecord(definition.source.params)) {
      const expanded = expandEnvValue(definition.source.params, env, [...at, "source", "params"]);
      for (const issue of expanded.issues) push(issue);
      definition.source = { ...definition.source, params: expanded.value };
    }
    const parsed = feedDefinitionSchema.safeParse(definition);
    if (!parsed.success) {
      for (const issue of zodFeedIssues(parsed.error, at)) push(issue);
      return;
    }
    if (enabled) manifest.feeds.push(parsed.data);
    else manifest.disabled.push(parsed.data.id);
  });
}

function parseSections(
  data: Record<string, unknown>,
  env: FeedEnv,
  manifest: FeedManifest,
  issues: FeedIssue[],
) {
  if (data.internal_actions !== undefined && data.internal_actions !== null) {
    const parsed = internalActionsSchema.safeParse(data.internal_actions);
    if (!parsed.success) issues.push(...zodFeedIssues(parsed.error, ["internal_actions"]));
    else {
      const policy: InternalActionsPolicy = {
        enabled: parsed.data.enabled === undefined ? true : isEnabledFlag(parsed.data.enabled, env),
      };
      if (parsed.data.allowed_actions) policy.allowedActions = parsed.data.allowed_actions;
      if (parsed.data.blocked_actions) policy.blockedActions = parsed.data.blocked_actions;
      manifest.internalActions = policy;
    }
  }
  if (data.feed_environment !== undefined && data.feed_environment !== null) {
    const parsed = environmentSchema.safeParse(data.feed_environment);
    if (!parsed.success) issues.push(...zodFeedIssues(parsed.error, ["feed_environment"]));
    else
      manifest.environment = {
        allow: parsed.data.allow ?? [],
        allowSecrets: parsed.data.allow_secrets ?? [],
      };
  }
}
