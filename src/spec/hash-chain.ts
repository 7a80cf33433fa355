import { hash } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";
import type { PreparedEvent } from "./event.js";

/** Version tag of the canonical event form; a new form gets a new tag, old events keep theirs. */
const CANONICAL_FORM = "spool.event.v1";
const FORM_PREFIX = `[${JSON.stringify(CANONICAL_FORM)},`;

/**
 * The canonical text of an event: everything in the envelope except `seq` (a store position,
 * which differs between stores holding the same continuity) and `hash` itself.
 * `dataJson` is the canonical JSON of `data`, passed in when already computed.
 */
export function canonicalEvent(event: PreparedEvent, dataJson = canonicalJson(event.data)): string {
  // The envelope is an array of strings and nulls, for which native stringify is canonical.
  const envelope = JSON.stringify([
    event.id,
    event.continuity,
    event.stream.kind,
    event.stream.id,
    event.type,
    event.ts,
    event.actor,
    event.origin,
    event.criticality,
  ]);
  return `${FORM_PREFIX}${envelope},${dataJson}]`;
}

/** `sha256(previousHash + "\n" + canonical)` as lowercase hex: one link of a continuity's chain. */
export function chainHash(previousHash: string, canonical: string): string {
  // The one-shot digest avoids a Hash object per event, which dominated batched appends.
  return hash("sha256", `${previousHash}\n${canonical}`, "hex");
}
