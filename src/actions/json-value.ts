/**
 * The JSON form of `value`, as the log stores it and a replay reads it back: `undefined` becomes
 * `null`, non-finite numbers become `null`, `-0` becomes `0`, `toJSON` is applied, a bigint becomes its decimal
 * string, and a reference back to an enclosing object becomes the string `"[Circular]"` (the rest
 * of the value is kept). A value that cannot be read at all (a throwing getter) becomes its
 * `String(…)`. Never throws.
 *
 * The scheduler stores outputs in this form, so a live run and its replay see identical variables.
 */
export function toJsonValue(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      // JSON has no -0: it reads back as 0, so it is stored as 0 (a replay sees the same).
      return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
    case "undefined":
    case "function":
    case "symbol":
      return null;
    case "bigint":
      return value.toString();
    default:
      if (value === null) return null;
      try {
        const text = JSON.stringify(value, cycleSafeReplacer());
        return text === undefined ? null : (JSON.parse(text) as unknown);
      } catch {
        try {
          return String(value);
        } catch {
          return "[unserializable value]";
        }
      }
  }
}

/** A `JSON.stringify` replacer that writes bigints as strings and cycles as `"[Circular]"`. */
function cycleSafeReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object" || value === null) return value;
    // `this` is the object holding `value`: drop the ancestors that are no longer on the path.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return "[Circular]";
    ancestors.push(value);
    return value;
  };
}

/** Freezes `value` and everything reachable from it; returns it. For JSON trees (no cycles). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
