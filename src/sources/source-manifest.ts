import { z } from "zod";
import { createGlobMatcher, parseAllowHosts } from "../tools/index.js";
import { checkSourceEntry } from "./source-definition.js";
import { type SourceIssue, sourceConfigError, zodSourceIssues } from "./source-issues.js";
import { SOURCE_KINDS, type SourceDefinition, type SourceKind } from "./source-types.js";

/** The top-level keys of an agent manifest that `parseSourceManifest` reads. */
export const SOURCE_MANIFEST_KEYS = ["sources", "source_actions"] as const;

/** What the model may do with internal actions (source.add/pause/resume/remove/recall). */
export interface SourceActionsPolicy {
  /** False (the default): the model may not add, pause, resume, remove or recall sources. */
  enabled: boolean;
  /** The kinds `source.add` may add (every kind but `browser` when `source_actions` enables it without `kinds`). */
  kinds: SourceKind[];
  /**
   * Paths beyond the workspace a file or dataset source may read: a path (itself and everything
   * under it) or a glob (`/var/log/**`); relative ones are resolved against the workspace.
   */
  allowPaths: string[];
  /** Hosts a network source may reach, as `http.fetch` writes them (`127.0.0.1:*`, `*.example.com`). */
  allowHosts: string[];
}

/** The source sections of an agent manifest, validated. */
export interface SourceManifest {
  /** The declared sources, in manifest order. */
  definitions: SourceDefinition[];
  actions: SourceActionsPolicy;
}

/** The policy when `source_actions` is absent: the model may do nothing with sources. */
export const NO_SOURCE_ACTIONS: SourceActionsPolicy = Object.freeze({
  enabled: false,
  kinds: [],
  allowPaths: [],
  allowHosts: [],
}) as SourceActionsPolicy;

const actionsSchema = z.strictObject(
  {
    enabled: z.boolean({ error: "must be true or false, e.g. enabled: true" }).optional(),
    kinds: z
      .array(
        z.enum(SOURCE_KINDS, {
          error: `must be one of ${SOURCE_KINDS.join(", ")}, e.g. kinds: [file, http]`,
        }),
        { error: "must be a list of kinds, e.g. kinds: [file, http]" },
      )
      .optional(),
    allow_paths: z
      .array(z.string().trim().min(1, 'must not be empty, e.g. "logs/**"'), {
        error: 'must be a list of paths or globs, e.g. allow_paths: ["logs/**"]',
      })
      .optional(),
    allow_hosts: z
      .array(z.string({ error: 'must be a host, e.g. "127.0.0.1:*"' }), {
        error: 'must be a list of hosts, e.g. allow_hosts: ["127.0.0.1:*", "*.example.com"]',
      })
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "unknown field"
        : "must be a mapping, e.g. source_actions: { enabled: true, kinds: [file] }",
  },
);

/**
 * Parses the source sections of an agent manifest (already read from YAML): `sources`, a list of
 * definitions (see `checkSourceEntry`), and `source_actions`, what the model may do with them
 * (disabled when absent). Both may be absent or null.
 *
 * Throws one `ConfigError` (`config.sources`) listing every issue as `<path>: <message>` where
 * the path reads as the manifest does (`sources[1].batch.max_lines`) and the message says how to
 * fix it with an example; `details.issues` holds them structured. Duplicate ids, regular
 * expressions that do not compile (with the engine's message), unknown fields (with the nearest
 * known name), malformed hosts and globs are each an issue.
 */
export function parseSourceManifest(raw: {
  sources?: unknown;
  source_actions?: unknown;
}): SourceManifest {
  const issues: SourceIssue[] = [];
  const definitions = parseDefinitions(raw.sources, issues);
  const actions = parseActions(raw.source_actions, issues);
  if (issues.length > 0) throw sourceConfigError(issues);
  return { definitions, actions };
}

function parseDefinitions(sources: unknown, issues: SourceIssue[]): SourceDefinition[] {
  if (sources === undefined || sources === null) return [];
  if (!Array.isArray(sources)) {
    issues.push({
      path: ["sources"],
      message:
        "must be a list of sources, e.g. sources: [{ id: app-log, kind: file, target: logs/app.log }]",
    });
    return [];
  }
  const definitions: SourceDefinition[] = [];
  const seen = new Map<string, number>();
  sources.forEach((entry: unknown, index) => {
    const checked = checkSourceEntry(entry, ["sources", index]);
    if (checked.issues) issues.push(...checked.issues);
    const id = (entry as { id?: unknown } | null)?.id;
    if (typeof id === "string") {
      const first = seen.get(id);
      if (first !== undefined) {
        issues.push({
          source: id,
          path: ["sources", index, "id"],
          message: `"${id}" is already the id of sources[${first}]; ids must be unique, e.g. id: ${id}-2`,
        });
        return;
      }
      seen.set(id, index);
    }
    if (checked.definition) definitions.push(checked.definition);
  });
  return definitions;
}

function parseActions(section: unknown, issues: SourceIssue[]): SourceActionsPolicy {
  if (section === undefined || section === null) return { ...NO_SOURCE_ACTIONS, kinds: [] };
  const parsed = actionsSchema.safeParse(section);
  if (!parsed.success) issues.push(...zodSourceIssues(parsed.error, ["source_actions"]));
  const { allow_paths: rawPaths, allow_hosts: rawHosts } = (section ?? {}) as {
    allow_paths?: unknown;
    allow_hosts?: unknown;
  };
  checkPatterns(rawPaths, rawHosts, issues);
  if (!parsed.success) return { ...NO_SOURCE_ACTIONS, kinds: [] };
  return {
    enabled: parsed.data.enabled ?? true,
    // A browser source is the agent's own browser's events: declared by `browser:`, not added.
    kinds: [...(parsed.data.kinds ?? SOURCE_KINDS.filter((kind) => kind !== "browser"))],
    allowPaths: parsed.data.allow_paths ?? [],
    allowHosts: parsed.data.allow_hosts ?? [],
  };
}

/** Issues of allow_paths globs that do not compile and allow_hosts entries that are not hosts. */
function checkPatterns(allowPaths: unknown, allowHosts: unknown, issues: SourceIssue[]) {
  const strings = (value: unknown) =>
    Array.isArray(value)
      ? value.flatMap((entry, index) => (typeof entry === "string" ? [{ entry, index }] : []))
      : [];
  for (const { entry, index } of strings(allowPaths)) {
    try {
      createGlobMatcher(entry);
    } catch (error) {
      issues.push({
        path: ["source_actions", "allow_paths", index],
        message: `is not a usable glob (${(error as Error).message}); write a path or a glob, e.g. "logs/**"`,
      });
    }
  }
  for (const { entry, index } of strings(allowHosts)) {
    try {
      parseAllowHosts([entry], "source_actions.allow_hosts");
    } catch {
      issues.push({
        path: ["source_actions", "allow_hosts", index],
        message: `"${entry}" is not a host; write a host, optionally with *. before and :port or :* after, e.g. "127.0.0.1:*" or "*.example.com"`,
      });
    }
  }
}
