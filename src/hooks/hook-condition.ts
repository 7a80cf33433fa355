import { isDeepStrictEqual } from "node:util";
import { type FieldIssue, isMapping, type PathSegment, parsePath, readPath } from "./hook-path.js";

/** The comparison operators of a condition leaf. */
export const CONDITION_OPS = [
  "eq",
  "ne",
  "gt",
  "gte",
  "lt",
  "lte",
  "in",
  "contains",
  "regex",
  "exists",
] as const;

/** One comparison operator (see `CONDITION_OPS`; docs/hooks.md gives their semantics). */
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** A leaf: the value at `path` in the event's payload compared with `value` by `op`. */
export interface ConditionLeaf {
  /** The path as written (`error.details.attempts[0].code`). */
  path: string;
  /** The parsed path. */
  segments: PathSegment[];
  op: ConditionOp;
  /** The operand; for `exists`, whether the path should exist (default true). */
  value: unknown;
  /** The compiled regular expression of a `regex` leaf (compiled once, at load). */
  pattern?: RegExp;
}

/**
 * A compiled condition: a leaf, or `any`/`all` of conditions, or `not` of one, nested freely.
 * Built by `compileCondition`, which has checked every operand, so evaluating never throws.
 */
export type HookCondition =
  | ConditionLeaf
  | { any: HookCondition[] }
  | { all: HookCondition[] }
  | { not: HookCondition };

const SHAPE =
  "a condition is { path, op, value }, { any: [conditions] }, { all: [conditions] } or { not: condition }";
const LEAF_KEYS = ["path", "op", "value"];
const NUMERIC: ReadonlySet<ConditionOp> = new Set(["gt", "gte", "lt", "lte"]);

/**
 * Compiles a condition as written in a hook file. Every problem is returned as an issue at its
 * path (relative to the condition), with what to write instead: an unknown op, an operand of the
 * wrong type, a path that does not parse, a regular expression that does not compile. Returns
 * `condition` only when there is no issue. Never throws.
 */
export function compileCondition(raw: unknown): {
  condition?: HookCondition;
  issues: FieldIssue[];
} {
  const issues: FieldIssue[] = [];
  const condition = compileNode(raw, [], issues);
  return issues.length === 0 && condition ? { condition, issues } : { issues };
}

function compileNode(
  raw: unknown,
  at: PathSegment[],
  issues: FieldIssue[],
): HookCondition | undefined {
  if (!isMapping(raw)) {
    issues.push({ path: at, message: `must be a mapping: ${SHAPE}` });
    return undefined;
  }
  const keys = Object.keys(raw);
  const combinators = keys.filter((key) => key === "any" || key === "all" || key === "not");
  if (combinators.length > 0) {
    if (keys.length !== 1) {
      const other = keys.find((key) => key !== combinators[0]);
      issues.push({
        path: [...at, other ?? combinators[0]!],
        message: `unknown field: ${combinators[0]} stands alone in its mapping (${SHAPE})`,
      });
      return undefined;
    }
    const key = combinators[0] as "any" | "all" | "not";
    if (key === "not") {
      const inner = compileNode(raw.not, [...at, "not"], issues);
      return inner && { not: inner };
    }
    const list = raw[key];
    if (!Array.isArray(list) || list.length === 0) {
      issues.push({ path: [...at, key], message: `must be a list of at least one condition` });
      return undefined;
    }
    const children = list.map((child, index) => compileNode(child, [...at, key, index], issues));
    if (children.some((child) => child === undefined)) return undefined;
    return key === "any"
      ? { any: children as HookCondition[] }
      : { all: children as HookCondition[] };
  }
  return compileLeaf(raw, at, issues);
}

function compileLeaf(
  raw: Record<string, unknown>,
  at: PathSegment[],
  issues: FieldIssue[],
): ConditionLeaf | undefined {
  const before = issues.length;
  for (const key of Object.keys(raw)) {
    if (!LEAF_KEYS.includes(key)) {
      issues.push({ path: [...at, key], message: `unknown field: ${SHAPE}` });
    }
  }
  const segments = typeof raw.path === "string" ? parsePath(raw.path) : undefined;
  if (!segments) {
    issues.push({
      path: [...at, "path"],
      message:
        raw.path === undefined
          ? "is missing: name a field of the event, e.g. path: pressure_ratio"
          : "must be a dotted path with [n] indexes, e.g. error.details.attempts[0].code",
    });
  }
  const op = raw.op;
  if (!CONDITION_OPS.includes(op as ConditionOp)) {
    issues.push({
      path: [...at, "op"],
      message: `${op === undefined ? "is missing" : "is unknown"}: op is one of ${CONDITION_OPS.join(", ")}`,
    });
    return undefined;
  }
  const leafOp = op as ConditionOp;
  const has = Object.hasOwn(raw, "value") && raw.value !== undefined;
  const value = raw.value;
  const bad = (message: string) => issues.push({ path: [...at, "value"], message });
  let pattern: RegExp | undefined;
  if (leafOp === "exists") {
    if (has && typeof value !== "boolean") bad("must be true or false for exists (default true)");
  } else if (!has) {
    bad(`is missing: ${leafOp} compares the path with a value, e.g. value: ${example(leafOp)}`);
  } else if (NUMERIC.has(leafOp) && (typeof value !== "number" || !Number.isFinite(value))) {
    bad(`must be a number for ${leafOp}, e.g. value: 0.8`);
  } else if (leafOp === "in" && !Array.isArray(value)) {
    bad("must be a list for in: the path's value is one of them, e.g. value: [a, b]");
  } else if (leafOp === "regex") {
    if (typeof value !== "string") {
      bad("must be a regular expression as text, e.g. value: '^rate_limit'");
    } else {
      try {
        pattern = new RegExp(value);
      } catch (error) {
        bad(`is not a valid regular expression: ${(error as Error).message}`);
      }
    }
  }
  if (issues.length > before || !segments) return undefined;
  return {
    path: raw.path as string,
    segments,
    op: leafOp,
    value: leafOp === "exists" ? (has ? value : true) : value,
    ...(pattern ? { pattern } : {}),
  };
}

function example(op: ConditionOp): string {
  if (op === "in") return "[a, b]";
  if (op === "contains") return "timeout";
  return "true";
}

/**
 * Evaluates `condition` against an event's `payload`. A path that does not exist makes a leaf
 * false, except `exists` (true when `value` is false) and `ne` (true). `eq`/`ne`/`in` and
 * `contains` on lists compare deeply; `contains` on text is a substring test; `regex` tests
 * text only; `gt`/`gte`/`lt`/`lte` are false unless the path holds a number. Pure; never throws.
 */
export function evaluateCondition(condition: HookCondition, payload: unknown): boolean {
  if ("any" in condition) return condition.any.some((child) => evaluateCondition(child, payload));
  if ("all" in condition) return condition.all.every((child) => evaluateCondition(child, payload));
  if ("not" in condition) return !evaluateCondition(condition.not, payload);
  const found = readPath(payload, condition.segments);
  const { op, value } = condition;
  if (op === "exists") return found.found === (value !== false);
  if (!found.found) return op === "ne";
  const actual = found.value;
  switch (op) {
    case "eq":
      return isDeepStrictEqual(actual, value);
    case "ne":
      return !isDeepStrictEqual(actual, value);
    case "in":
      return Array.isArray(value) && value.some((item) => isDeepStrictEqual(actual, item));
    case "contains":
      if (typeof actual === "string") return typeof value === "string" && actual.includes(value);
      return Array.isArray(actual) && actual.some((item) => isDeepStrictEqual(item, value));
    case "regex":
      return typeof actual === "string" && (condition.pattern?.test(actual) ?? false);
    default:
      return compareNumbers(op, actual, value);
  }
}

function compareNumbers(op: ConditionOp, actual: unknown, value: unknown): boolean {
  if (typeof actual !== "number" || typeof value !== "number") return false;
  if (Number.isNaN(actual)) return false;
  if (op === "gt") return actual > value;
  if (op === "gte") return actual >= value;
  if (op === "lt") return actual < value;
  return actual <= value;
}
