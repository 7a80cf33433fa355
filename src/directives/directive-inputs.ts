import { ConfigError } from "../spec/index.js";
import type { Directive, InputType, InputValue } from "./directive.js";

/** The outcome of coercing one value: the typed value, or what is wrong with it. */
export type Coerced = { ok: true; value: InputValue } | { ok: false; message: string };

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE = new Set(["true", "yes", "1", "on"]);
const FALSE = new Set(["false", "no", "0", "off"]);

/**
 * Coerces `value` to `type`. Strings (as `k=v` on the command line gives them) are read: a
 * `number` or `integer` from decimal text, a `boolean` from true/false/yes/no/1/0/on/off, `json`
 * from JSON text. Values that already have the type pass unchanged; a number or boolean given
 * for a `string` becomes its text. Never throws.
 */
export function coerceInputValue(type: InputType, value: unknown): Coerced {
  switch (type) {
    case "string":
      if (typeof value === "string") return { ok: true, value };
      if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") {
        return { ok: true, value: String(value) };
      }
      return { ok: false, message: "must be text" };
    case "number":
    case "integer": {
      const number =
        typeof value === "number"
          ? value
          : typeof value === "string" && NUMBER.test(value.trim())
            ? Number(value.trim())
            : Number.NaN;
      if (!Number.isFinite(number)) {
        return {
          ok: false,
          message: `must be a number, e.g. ${type === "integer" ? "4000" : "0.5"}`,
        };
      }
      if (type === "integer" && !Number.isSafeInteger(number)) {
        return { ok: false, message: "must be a whole number, e.g. 4000" };
      }
      return { ok: true, value: number };
    }
    case "boolean": {
      if (typeof value === "boolean") return { ok: true, value };
      const word = typeof value === "string" ? value.trim().toLowerCase() : "";
      if (TRUE.has(word)) return { ok: true, value: true };
      if (FALSE.has(word)) return { ok: true, value: false };
      return { ok: false, message: "must be true or false" };
    }
    case "json": {
      if (typeof value === "string") {
        try {
          return { ok: true, value: JSON.parse(value) as InputValue };
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return {
            ok: false,
            message: `must be JSON text, e.g. {"key":"value"} or "text" in quotes (${reason})`,
          };
        }
      }
      return isJsonValue(value)
        ? { ok: true, value }
        : { ok: false, message: "must be a JSON value (no functions, undefined or NaN)" };
    }
  }
}

function isJsonValue(value: unknown, depth = 0): value is InputValue {
  if (depth > 200) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value).every((item) => isJsonValue(item, depth + 1));
  }
  return false;
}

/**
 * Checks and types the inputs given to a run of `directive`: each declared input is coerced to
 * its type (`coerceInputValue`), a missing one takes its default, a missing required one is an
 * error, and a name the directive does not declare is an error. Returns the typed values (inputs
 * neither given nor defaulted are absent). Throws one `ConfigError` (`directive.inputs`) naming
 * every bad input, its type and how to pass it.
 */
export function checkInputs(
  directive: Pick<Directive, "name" | "inputs">,
  given: Readonly<Record<string, unknown>>,
): Record<string, InputValue> {
  const values: Record<string, InputValue> = {};
  const problems: string[] = [];
  const declared = new Set(directive.inputs.map((input) => input.name));
  for (const name of Object.keys(given)) {
    if (!declared.has(name)) {
      const known = [...declared].join(", ") || "no inputs";
      problems.push(`unknown input "${name}" (directive "${directive.name}" takes ${known})`);
    }
  }
  for (const input of directive.inputs) {
    const raw = Object.hasOwn(given, input.name) ? given[input.name] : undefined;
    if (raw === undefined) {
      if (input.default !== undefined) values[input.name] = input.default;
      else if (input.required) {
        const about = input.description ? `: ${input.description}` : "";
        problems.push(
          `input "${input.name}" (${input.type}) is required${about}; pass ${input.name}=<value>`,
        );
      }
      continue;
    }
    const coerced = coerceInputValue(input.type, raw);
    if (coerced.ok) values[input.name] = coerced.value;
    else problems.push(`input "${input.name}" ${coerced.message}`);
  }
  if (problems.length > 0) {
    throw new ConfigError("directive.inputs", problems.join("; "), {
      hint: `Pass inputs as name=value; directive "${directive.name}" declares them in its <inputs>`,
      details: { directive: directive.name, problems },
    });
  }
  return values;
}

/**
 * Splits command-line `name=value` words into a record of strings (the value may contain `=`;
 * a repeated name keeps the last value). Throws `ConfigError` (`directive.inputs`) for a word
 * without `=` or with an empty name.
 */
export function parseInputArgs(words: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const word of words) {
    const equals = word.indexOf("=");
    if (equals <= 0) {
      throw new ConfigError("directive.inputs", `"${word}" is not an input`, {
        hint: "Write inputs as name=value, e.g. topic=weather",
      });
    }
    values[word.slice(0, equals)] = word.slice(equals + 1);
  }
  return values;
}
