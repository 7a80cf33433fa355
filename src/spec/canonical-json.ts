/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, numbers and strings as
 * `JSON.stringify` writes them (which matches RFC 8785 for the values events carry). The same
 * value always gives the same text, so hashes over it are stable across processes and stores.
 *
 * Throws a TypeError on values JSON cannot represent (functions, symbols, bigint, non-finite
 * numbers, `undefined` inside arrays); catalog schemas keep such values out of events.
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`cannot encode ${value} as JSON`);
      return JSON.stringify(value);
    case "object":
      if (value === null) return "null";
      if (Array.isArray(value)) return canonicalArray(value);
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
        return canonicalJson((value as { toJSON(): unknown }).toJSON());
      }
      return canonicalObject(value as Record<string, unknown>);
    default:
      return fail(typeof value);
  }
}

// Plain loops and string concatenation: this runs for every appended event.
function canonicalArray(items: readonly unknown[]): string {
  let out = "[";
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === undefined) fail("undefined");
    out += i === 0 ? canonicalJson(item) : `,${canonicalJson(item)}`;
  }
  return `${out}]`;
}

function canonicalObject(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = "{";
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    out += `${out.length === 1 ? "" : ","}${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
}

function fail(kind: string): never {
  throw new TypeError(`cannot encode a value of type ${kind} as JSON`);
}
