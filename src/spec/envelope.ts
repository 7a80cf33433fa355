import { z } from "zod";
import { STREAM_KINDS } from "./event.js";
import { identifier, ulidString } from "./events/define-event.js";

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
    .max(200)
    // Stored as a column, not escaped JSON: control characters and lone surrogates would not survive.
    .regex(/^[^\p{Cc}\p{Cs}]+$/u, "must hold no control characters and no lone surrogates")
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

const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
const ORIGIN = /^[^\p{Cc}\p{Cs}]{1,200}$/u;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KEYS = new Set(["continuity", "type", "data", "stream", "actor", "origin", "ts", "id"]);
const KINDS: ReadonlySet<unknown> = new Set(STREAM_KINDS);

/**
 * A fast check that accepts only envelopes `envelopeSchema` also accepts (a property test holds
 * it to that); whatever it does not accept goes through the schema, which explains the problem.
 * Appending runs this for every event, so it avoids the general parser's allocations.
 */
export function isPlainEnvelope(input: unknown): input is Envelope {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  const value = input as Record<string, unknown>;
  for (const key in value) if (!KEYS.has(key) || !Object.hasOwn(value, key)) return false;
  if (typeof value.continuity !== "string" || !IDENTIFIER.test(value.continuity)) return false;
  if (typeof value.type !== "string" || value.ts !== undefined) return false;
  if (value.id !== undefined && (typeof value.id !== "string" || !ULID.test(value.id)))
    return false;
  if (value.actor != null && (typeof value.actor !== "string" || !IDENTIFIER.test(value.actor)))
    return false;
  const origin = value.origin;
  if (origin != null && (typeof origin !== "string" || origin.length > 200 || !ORIGIN.test(origin)))
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
  return typeof ref.id === "string" && IDENTIFIER.test(ref.id);
}
