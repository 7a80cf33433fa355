/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, numbers and strings as
 * `JSON.stringify` writes them (which matches RFC 8785 for the values events carry). The same
 * value always gives the same text, so hashes over it are stable across processes and stores.
 *
 * With `memo`, the text of each object and array is kept there and reused when the same object
 * comes again (for values whose parts are never changed in place, such as a thread's messages).
 *
 * Throws a TypeError on values JSON cannot represent (functions, symbols, bigint, non-finite
 * numbers, `undefined` inside arrays); catalog schemas keep such values out of events.
 */
export function canonicalJson(value: unknown, memo?: WeakMap<object, string>): string {
  if (memo) return encode(value, memo);
  // Most payloads are small objects whose keys already sort: native stringify is then canonical.
  if (typeof value === "object" && value !== null && isSortedTree(value, 0))
    return JSON.stringify(value);
  return encode(value);
}

function encode(value: unknown, memo?: WeakMap<object, string>): string {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`cannot encode ${value} as JSON`);
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      const known = memo?.get(value);
      if (known !== undefined) return known;
      const text = Array.isArray(value)
        ? canonicalArray(value, memo)
        : typeof (value as { toJSON?: unknown }).toJSON === "function"
          ? encode((value as { toJSON(): unknown }).toJSON(), memo)
          : canonicalObject(value as Record<string, unknown>, memo);
      memo?.set(value, text);
      return text;
    }
    default:
      return fail(typeof value);
  }
}

// Plain loops and string concatenation: this runs for every appended event.
function canonicalArray(items: readonly unknown[], memo?: WeakMap<object, string>): string {
  let out = "[";
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === undefined) fail("undefined");
    out += i === 0 ? encode(item, memo) : `,${encode(item, memo)}`;
  }
  return `${out}]`;
}

function canonicalObject(record: Record<string, unknown>, memo?: WeakMap<object, string>): string {
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = "{";
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    out += `${out.length === 1 ? "" : ","}${JSON.stringify(key)}:${encode(member, memo)}`;
  }
  return `${out}}`;
}

/**
 * True when `JSON.stringify(value)` already is the canonical form: plain objects and arrays only,
 * keys in sorted order, no `undefined`, no `toJSON`, only finite numbers, not too deep to check.
 */
function isSortedTree(value: object, depth: number): boolean {
  if (depth > 32) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPlainLeafOrSorted(item, depth)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  let previous: string | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    if (previous !== undefined && !(previous < key)) return false;
    if (!isPlainLeafOrSorted((value as Record<string, unknown>)[key], depth)) return false;
    previous = key;
  }
  return true;
}

function isPlainLeafOrSorted(item: unknown, depth: number): boolean {
  switch (typeof item) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(item);
    case "object":
      return item === null || isSortedTree(item, depth + 1);
    default:
      return false;
  }
}

function fail(kind: string): never {
  throw new TypeError(`cannot encode a value of type ${kind} as JSON`);
}
