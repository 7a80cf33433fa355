/**
 * The JSON form of `value`, as the log stores it and a replay reads it back: `undefined` becomes
 * `null`, non-finite numbers become `null`, `toJSON` is applied, and a value JSON cannot represent
 * (a cycle, a bigint) becomes its `String(…)`. Never throws.
 *
 * The scheduler stores outputs in this form, so a live run and its replay see identical variables.
 */
export function toJsonValue(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "undefined":
    case "function":
    case "symbol":
      return null;
    case "bigint":
      return value.toString();
    default:
      if (value === null) return null;
      try {
        const text = JSON.stringify(value);
        return text === undefined ? null : (JSON.parse(text) as unknown);
      } catch {
        return String(value);
      }
  }
}

/** Freezes `value` and everything reachable from it; returns it. For JSON trees (no cycles). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
