/** The environment `${VAR}` references read from (injected; `process.env` by default upstream). */
export type FeedEnv = Readonly<Record<string, string | undefined>>;

/** A problem found while expanding: where (a path into the value) and what. */
export interface ExpansionIssue {
  path: (string | number)[];
  message: string;
}

const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const NAME_WITH_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/**
 * Expands `${NAME}` and `${NAME:-default}` in one string from `env`.
 *
 * Rules: `${NAME}` is the variable's value (an empty value stays empty); an unset variable is
 * reported in `missing` unless `unsetAsEmpty` is true; `${NAME:-default}` uses `default` when
 * the variable is unset or empty; `$${` writes a literal `${`; a bare `$NAME` is left alone
 * (that is the protocol's own variable syntax, resolved later). Anything else inside `${…}` is
 * reported in `invalid`. Never throws.
 */
export function expandEnvString(
  text: string,
  env: FeedEnv,
  unsetAsEmpty = false,
): { value: string; missing: string[]; invalid: string[] } {
  const missing: string[] = [];
  const invalid: string[] = [];
  const value = text.replace(REFERENCE, (whole, inner: string | undefined) => {
    if (inner === undefined) return "${";
    const match = NAME_WITH_DEFAULT.exec(inner);
    if (!match) {
      invalid.push(whole);
      return whole;
    }
    const name = match[1]!;
    const fallback = match[2];
    const current = Object.hasOwn(env, name) ? env[name] : undefined;
    if (fallback !== undefined) return current === undefined || current === "" ? fallback : current;
    if (current === undefined) {
      if (!unsetAsEmpty) missing.push(name);
      return "";
    }
    return current;
  });
  return { value, missing, invalid };
}

/**
 * Expands every string inside `value` (objects and arrays are walked; keys, numbers and
 * booleans are left as they are). Returns a new value and one issue per unset or malformed
 * reference, with the path (relative to `value`) of the string that held it.
 */
export function expandEnvValue(
  value: unknown,
  env: FeedEnv,
  path: (string | number)[] = [],
): { value: unknown; issues: ExpansionIssue[] } {
  const issues: ExpansionIssue[] = [];
  const walk = (item: unknown, at: (string | number)[]): unknown => {
    if (typeof item === "string") {
      const result = expandEnvString(item, env);
      for (const name of result.missing) {
        issues.push({
          path: at,
          message: `\${${name}} is not set; set ${name} in the environment or write \${${name}:-default}`,
        });
      }
      for (const reference of result.invalid) {
        issues.push({
          path: at,
          message: `${reference} is not an environment reference; write \${NAME} or \${NAME:-default} (or $\${ for a literal \${)`,
        });
      }
      return result.value;
    }
    if (Array.isArray(item)) return item.map((entry, index) => walk(entry, [...at, index]));
    if (item !== null && typeof item === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(item)) out[key] = walk(entry, [...at, key]);
      return out;
    }
    return item;
  };
  return { value: walk(value, path), issues };
}

const FALSE_WORDS = new Set(["", "0", "false", "no", "off"]);

/**
 * The truthiness rule of `enabled`: a boolean is itself; a string is expanded with unset
 * variables as empty, trimmed and lower-cased, and is false when it is `""`, `"0"`, `"false"`,
 * `"no"` or `"off"`; every other string is true. So `enabled: "${DEBUG_MODE}"` turns a feed on
 * exactly when `DEBUG_MODE` is set to something other than those words.
 */
export function isEnabledFlag(flag: boolean | string, env: FeedEnv): boolean {
  if (typeof flag === "boolean") return flag;
  const { value } = expandEnvString(flag, env, true);
  return !FALSE_WORDS.has(value.trim().toLowerCase());
}
