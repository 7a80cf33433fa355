import { scanReference } from "../actions/index.js";

/** A `$name.key…` reference found in a value, with where the string holding it is. */
export interface FoundReference {
  /** The reference's name: `inputs`, `steps`, an item name, … */
  name: string;
  /** Its first `.key`, when it has one: the input name or step id. */
  key?: string;
  /** Path from the value's root to the string. */
  path: (string | number)[];
}

/**
 * Every reference in the strings of `value` (at any depth, never in keys), with paths under
 * `prefix`. `$$name` escapes are not references. Pure.
 */
export function findReferences(
  value: unknown,
  prefix: readonly (string | number)[] = [],
): FoundReference[] {
  const found: FoundReference[] = [];
  const visit = (item: unknown, path: (string | number)[], depth: number) => {
    if (depth > 64) return;
    if (typeof item === "string") {
      let dollar = item.indexOf("$");
      while (dollar >= 0) {
        const scanned = scanReference(item, dollar, true);
        let next = dollar + 1;
        if (scanned.kind === "escape") next = scanned.end;
        else if (scanned.kind === "reference") {
          const first = scanned.accessors[0];
          found.push({
            name: scanned.name,
            ...(first && "key" in first ? { key: first.key } : {}),
            path,
          });
          next = scanned.end;
        }
        dollar = item.indexOf("$", next);
      }
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => {
        visit(element, [...path, index], depth + 1);
      });
    } else if (typeof item === "object" && item !== null) {
      for (const [key, element] of Object.entries(item)) visit(element, [...path, key], depth + 1);
    }
  };
  visit(value, [...prefix], 0);
  return found;
}
