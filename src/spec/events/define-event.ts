import { z } from "zod";
import type { Criticality, StreamKind } from "../event.js";

/**
 * The catalog's description of one event type: its schema, criticality and where it may appear.
 * Every event is made through a spec; there is no other way into the log.
 */
export interface EventSpec<S extends z.ZodType = z.ZodType> {
  /** Validates `data`. Write schemas strictly (`z.strictObject`): unknown fields are an error. */
  schema: S;
  criticality: Criticality;
  /** One sentence for docs/events.md and `spool` output. */
  description: string;
  /** Stream kinds this event may belong to; the first is the default when it is the continuity. */
  streams: readonly StreamKind[];
  /** An input from outside: `actor` and `origin` are required. */
  input?: boolean;
  /**
   * Critical events only: the logged intent of an effect that waits for it to be durable (a
   * tool's `action.dispatched`, a model call's `step.started`). Its write starts as soon as the
   * code appending it has run to its next wait, instead of after the rest of the event loop's
   * turn: the effect is not held up by work that has nothing to do with it (the rest of a model
   * stream), at the price of less company in that commit.
   */
  intent?: boolean;
  /**
   * Droppable events only: merge two adjacent pending events of the same stream into one, or
   * return `undefined` to keep them apart. Must return data the schema accepts. `earlier` is the
   * store's own pending copy (never a caller's object), so it may be reused; `later` must not be.
   */
  coalesce?: (earlier: z.output<S>, later: z.output<S>) => z.output<S> | undefined;
  /**
   * For the hottest types: a copy of `data` when it is plainly valid, checked without zod's
   * allocations, or `undefined` to leave the decision to the schema. Whatever it accepts, the
   * schema must accept with an equal result (a property test holds each one to that).
   */
  fastData?: (data: unknown) => z.output<S> | undefined;
}

/** Declares one event type; the identity function that keeps the schema's type. */
export function defineEvent<S extends z.ZodType>(spec: EventSpec<S>): EventSpec<S> {
  if (spec.coalesce && spec.criticality !== "droppable") {
    throw new TypeError("only droppable events may coalesce");
  }
  if (spec.intent && spec.criticality !== "critical") {
    throw new TypeError("only critical events may be intents");
  }
  return spec;
}

/** The characters of an identifier (at most `IDENTIFIER_MAX` of them). */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;
export const IDENTIFIER_MAX = 128;

/** The `identifier` rule without zod, for hot paths: true exactly when `identifier` accepts. */
export function isIdentifier(value: unknown): value is string {
  return (
    typeof value === "string" && value.length <= IDENTIFIER_MAX && IDENTIFIER_PATTERN.test(value)
  );
}

/** Identifiers of continuities, streams and actors: safe in paths, URLs and shells. */
export const identifier = z
  .string()
  .min(1, "must not be empty")
  .max(IDENTIFIER_MAX, `must be at most ${IDENTIFIER_MAX} characters`)
  .regex(
    IDENTIFIER_PATTERN,
    "must start with a letter or digit and hold only letters, digits and . _ : @ -",
  );

/** A reference to an artifact: the lowercase hex sha256 of its bytes. */
export const artifactHash = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "must be a lowercase hex sha256 (64 characters)");

/** An artifact referenced from an event, with what a reader needs without fetching it. */
export const artifactRef = z.strictObject({
  hash: artifactHash,
  size: z.number().int().nonnegative(),
  media_type: z.string().min(1).max(255),
  name: z.string().max(1024).optional(),
});

/** A ULID: 26 characters of Crockford base32. */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const ulidString = z.string().regex(ULID_PATTERN, "must be a ULID");
