import { interpolateValue, resolveReference, scanReference } from "./variable-reference.js";
import type { VariableSource } from "./variable-store.js";

/**
 * `text` with every resolvable `$reference` replaced by its value as text (`interpolateValue`),
 * `$$name` escapes turned into `$name`, and everything else (unknown names, unresolvable paths,
 * `$5`, a lone `$`) left exactly as written. Substituted values are not scanned again.
 * Pure; never throws.
 */
export function substituteText(text: string, source: VariableSource): string {
  let dollar = text.indexOf("$");
  if (dollar < 0) return text;
  let out = "";
  let copied = 0;
  while (dollar >= 0) {
    const scanned = scanReference(text, dollar, true);
    let next = dollar + 1;
    if (scanned.kind === "escape") {
      out += text.slice(copied, dollar + 1);
      copied = scanned.end;
      next = scanned.end;
    } else if (scanned.kind === "reference") {
      const resolved = resolveReference(scanned, source);
      if (resolved) {
        out += text.slice(copied, dollar) + interpolateValue(resolved.value);
        copied = resolved.end;
      }
      next = resolved ? resolved.end : scanned.end;
    }
    dollar = text.indexOf("$", next);
  }
  return out + text.slice(copied);
}

/**
 * The value a parameter string stands for. A string that is exactly one reference (`"$rows"`,
 * `"$user.profile"`, `"$rows[0].id"`) that resolves completely takes the value's own type: an
 * object, a number, `null` … Anything else is a string, substituted by `substituteText`.
 */
export function substituteString(text: string, source: VariableSource): unknown {
  if (text.charCodeAt(0) === 36) {
    const scanned = scanReference(text, 0, true);
    if (scanned.kind === "reference" && scanned.end === text.length) {
      const resolved = resolveReference(scanned, source);
      if (resolved && resolved.end === text.length) return resolved.value;
    }
  }
  return substituteText(text, source);
}

/**
 * `parameters` with every string inside it (at any depth of objects and arrays, never in keys)
 * substituted by `substituteString`. Returns new containers where anything changed and shares the
 * rest; the input is never modified. Pure; never throws.
 */
export function substituteParameters(
  parameters: Record<string, unknown>,
  source: VariableSource,
): Record<string, unknown> {
  return substituteValue(parameters, source, 0) as Record<string, unknown>;
}

/** Deeper than this, values are passed through unchanged (a guard against pathological input). */
const MAX_DEPTH = 64;

function substituteValue(value: unknown, source: VariableSource, depth: number): unknown {
  if (typeof value === "string")
    return value.includes("$") ? substituteString(value, source) : value;
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = substituteValue(item, source, depth + 1);
      if (next !== item) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    const next = substituteValue(item, source, depth + 1);
    if (next !== item) {
      out ??= { ...(value as Record<string, unknown>) };
      // defineProperty, not assignment: a `__proto__` key from parsed JSON stays a plain key.
      Object.defineProperty(out, key, {
        value: next,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out ?? value;
}
