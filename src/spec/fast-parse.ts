import type { z } from "zod";

/** What a fast parser gives for data it cannot vouch for: zod decides (and says why). */
export const NOT_FAST: unique symbol = Symbol("not fast");

/** Parses data the way its zod schema would, for the plain cases, or gives `NOT_FAST`. */
export type FastParse = (value: unknown) => unknown;

/** The parts of a zod v4 schema's definition a fast parser reads. */
interface Def {
  type: string;
  checks?: { _zod: { def: CheckDef } }[];
  shape?: Record<string, Schema>;
  catchall?: Schema;
  innerType?: Schema;
  element?: Schema;
  options?: Schema[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  keyType?: Schema;
  valueType?: Schema;
}

interface CheckDef {
  check: string;
  minimum?: number;
  maximum?: number;
  value?: number;
  inclusive?: boolean;
  format?: string;
  pattern?: RegExp;
}

type Schema = { _zod: { def: Def } };

/**
 * A parser equivalent to `schema.safeParse(value).data` for what it accepts, compiled from the
 * schema's definition, or `undefined` when the schema uses something it does not model (a
 * default, a transform, a refinement, a non-strict object, a string format other than a regex).
 * It accepts only what the schema accepts and gives what zod would: a copy of every object and
 * array it checked (unknown values by reference, as zod does), so a caller that changes its data
 * after an append does not change what is stored. Whatever it does not accept, it leaves to zod
 * (`NOT_FAST`), which also explains the refusal. It exists because validating every event the
 * runtime appends with zod was a tenth of a step's cost.
 */
export function compileFastParse(schema: z.ZodType): FastParse | undefined {
  try {
    return compile(schema as unknown as Schema);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

class Unsupported extends Error {}

function compile(schema: Schema): FastParse {
  const def = schema._zod.def;
  switch (def.type) {
    case "string":
      return stringParser(def);
    case "number":
      return numberParser(def);
    case "boolean":
      noChecks(def);
      return (value) => (typeof value === "boolean" ? value : NOT_FAST);
    case "unknown":
    case "any":
      noChecks(def);
      return (value) => value;
    case "literal": {
      const values = def.values ?? [];
      return (value) => (values.includes(value) ? value : NOT_FAST);
    }
    case "enum": {
      const values = new Set(Object.values(def.entries ?? {}));
      return (value) => (values.has(value) ? value : NOT_FAST);
    }
    case "optional": {
      const inner = compile(def.innerType!);
      return (value) => (value === undefined ? value : inner(value));
    }
    case "nullable": {
      const inner = compile(def.innerType!);
      return (value) => (value === null ? value : inner(value));
    }
    case "array":
      return arrayParser(def);
    case "object":
      return objectParser(def);
    case "record":
      return recordParser(def);
    case "union":
      return unionParser(def);
    default:
      throw new Unsupported(def.type);
  }
}

function noChecks(def: Def): void {
  if (def.checks && def.checks.length > 0) throw new Unsupported(`${def.type} checks`);
}

/** Length bounds of a string or an array, from its checks; any other check is unsupported. */
function lengthBounds(def: Def, allowRegex: boolean) {
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  const patterns: RegExp[] = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === "min_length") min = Math.max(min, c.minimum!);
    else if (c.check === "max_length") max = Math.min(max, c.maximum!);
    else if (c.check === "length_equals") {
      min = Math.max(min, c.value ?? Number.NaN);
      max = Math.min(max, c.value ?? Number.NaN);
    } else if (allowRegex && c.check === "string_format" && c.format === "regex" && c.pattern) {
      patterns.push(c.pattern);
    } else throw new Unsupported(c.check);
  }
  if (Number.isNaN(min) || Number.isNaN(max)) throw new Unsupported("length");
  return { min, max, patterns };
}

function stringParser(def: Def): FastParse {
  const { min, max, patterns } = lengthBounds(def, true);
  return (value) => {
    if (typeof value !== "string" || value.length < min || value.length > max) return NOT_FAST;
    for (const pattern of patterns) {
      pattern.lastIndex = 0;
      if (!pattern.test(value)) return NOT_FAST;
    }
    return value;
  };
}

function numberParser(def: Def): FastParse {
  let integer = false;
  let low = Number.NEGATIVE_INFINITY;
  let lowInclusive = true;
  let high = Number.POSITIVE_INFINITY;
  let highInclusive = true;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === "number_format" && c.format === "safeint") integer = true;
    else if (c.check === "greater_than" && c.value !== undefined) {
      low = c.value;
      lowInclusive = c.inclusive === true;
    } else if (c.check === "less_than" && c.value !== undefined) {
      high = c.value;
      highInclusive = c.inclusive === true;
    } else throw new Unsupported(c.check);
  }
  return (value) => {
    if (typeof value !== "number" || !Number.isFinite(value)) return NOT_FAST;
    if (integer && !Number.isSafeInteger(value)) return NOT_FAST;
    if (lowInclusive ? value < low : value <= low) return NOT_FAST;
    if (highInclusive ? value > high : value >= high) return NOT_FAST;
    return value;
  };
}

function arrayParser(def: Def): FastParse {
  const { min, max } = lengthBounds(def, false);
  const element = compile(def.element!);
  return (value) => {
    if (!Array.isArray(value) || value.length < min || value.length > max) return NOT_FAST;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = element(value[i]);
      if (item === NOT_FAST) return NOT_FAST;
      out[i] = item;
    }
    return out;
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function objectParser(def: Def): FastParse {
  noChecks(def);
  // Only strict objects: a stripping object's output differs from its input.
  if (def.catchall?._zod.def.type !== "never") throw new Unsupported("non-strict object");
  const fields = Object.entries(def.shape ?? {}).map(([key, field]) => ({
    key,
    parse: compile(field),
    optional: field._zod.def.type === "optional",
  }));
  const known = new Set(fields.map((field) => field.key));
  return (value) => {
    if (!isPlainObject(value)) return NOT_FAST;
    for (const key in value) if (!known.has(key)) return NOT_FAST;
    const out: Record<string, unknown> = {};
    for (const { key, parse, optional } of fields) {
      const field = value[key];
      if (field === undefined) {
        if (!optional) return NOT_FAST;
        if (key in value) out[key] = undefined;
        continue;
      }
      const parsed = parse(field);
      if (parsed === NOT_FAST) return NOT_FAST;
      out[key] = parsed;
    }
    return out;
  };
}

function recordParser(def: Def): FastParse {
  noChecks(def);
  const key = compile(def.keyType!);
  const item = compile(def.valueType!);
  return (value) => {
    if (!isPlainObject(value)) return NOT_FAST;
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      if (key(name) === NOT_FAST) return NOT_FAST;
      const parsed = item(value[name]);
      if (parsed === NOT_FAST) return NOT_FAST;
      out[name] = parsed;
    }
    return out;
  };
}

function unionParser(def: Def): FastParse {
  noChecks(def);
  const options = (def.options ?? []).map(compile);
  return (value) => {
    for (const option of options) {
      const parsed = option(value);
      if (parsed !== NOT_FAST) return parsed;
    }
    return NOT_FAST;
  };
}
