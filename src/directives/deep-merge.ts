/** A plain mapping (not an array, not null, not a class instance). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)
  );
}

/** True for a list whose every item is a mapping with a string or number `id`. */
function isIdList(value: unknown[]): value is Record<string, unknown>[] {
  return value.every(
    (item) => isPlainObject(item) && (typeof item.id === "string" || typeof item.id === "number"),
  );
}

/**
 * Merges `over` onto `base`, the rule by which configs of the item spaces combine (project over
 * user over built-in):
 *
 * - mappings merge key by key, recursively;
 * - two lists whose items all have an `id` merge by id: an item of `over` with the id of an item
 *   of `base` is merged onto it in place, new ids are appended in `over`'s order;
 * - anything else (scalars, other lists, `null`) in `over` replaces `base`; `undefined` keeps it.
 *
 * Pure: neither input is changed, and the result shares no mapping or list with them. A
 * `__proto__` key is dropped.
 */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (over === undefined) return clone(base);
  if (isPlainObject(base) && isPlainObject(over)) {
    const result: Record<string, unknown> = clone(base) as Record<string, unknown>;
    for (const [key, value] of Object.entries(over)) {
      if (key !== "__proto__") result[key] = deepMerge(base[key], value);
    }
    return result;
  }
  if (
    Array.isArray(base) &&
    Array.isArray(over) &&
    base.length > 0 &&
    isIdList(base) &&
    isIdList(over)
  ) {
    const result = base.map((item) => clone(item) as Record<string, unknown>);
    for (const item of over) {
      const at = result.findIndex((existing) => existing.id === item.id);
      if (at === -1) result.push(clone(item) as Record<string, unknown>);
      else result[at] = deepMerge(result[at], item) as Record<string, unknown>;
    }
    return result;
  }
  return clone(over);
}

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== "__proto__")
        .map(([key, item]) => [key, clone(item)]),
    );
  }
  return value;
}
