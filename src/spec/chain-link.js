// @ts-check
// Plain JavaScript, with no imports of TypeScript modules: the SQLite writer thread runs it as it
// is, from `src/` under the tests as from `dist/` when installed.
import { hash } from "node:crypto";

/** The hash a continuity's chain starts from. */
export const GENESIS_HASH = "0".repeat(64);

/** Version tag of the canonical event form; a new form gets a new tag, old events keep theirs. */
const CANONICAL_FORM = "spool.event.v1";
const FORM_PREFIX = `[${JSON.stringify(CANONICAL_FORM)},`;

/**
 * The canonical text of an event from its envelope fields and the canonical JSON of its data:
 * everything but `seq` (a store position, which differs between stores holding the same
 * continuity) and `hash` itself. It is `JSON.stringify(["spool.event.v1", [id, continuity,
 * streamKind, streamId, type, ts, actor, origin, criticality], data])`, written out directly:
 * every field but `origin` is an identifier, a catalog name, a ULID or an ISO time, which
 * validation keeps to characters JSON writes as they are, so only `origin` needs escaping
 * (a property test holds the two forms equal).
 * @param {string} id
 * @param {string} continuity
 * @param {string} streamKind
 * @param {string} streamId
 * @param {string} type
 * @param {string} ts
 * @param {string | null} actor
 * @param {string | null} origin
 * @param {string} criticality
 * @param {string} dataJson
 * @returns {string}
 */
export function canonicalText(
  id,
  continuity,
  streamKind,
  streamId,
  type,
  ts,
  actor,
  origin,
  criticality,
  dataJson,
) {
  const who = actor === null ? "null" : `"${actor}"`;
  const from = origin === null ? "null" : JSON.stringify(origin);
  return `${FORM_PREFIX}["${id}","${continuity}","${streamKind}","${streamId}","${type}","${ts}",${who},${from},"${criticality}"],${dataJson}]`;
}

/**
 * `sha256(previousHash + "\n" + canonical)` as lowercase hex: one link of a continuity's chain.
 * @param {string} previousHash
 * @param {string} canonical
 * @returns {string}
 */
export function chainHash(previousHash, canonical) {
  // The one-shot digest avoids a Hash object per event, which dominated batched appends.
  return hash("sha256", `${previousHash}\n${canonical}`, "hex");
}
