import { expandEnvValue, type FeedEnv } from "../feeds/index.js";
import { SpoolError } from "../spec/index.js";
import { checkSourceAccess, type SourceAccess, type SourceAccessPolicy } from "./source-access.js";
import type { SourceIssue } from "./source-issues.js";
import type { SourceDefinition, SourceJson } from "./source-types.js";

/** Header names whose values are credentials. */
const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$|token|secret|password|api[-_]?key/i;
/** Query parameter names whose values are credentials. */
const SECRET_PARAMETER =
  /token|secret|password|passwd|api[-_]?key|^key$|^auth|signature|^sig$|credential/i;

const reference = (value: string) => value.includes("${");

/**
 * The credentials a source entry holds literally: a URL's password, a query parameter or a header
 * that names a secret with a value that is not an environment reference. The definition is logged
 * (`source.added`, `source.started`), so a secret must come from the environment as `${NAME}`,
 * expanded only when the source is opened (`expandSourceEnv`). Never throws.
 */
export function literalSecretIssues(
  entry: { target?: unknown; options?: unknown },
  at: readonly (string | number)[],
): SourceIssue[] {
  const issues: SourceIssue[] = [];
  const advice = (what: string, name: string) =>
    `${what} holds a literal secret, and source definitions are logged: write it as \${${name}} and set ${name} in the environment`;
  if (typeof entry.target === "string" && !reference(entry.target)) {
    const url = URL.canParse(entry.target) ? new URL(entry.target) : undefined;
    if (url?.password) {
      issues.push({
        path: [...at, "target"],
        message: advice("the URL's password", "SOURCE_PASSWORD"),
      });
    }
    for (const [name, value] of url?.searchParams ?? []) {
      if (value !== "" && SECRET_PARAMETER.test(name)) {
        issues.push({
          path: [...at, "target"],
          message: advice(`the query parameter ${name}`, envName(name)),
        });
      }
    }
  }
  const headers = (entry.options as { headers?: unknown } | undefined)?.headers;
  if (headers !== null && typeof headers === "object" && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value === "string" && !reference(value) && SECRET_HEADER.test(name)) {
        issues.push({
          path: [...at, "options", "headers", name],
          message: advice(`the header ${name}`, envName(name)),
        });
      }
    }
  }
  return issues;
}

/** A variable name suggested for a secret named `name`: `SOURCE_X_API_KEY`. */
function envName(name: string): string {
  return `SOURCE_${name.replace(/[^A-Za-z0-9]+/g, "_").toUpperCase()}`;
}

/**
 * `definition` with every `${NAME}` (and `${NAME:-default}`) in its target and options expanded
 * from `env`: what the adapter reads, never what is logged. Throws a `SpoolError`
 * (`source.missing-env`) naming each unset variable and where it is used.
 */
export function expandSourceEnv(definition: SourceDefinition, env: FeedEnv): SourceDefinition {
  const { value, issues } = expandEnvValue(
    { target: definition.target, options: definition.options },
    env,
  );
  if (issues.length > 0) {
    const list = issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new SpoolError("source.missing-env", `source "${definition.id}": ${list}`, {
      hint: "Set the variables in the environment of the process that runs the agent, then resume the source",
    });
  }
  const expanded = value as { target: string; options: { [key: string]: SourceJson } };
  return { ...definition, target: expanded.target, options: expanded.options };
}

/** What a source reads once opened: its definition as the adapter gets it, and its access. */
export interface SourceOpening {
  definition: SourceDefinition;
  access: SourceAccess;
}

/**
 * Where `definition` may read: its `${NAME}`s expanded from `env` when one is given (only for a
 * definition the manifest declares: one the model added could otherwise read a credential out of
 * the environment into a URL of its choosing), then its access checked (`checkSourceAccess`).
 * Throws `source.missing-env` or a `SourceAccessError`, each saying how to fix it.
 */
export function openSourceDefinition(
  definition: SourceDefinition,
  policy: SourceAccessPolicy,
  env?: FeedEnv,
): SourceOpening {
  const opened = env === undefined ? definition : expandSourceEnv(definition, env);
  return { definition: opened, access: checkSourceAccess(opened, policy) };
}
