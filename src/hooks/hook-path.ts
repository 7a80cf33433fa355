/** One step of a payload path: a field name or a list index. */
export type PathSegment = string | number;

const FIELD = /^[A-Za-z_][A-Za-z0-9_-]*/;
const INDEX = /^\[(\d+)\]/;

/**
 * Parses a dotted path with `[n]` indexes (`error.details.attempts[0].code`) into its segments.
 * A path starts with a field; fields are letters, digits, `_` and `-` (not starting with a
 * digit). Returns `undefined` for anything else (an empty path, `a..b`, `a[x]`, a trailing dot).
 */
export function parsePath(text: string): PathSegment[] | undefined {
  const segments: PathSegment[] = [];
  let rest = text;
  let first = true;
  while (rest.length > 0) {
    const index = INDEX.exec(rest);
    if (index && !first) {
      segments.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    if (!first) {
      if (!rest.startsWith(".")) return undefined;
      rest = rest.slice(1);
    }
    const field = FIELD.exec(rest);
    if (!field) return undefined;
    segments.push(field[0]);
    rest = rest.slice(field[0].length);
    first = false;
  }
  return segments.length > 0 ? segments : undefined;
}

/** What reading a path found: the value, or that the path does not exist. */
export type PathLookup = { found: true; value: unknown } | { found: false };

/**
 * Reads `segments` out of `value`. A field exists when the value is a mapping that has it as its
 * own property with a value other than `undefined` (`null` exists); an index exists when the
 * value is a list that long. Never throws; never reads inherited properties.
 */
export function readPath(value: unknown, segments: readonly PathSegment[]): PathLookup {
  let current = value;
  for (const segment of segments) {
    if (typeof segment === "number") {
      if (!Array.isArray(current) || segment >= current.length) return { found: false };
      current = current[segment];
    } else {
      if (!isMapping(current) || !Object.hasOwn(current, segment)) return { found: false };
      current = current[segment];
    }
    if (current === undefined) return { found: false };
  }
  return { found: true, value: current };
}

/** True for a plain mapping (an object that is not a list and not `null`). */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A problem at a field of a hook, `path` relative to where the checked value sits. */
export interface FieldIssue {
  path: PathSegment[];
  message: string;
}
