import { VARIABLE_NAME_MAX } from "../protocol/index.js";
import type { VariableSource } from "./variable-store.js";

/** One step of a reference's path: `.name` into an object or `[index]` into an array. */
export type Accessor = { key: string } | { index: number };

/**
 * What `scanReference` finds at a `$`.
 * - `reference`: `$name` with its accessors; `ends[i]` is where accessor `i` ends in the text
 *   (`ends[-1]`, i.e. `nameEnd`, is where the bare name ends).
 * - `escape`: `$$` before a name start: the text is a literal `$`, and the name after it is plain
 *   text (so `$$price` reads `$price`). `end` is just after the two dollars.
 * - `incomplete`: the text ends where more input could still make (or extend) a reference.
 * - `none`: a plain `$` (before a digit, a space, another symbol …).
 */
export type ScannedReference =
  | {
      kind: "reference";
      name: string;
      nameEnd: number;
      accessors: Accessor[];
      ends: number[];
      end: number;
    }
  | { kind: "escape"; end: number }
  | { kind: "incomplete" }
  | { kind: "none" };

/** Longest array index, in digits. */
const INDEX_DIGITS_MAX = 9;

function isNameStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isNameChar(code: number): boolean {
  return isNameStart(code) || (code >= 48 && code <= 57);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Index just after the run of name characters starting at `from`. */
function nameRunEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && isNameChar(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Reads the reference starting at `text[start]` (which must be `$`). The grammar:
 *
 * ```
 * reference := "$" name ( "." name | "[" digits "]" )*
 * name      := [A-Za-z_] [A-Za-z0-9_]*          (at most 128 characters)
 * digits    := [0-9]{1,9}
 * escape    := "$$" followed by a name start     (a literal "$"; the name is text)
 * ```
 *
 * With `final` false the text may continue (a streaming delta): a reference that touches the end
 * of `text`, and any `$` or `$$` at its very end, is `incomplete` until more text decides it.
 * With `final` true the text is all there is. Pure; never throws.
 */
export function scanReference(text: string, start: number, final: boolean): ScannedReference {
  const length = text.length;
  let i = start + 1;
  if (i >= length) return final ? { kind: "none" } : { kind: "incomplete" };
  let code = text.charCodeAt(i);
  if (code === 36) {
    if (i + 1 >= length) return final ? { kind: "none" } : { kind: "incomplete" };
    return isNameStart(text.charCodeAt(i + 1)) ? { kind: "escape", end: i + 1 } : { kind: "none" };
  }
  if (!isNameStart(code)) return { kind: "none" };
  const nameEnd = nameRunEnd(text, i);
  if (nameEnd - i > VARIABLE_NAME_MAX) return { kind: "none" };
  if (nameEnd === length && !final) return { kind: "incomplete" };
  const name = text.slice(i, nameEnd);
  const accessors: Accessor[] = [];
  const ends: number[] = [];
  i = nameEnd;
  while (i < length) {
    code = text.charCodeAt(i);
    if (code === 46) {
      if (i + 1 >= length) {
        if (!final) return { kind: "incomplete" };
        break;
      }
      if (!isNameStart(text.charCodeAt(i + 1))) break;
      const keyEnd = nameRunEnd(text, i + 1);
      if (keyEnd === length && !final) return { kind: "incomplete" };
      accessors.push({ key: text.slice(i + 1, keyEnd) });
      ends.push(keyEnd);
      i = keyEnd;
    } else if (code === 91) {
      let j = i + 1;
      while (j < length && isDigit(text.charCodeAt(j)) && j - i <= INDEX_DIGITS_MAX) j++;
      if (j >= length) {
        if (!final) return { kind: "incomplete" };
        break;
      }
      if (j === i + 1 || text.charCodeAt(j) !== 93) break;
      accessors.push({ index: Number(text.slice(i + 1, j)) });
      ends.push(j + 1);
      i = j + 1;
    } else {
      break;
    }
  }
  return { kind: "reference", name, nameEnd, accessors, ends, end: i };
}

/** A resolved reference: its value and where in the text the consumed part ends. */
export interface ResolvedReference {
  value: unknown;
  end: number;
}

/**
 * Resolves a scanned reference against `source`.
 *
 * Accessors apply while the current value is an object or array; on a string, number, boolean or
 * `null` the reference stops before the next accessor, which stays text (`$file.txt` with
 * `file = "report"` reads `report.txt`). A missing key, an index out of range, `.key` on an array
 * or `[i]` on an object makes the whole reference unresolved (`undefined`): it stays literal.
 * Only own properties are read. Unknown names are unresolved. Pure; never throws.
 */
export function resolveReference(
  reference: Extract<ScannedReference, { kind: "reference" }>,
  source: VariableSource,
): ResolvedReference | undefined {
  const found = source.lookup(reference.name);
  if (!found) return undefined;
  let value = found.value;
  let end = reference.nameEnd;
  for (let k = 0; k < reference.accessors.length; k++) {
    if (typeof value !== "object" || value === null) break;
    const accessor = reference.accessors[k]!;
    if ("index" in accessor) {
      if (!Array.isArray(value) || accessor.index >= value.length) return undefined;
      value = value[accessor.index];
    } else {
      if (Array.isArray(value) || !Object.hasOwn(value, accessor.key)) return undefined;
      value = (value as Record<string, unknown>)[accessor.key];
    }
    end = reference.ends[k]!;
  }
  return { value, end };
}

/**
 * How a value reads inside a longer text: strings as they are, numbers and booleans as written,
 * `null` as `null`, objects and arrays as compact JSON. Never throws.
 */
export function interpolateValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  }
  return String(value);
}
