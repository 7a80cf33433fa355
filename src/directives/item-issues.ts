import { homedir } from "node:os";
import { isAbsolute, relative, sep } from "node:path";
import type { Document, LineCounter } from "yaml";
import type { z } from "zod";
import { formatIssuePath, locateYamlPath } from "../feeds/index.js";
import { ConfigError } from "../spec/index.js";

/** One problem in an item file: where it is, which field, and what is wrong (with the fix). */
export interface ItemIssue {
  /** 1-based line in the file; absent when the problem has no position (an empty file). */
  line?: number;
  /** The field as the file writes it: `<limits max_turns="ten">`, `tools[2].name`. */
  field: string;
  message: string;
}

/** Codes of the errors the item loaders raise for a malformed file. */
export type ItemConfigErrorCode =
  | "config.directive"
  | "config.agent"
  | "config.space"
  | "config.coordination"
  | "config.hook";

/**
 * The `ConfigError` for a malformed item file: every issue as `file:line: field: message`,
 * joined with `; `, and `details.issues` holding them structured. Never carries a stack trace
 * worth showing: the message is the whole story.
 */
export function itemConfigError(
  code: ItemConfigErrorCode,
  file: string,
  issues: readonly ItemIssue[],
  hint: string,
): ConfigError {
  const text = issues
    .map(
      (issue) => `${file}${issue.line ? `:${issue.line}` : ""}: ${issue.field}: ${issue.message}`,
    )
    .join("; ");
  return new ConfigError(code, text, {
    hint,
    details: { file, issues: issues.map((issue) => ({ ...issue })) },
  });
}

/**
 * How a path is shown in messages: relative to the workspace when inside it (`.ai/directives/x.md`),
 * `~/…` under the home directory, otherwise absolute.
 */
export function displayPath(path: string, workspace?: string, home: string = homedir()): string {
  if (workspace) {
    const inside = relative(workspace, path);
    if (inside && !inside.startsWith("..") && !isAbsolute(inside)) return inside;
  }
  const underHome = relative(home, path);
  if (underHome && !underHome.startsWith("..") && !isAbsolute(underHome)) {
    return `~${sep}${underHome}`;
  }
  return path;
}

/**
 * Turns a zod error over YAML data into item issues, each located in `document` (line of the
 * field, or of the deepest existing parent for a missing one). An unknown-keys issue becomes one
 * issue per key, located at the key, as `unknown field: <the schema's message>` (so a strict
 * object's message should list the fields there are).
 */
export function yamlIssues(
  error: z.ZodError,
  document: Document,
  counter: LineCounter,
  prefix: readonly (string | number)[] = [],
): ItemIssue[] {
  const issues: ItemIssue[] = [];
  const push = (path: (string | number)[], message: string) =>
    issues.push(yamlIssue(document, counter, path, message));
  for (const issue of error.issues) {
    const path = [
      ...prefix,
      ...issue.path.map((part) => (typeof part === "number" ? part : String(part))),
    ];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) push([...path, key], `unknown field: ${issue.message}`);
    } else {
      push(path, issue.message);
    }
  }
  return issues;
}

/** One issue at `path` of a YAML `document`, located at the field (or its deepest parent). */
export function yamlIssue(
  document: Document,
  counter: LineCounter,
  path: readonly (string | number)[],
  message: string,
): ItemIssue {
  const position = locateYamlPath(document, counter, path);
  return { ...(position ? { line: position.line } : {}), field: formatIssuePath(path), message };
}
