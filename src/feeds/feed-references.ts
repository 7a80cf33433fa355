import { scanReference, substituteParameters } from "../actions/index.js";
import type { FeedDefinition } from "./feed-definition.js";
import type { FeedSnapshot } from "./feed-snapshot.js";
import { feedVariableSource } from "./feed-variables.js";

/**
 * The ids, among `known`, of the other feeds `definition`'s params name as `$id` (in any string,
 * at any depth; `$id.path` counts as `$id`), read with the actions module's reference grammar
 * (`scanReference`), so `$$id` is no reference here either. Used to resolve those feeds first.
 */
export function referencedFeeds(definition: FeedDefinition, known: ReadonlySet<string>): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === "string") {
      for (let at = value.indexOf("$"); at !== -1; ) {
        const scanned = scanReference(value, at, true);
        const id = scanned.kind === "reference" ? scanned.name : undefined;
        if (id !== undefined && id !== definition.id && known.has(id)) found.add(id);
        const next =
          scanned.kind === "reference" || scanned.kind === "escape" ? scanned.end : at + 1;
        at = value.indexOf("$", next);
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
