import type { z } from "zod";

/** One problem found in a feed definition or manifest: a path into the input and what is wrong. */
export interface FeedIssue {
  /** The id of the feed the issue is in, when known. */
  feed?: string;
  path: readonly (string | number)[];
  message: string;
}

/**
 * Writes a path the way the manifest reads: `context_feeds[2].source.params.path`. An empty path
 * is `(manifest)`.
 */
export function formatIssuePath(path: readonly (string | number)[]): string {
  if (path.length === 0) return "(manifest)";
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${part}`,
    )
    .join("");
}

/**
 * The message of an unknown-keys issue, `unknown field "x": <tail>` (the tail says what the fields
 * are). The keys are in the message itself, so it stays precise whoever formats the issue;
 * `zodFeedIssues` splits it into one issue per key.
 */
export function unknownFields(keys: readonly string[], tail: string): string {
  const names = keys.map((key) => JSON.stringify(key)).join(", ");
  return `unknown field${keys.length === 1 ? "" : "s"} ${names}: ${tail}`;
}

/**
 * Turns a zod error into feed issues under `prefix`. An unknown-keys issue becomes one issue per
 * key, pointing at the key itself, so every message names the exact field.
 */
export function zodFeedIssues(
  error: z.ZodError,
  prefix: readonly (string | number)[],
): FeedIssue[] {
  const issues: FeedIssue[] = [];
  for (const issue of error.issues) {
    const path = [
      ...prefix,
      ...issue.path.map((part) => (typeof part === "number" ? part : String(part))),
    ];
    if (issue.code === "unrecognized_keys") {
      const prefix = unknownFields(issue.keys, "");
      const tail = issue.message.startsWith(prefix)
        ? issue.message.slice(prefix.length)
        : undefined;
      for (const key of issue.keys) {
        const message = tail === undefined ? issue.message : unknownFields([key], tail);
        issues.push({ path: [...path, key], message });
      }
    } else {
      issues.push({ path, message: issue.message });
    }
  }
  return issues;
}

/** Issues as one line: `path: message; path: message`. */
export function describeIssues(issues: readonly FeedIssue[]): string {
  return issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`).join("; ");
}

/** A short, single-line rendering of an input value for messages (never more than 60 characters). */
export function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
