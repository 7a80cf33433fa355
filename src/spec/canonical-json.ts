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
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        return `[${value.map((item) => (item === undefined ? fail("undefined") : canonicalJson(item))).join(",")}]`;
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
        return canonicalJson((value as { toJSON(): unknown }).toJSON());
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
    }
    default:
      return fail(typeof value);
  }
}

function fail(kind: string): never {
  throw new TypeError(`cannot encode a value of type ${kind} as JSON`);
}
