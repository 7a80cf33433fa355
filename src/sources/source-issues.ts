import type { z } from "zod";
import { formatIssuePath } from "../feeds/index.js";
import { ConfigError, nearestName } from "../spec/index.js";

/** One problem found in a source definition or the source sections of a manifest. */
export interface SourceIssue {
  /** The id of the source the issue is in, when known. */
  source?: string;
  /** The path into the manifest, e.g. `["sources", 1, "batch", "max_lines"]`. */
  path: readonly (string | number)[];
  /** What is wrong and how to fix it, with an example of a right value. */
  message: string;
}

/** The fields of one entry of `sources`. */
export const SOURCE_FIELDS = [
  "id",
  "kind",
  "target",
  "batch",
  "include",
  "exclude",
  "patterns",
  "mode",
  "options",
] as const;

/** The fields of a source's `batch`. */
export const BATCH_FIELDS = ["max_lines", "max_bytes", "max_wait_ms", "max_line_bytes"] as const;

/** The fields of `source_actions`. */
export const SOURCE_ACTION_FIELDS = ["enabled", "kinds", "allow_paths", "allow_hosts"] as const;

/** Which fields a mapping at `path` has, by where it sits in the manifest. */
function fieldsAt(path: readonly (string | number)[]): { what: string; fields: readonly string[] } {
  const last = path.at(-1);
  if (last === "batch") return { what: "batch", fields: BATCH_FIELDS };
  if (last === "source_actions") return { what: "source_actions", fields: SOURCE_ACTION_FIELDS };
  return { what: "a source", fields: SOURCE_FIELDS };
}

/** The message for an unknown field `key` of the mapping at `path`, naming the nearest known one. */
export function unknownFieldMessage(path: readonly (string | number)[], key: string): string {
  const { what, fields } = fieldsAt(path);
  const near = nearestName(key, fields);
  return `unknown field "${key}"${near ? `; did you mean "${near}"?` : ""} (${what} has ${fields.join(", ")})`;
}

/**
 * Turns a zod error into source issues under `prefix`. An unknown-keys issue becomes one issue per
 * key, pointing at the key itself and naming the nearest known field (`taget` → `target`).
 */
export function zodSourceIssues(
  error: z.ZodError,
  prefix: readonly (string | number)[],
  source?: string,
): SourceIssue[] {
  const issues: SourceIssue[] = [];
  const push = (path: (string | number)[], message: string) =>
    issues.push(source === undefined ? { path, message } : { source, path, message });
  for (const issue of error.issues) {
    const path = [
      ...prefix,
      ...issue.path.map((part) => (typeof part === "number" ? part : String(part))),
    ];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) push([...path, key], unknownFieldMessage(path, key));
    } else {
      push(path, issue.message);
    }
  }
  return issues;
}

/**
 * The `ConfigError` (`config.sources`) listing every issue as `<path>: <message> (source "<id>")`,
 * joined by `; `, with `details.issues` holding them structured (`path` written as the manifest
 * reads, `message`, `source?`), as `parseFeedManifest` reports feed issues.
 */
export function sourceConfigError(issues: readonly SourceIssue[], prefix = ""): ConfigError {
  const text = issues
    .map(
      ({ path, message, source }) =>
        `${formatIssuePath(path)}: ${message}${source ? ` (source "${source}")` : ""}`,
    )
    .join("; ");
  return new ConfigError("config.sources", `${prefix}${text}`, {
    hint: "Fix each field named; every message gives an example of a right value",
    details: {
      issues: issues.map(({ path, message, source }) => ({
        path: formatIssuePath(path),
        message,
        ...(source ? { source } : {}),
      })),
    },
  });
}
