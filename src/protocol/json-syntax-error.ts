import { describeFound } from "./scanned-tag.js";

/** The first place where a text stops being JSON, and what JSON needed there. */
export interface JsonSyntaxError {
  /** UTF-16 offset into the text. */
  offset: number;
  expected: string;
  found: string;
}

const isWs = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * Finds the first syntax error of `text` as RFC 8259 JSON (what `JSON.parse` accepts), or
 * returns undefined when there is none. `JSON.parse` says where it failed only in some of its
 * messages, so the parser calls this on failure to point the model at the exact place.
 * Iterative, so any nesting depth is fine; never throws.
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const n = text.length;
  const stack: boolean[] = []; // true: object, false: array
  let i = 0;
  const fail = (expected: string): JsonSyntaxError => ({
    offset: i,
    expected,
    found: describeFound(text, i),
  });
  const skip = () => {
    while (i < n && isWs(text.charCodeAt(i))) i++;
  };
  /** Reads a string at `i` (which is `"`); returns an error or undefined. */
  const string = (): JsonSyntaxError | undefined => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail('an escaped control character (\\n, \\t, …) or the closing "');
      if (c === 92) {
        i++;
        const e = text.charCodeAt(i);
        if (e === 117) {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text.charAt(i + k))) {
              i += k;
              return fail("four hex digits after \\u");
            }
          }
          i += 5;
          continue;
        }
        if (i >= n || !'"\\/bfnrt'.includes(text.charAt(i))) {
          return fail('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
        }
        i++;
        continue;
      }
      i++;
    }
    return fail('the closing " of the string');
  };
  const digits = (): boolean => {
    const start = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    return i > start;
  };
  const number = (): JsonSyntaxError | undefined => {
    if (text.charCodeAt(i) === 45) i++;
    if (text.charCodeAt(i) === 48) i++;
    else if (!digits()) return fail("a digit");
    if (text.charCodeAt(i) === 46) {
      i++;
      if (!digits()) return fail("a digit after the decimal point");
    }
    if ((text.charCodeAt(i) | 0x20) === 101) {
      i++;
      if (text.charCodeAt(i) === 43 || text.charCodeAt(i) === 45) i++;
      if (!digits()) return fail("a digit in the exponent");
    }
    return undefined;
  };
  /** Reads an object key and its colon; `i` is at the key. */
  const key = (closable: boolean): JsonSyntaxError | undefined => {
    if (text.charCodeAt(i) !== 34) {
      return fail(closable ? 'a "key" in double quotes or }' : 'a "key" in double quotes');
    }
    const error = string();
    if (error) return error;
    skip();
    if (text.charCodeAt(i) !== 58) return fail('":" after the key');
    i++;
    return undefined;
  };

  skip();
  for (;;) {
    // A value is expected at i.
    skip();
    const c = text.charCodeAt(i);
    let error: JsonSyntaxError | undefined;
    let opened = false;
    if (c === 123 || c === 91) {
      i++;
      skip();
      const object = c === 123;
      if (text.charCodeAt(i) === (object ? 125 : 93)) i++;
      else {
        stack.push(object);
        opened = true;
        if (object) error = key(true);
      }
    } else if (c === 34) error = string();
    else if (c === 45 || isDigit(c)) error = number();
    else {
      const word = ["true", "false", "null"].find((w) => text.startsWith(w, i));
      if (word) i += word.length;
      else error = fail("a value (object, array, string, number, true, false or null)");
    }
    if (error) return error;
    if (opened) continue;
    // A value ended; close containers until one wants another element.
    for (;;) {
      skip();
      if (stack.length === 0) return i < n ? fail("nothing after the JSON value") : undefined;
      const object = stack[stack.length - 1]!;
      const d = text.charCodeAt(i);
      if (d === 44) {
        i++;
        skip();
        if (text.charCodeAt(i) === (object ? 125 : 93)) {
          return fail(
            `${object ? 'a "key"' : "a value"} after "," (JSON allows no trailing comma)`,
          );
        }
        if (object) {
          const keyError = key(false);
          if (keyError) return keyError;
        }
        break;
      }
      if (d === (object ? 125 : 93)) {
        stack.pop();
        i++;
        continue;
      }
      return fail(object ? '"," or "}"' : '"," or "]"');
    }
  }
}
