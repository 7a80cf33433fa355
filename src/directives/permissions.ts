import { SpoolError } from "../spec/index.js";

/** The action kinds a directive's `<permissions><execute>` can grant. */
export const PERMISSION_KINDS = ["tool", "agent", "relic", "workflow", "llm"] as const;

/** One of `PERMISSION_KINDS`: the `type` of an `<action>`, less `internal`. */
export type PermissionKind = (typeof PERMISSION_KINDS)[number];

/**
 * What a directive may execute: name patterns per action kind, as written in
 * `<permissions><execute><tool>fs.*</tool>…</execute></permissions>`. An empty list grants
 * nothing; a directive without `<permissions>` may execute nothing.
 *
 * Internal actions (`<action type="internal">`: context feeds, variables) are not governed here
 * but by the agent manifest's `internal_actions` section (see `src/actions`'
 * `internalActionRefusal`).
 */
export type Permissions = Readonly<Record<PermissionKind, readonly string[]>>;

/** Permissions that grant nothing. */
export const NO_PERMISSIONS: Permissions = Object.freeze({
  tool: [],
  agent: [],
  relic: [],
  workflow: [],
  llm: [],
});

const patternCache = new Map<string, RegExp>();

/**
 * The regular expression of a name pattern: `*` matches any run of characters except `/`, `**`
 * matches anything (`/` included), `?` one character except `/`; everything else is literal.
 * So `fs.*` matches `fs.read` and `fs.read.lines` but not `fs/read`; `rye/agent/**` matches every
 * name under `rye/agent/`; `*` matches every name without a `/`.
 */
export function globToRegExp(pattern: string): RegExp {
  const cached = patternCache.get(pattern);
  if (cached) return cached;
  let source = "";
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "*" && pattern[index + 1] === "*") {
      source += ".*";
      index++;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += char.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  const expression = new RegExp(`^${source}$`, "s");
  if (patternCache.size < 1000) patternCache.set(pattern, expression);
  return expression;
}

/** True when `name` matches the glob `pattern` (see `globToRegExp`). */
export function matchesGlob(pattern: string, name: string): boolean {
  return globToRegExp(pattern).test(name);
}

/**
 * Whether `permissions` let a directive execute the `type` action `name`: true when any pattern
 * listed for `type` matches. Pure; never throws.
 */
export function permits(permissions: Permissions, type: PermissionKind, name: string): boolean {
  return permissions[type].some((pattern) => matchesGlob(pattern, name));
}

/**
 * Why `directive` may not execute `type` `name`, and the permission to add:
 * `directive "x" may not run tool "http.fetch": add <tool>http.fetch</tool> (or <tool>http.*</tool>)
 * inside <permissions><execute> in its file`. For messages to the model and the user.
 */
export function deniedMessage(directive: string, type: PermissionKind, name: string): string {
  const dot = Math.max(name.lastIndexOf("."), name.lastIndexOf("/"));
  const family = dot > 0 ? `${name.slice(0, dot + 1)}*` : undefined;
  const alternative = family ? ` (or <${type}>${family}</${type}> for the whole family)` : "";
  return `directive "${directive}" may not run ${type} "${name}": add <${type}>${name}</${type}>${alternative} inside <permissions><execute> in its file`;
}

/** A directive tried to execute something its `<permissions>` do not grant. */
export class PermissionDeniedError extends SpoolError {
  /** The action kind refused. */
  readonly kind: PermissionKind;
  /** The name refused. */
  readonly target: string;

  constructor(directive: string, kind: PermissionKind, target: string) {
    super("permission.denied", deniedMessage(directive, kind, target), {
      details: { directive, kind, name: target },
    });
    this.kind = kind;
    this.target = target;
  }
}

/**
 * Throws `PermissionDeniedError` unless `permissions` grant `type` `name` (see `permits`).
 * `directive` is the directive's name, for the message.
 */
export function checkPermission(
  directive: { name: string; permissions: Permissions },
  type: PermissionKind,
  name: string,
): void {
  if (!permits(directive.permissions, type, name)) {
    throw new PermissionDeniedError(directive.name, type, name);
  }
}
