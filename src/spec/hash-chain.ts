import { canonicalJson } from "./canonical-json.js";
import { canonicalText } from "./chain-link.js";
import type { PreparedEvent } from "./event.js";

export { chainHash } from "./chain-link.js";

/**
 * The canonical text of an event: everything in the envelope except `seq` (a store position,
 * which differs between stores holding the same continuity) and `hash` itself.
 * `dataJson` is the canonical JSON of `data`, passed in when already computed.
 */
export function canonicalEvent(event: PreparedEvent, dataJson = canonicalJson(event.data)): string {
  return canonicalText(
    event.id,
    event.continuity,
    event.stream.kind,
    event.stream.id,
    event.type,
    event.ts,
    event.actor,
    event.origin,
    event.criticality,
    dataJson,
  );
}
