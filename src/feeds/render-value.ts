import { describeError } from "../spec/index.js";
import { FeedError } from "./feed-error.js";

/**
 * The text of a source's output: a string as it is; `undefined` (and functions, symbols) as `""`;
 * anything else as pretty JSON (two-space indent), so `{ "cpu": 45.2 }` reads as the seed shows.
 *
 * Throws `FeedError("feed.unrenderable")` for values JSON cannot write (a cycle, a bigint).
 */
export function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch (error) {
    throw new FeedError(
      "feed.unrenderable",
      `the source's output cannot be written as JSON: ${describeError(error)}`,
      { hint: "Return a string or a JSON value (no cycles, no bigint) from the source" },
    );
  }
}
