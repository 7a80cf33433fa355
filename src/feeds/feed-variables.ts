import type { VariableSource } from "../actions/index.js";
import type { FeedSnapshot } from "./feed-snapshot.js";

/**
 * The feeds' values as `$id` variables: `{ [id]: value }` for every feed in the snapshot that has
 * a value (the same text the prompt shows, truncation marker included; a stale value is still
 * given). Feeds with no value are absent, so `$id` stays literal text, as for any unknown name.
 */
export function feedVariables(snapshot: FeedSnapshot): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const entry of snapshot) if (entry.value !== undefined) variables[entry.id] = entry.value;
  return variables;
}

/**
 * The feeds as a fallback source of a `VariableStore` (`createVariableStore({ fallbacks })`):
 * `$id` is the feed's value. A value that is a JSON object or array (what a tool's structured
 * output renders as, and not truncated) is given parsed, so `"$system_metrics"` passes the object
 * and `$system_metrics.cpu` reaches into it; any other value is the text. Feeds without a value
 * are not found (the reference stays literal).
 *
 * `from` is a step's snapshot (its values hold still for the whole step: the usual choice) or a
 * function read on every lookup (e.g. `() => engine.snapshot()` for the latest values).
 */
export function feedVariableSource(from: FeedSnapshot | (() => FeedSnapshot)): VariableSource {
  return {
    lookup(name) {
      const snapshot = typeof from === "function" ? from() : from;
      const entry = snapshot.find((candidate) => candidate.id === name);
      if (entry?.value === undefined) return undefined;
      if (entry.truncated || !/^\s*[[{]/.test(entry.value)) return { value: entry.value };
      // Parsed afresh for every lookup: no caller can change what the next one gets.
      return { value: parseStructure(entry.value) };
    },
  };
}

function parseStructure(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : text;
  } catch {
    return text;
  }
}

/**
 * `$id` over recorded values (`feedVariables` of a step's snapshot, as `context.feeds` logs
 * them), with `feedVariableSource`'s rule: a value that is a JSON object or array is given
 * parsed, anything else as text. A truncated value ends in its marker, so it never parses and
 * stays text, as `feedVariableSource` gives it. Live and replayed steps read their `$id` through
 * this one source, from the same record.
 */
export function feedValueSource(values: Readonly<Record<string, string>>): VariableSource {
  return {
    lookup(name) {
      if (!Object.hasOwn(values, name)) return undefined;
      const value = values[name]!;
      if (!/^\s*[[{]/.test(value)) return { value };
      return { value: parseStructure(value) };
    },
  };
}
