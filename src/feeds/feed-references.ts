import { substituteParameters } from "../actions/index.js";
import type { FeedDefinition } from "./feed-definition.js";
import type { FeedSnapshot } from "./feed-snapshot.js";
import { feedVariableSource } from "./feed-variables.js";

const REFERENCE = /\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * The ids, among `known`, of the other feeds `definition`'s params name as `$id` (in any string,
 * at any depth; `$id.path` counts as `$id`). Used to resolve those feeds first.
 */
export function referencedFeeds(definition: FeedDefinition, known: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === "string") {
      for (const match of value.matchAll(REFERENCE)) {
        const id = match[1]!;
        if (id !== definition.id && known.has(id)) found.add(id);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item);
    } else if (value !== null && typeof value === "object") {
      for (const item of Object.values(value)) walk(item);
    }
  };
  walk(definition.source.params);
  return [...found];
}

/**
 * `definition` with `$id` references in its params replaced by the values in `snapshot`, by the
 * actions module's rules (`substituteParameters` over `feedVariableSource`): a string that is
 * exactly `"$id"` takes the value (a JSON object parsed), embedded references interpolate as
 * text, `$$` is a literal `$`, and a name that is no feed with a value stays as written. The
 * seed's `context: "$repo_structure"` is this. Returns `definition` itself when there is no `$`.
 */
export function withFeedReferences(
  definition: FeedDefinition,
  snapshot: FeedSnapshot,
): FeedDefinition {
  if (!JSON.stringify(definition.source.params).includes("$")) return definition;
  const params = substituteParameters(definition.source.params, feedVariableSource(snapshot));
  return { ...definition, source: { ...definition.source, params } };
}
