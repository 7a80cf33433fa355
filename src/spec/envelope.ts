import { z } from "zod";
import { STREAM_KINDS } from "./event.js";
import {
  IDENTIFIER_MAX,
  IDENTIFIER_PATTERN,
  identifier,
  ULID_PATTERN,
  ulidString,
} from "./events/define-event.js";

// Stored as a column, not escaped JSON: control characters and lone surrogates would not survive.
const ORIGIN_PATTERN = /^[^\p{Cc}\p{Cs}]+$/u;
const ORIGIN_MAX = 200;

/** The envelope fields a caller may give, checked before the type's own data schema. */
export const envelopeSchema = z.strictObject({
  continuity: identifier,
  type: z.string(),
  data: z.unknown(),
  stream: z.strictObject({ kind: z.enum(STREAM_KINDS), id: identifier }).optional(),
  actor: identifier.nullish(),
  origin: z
    .string()
    .min(1)
    .max(ORIGIN_MAX)
    .regex(ORIGIN_PATTERN, "must hold no control characters and no lone surrogates")
    .nullish(),
  ts: z.iso
    .datetime({
      offset: true,
      message: "must be an ISO-8601 time such as 2026-01-31T12:00:00.000Z",
    })
    .optional(),
  id: ulidString.optional(),
});

/** The envelope as `envelopeSchema` returns it. */
export type Envelope = z.output<typeof envelopeSchema>;

const KEYS = new Set(["continuity", "type", "data", "stream", "actor", "origin", "ts", "id"]);
const KINDS: ReadonlySet<unknown> = new Set(STREAM_KINDS);

const isIdentifier = (value: unknown): boolean =>
  typeof value === "string" && value.length <= IDENTIFIER_MAX && IDENTIFIER_PATTERN.test(value);

/**
 * A fast check that accepts only envelopes `envelopeSchema` also accepts (a property test holds
 * it to that); whatever it does not accept goes through the schema, which explains the problem.
 * Appending runs this for every event, so it avoids the general parser's allocations.
 */
export function isPlainEnvelope(input: unknown): input is Envelope {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  const value = input as Record<string, unknown>;
  for (const key in value) if (!KEYS.has(key) || !Object.hasOwn(value, key)) return false;
  if (!isIdentifier(value.continuity)) return false;
  if (typeof value.type !== "string" || value.ts !== undefined) return false;
  if (value.id !== undefined && (typeof value.id !== "string" || !ULID_PATTERN.test(value.id)))
    return false;
  if (value.actor != null && !isIdentifier(value.actor)) return false;
  const origin = value.origin;
  if (
    origin != null &&
    (typeof origin !== "string" || origin.length > ORIGIN_MAX || !ORIGIN_PATTERN.test(origin))
  )
    return false;
  const stream = value.stream;
  if (stream === undefined) return true;
  if (
    typeof stream !== "object" ||
    stream === null ||
    Object.getPrototypeOf(stream) !== Object.prototype
  )
    return false;
  const ref = stream as Record<string, unknown>;
  if (Object.keys(ref).length !== 2 || !KINDS.has(ref.kind)) return false;
  return isIdentifier(ref.id);
}
