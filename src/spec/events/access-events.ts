import { z } from "zod";
import { artifactHash, defineEvent, identifier } from "./define-event.js";

const role = z.enum(["owner", "writer", "reader"]);

/**
 * The HTTP service's access records: bearer tokens (stored only as the sha256 of their secret,
 * never the secret) and each continuity's policy for a turn that arrives while a run is going.
 * Tokens live on the reserved continuity `spool:access`, so every process sharing the store sees
 * a revocation at its next request.
 */
export const accessEvents = {
  "access-token.created": defineEvent({
    description:
      "A bearer token was made for an actor, with a role over one continuity or all of them.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({
      token_id: identifier,
      /** sha256 of the secret, lowercase hex: the secret itself is shown once and never stored. */
      token_hash: artifactHash,
      /** The actor every request with the token acts as. */
      actor_id: identifier,
      role,
      /** The one continuity the token reaches; all of them when absent. */
      scope: identifier.optional(),
      label: z.string().max(200).optional(),
    }),
  }),
  "access-token.revoked": defineEvent({
    description: "A bearer token stopped working, at once, for every request and open stream.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({ token_id: identifier, reason: z.string().max(1000).optional() }),
  }),
  "turn-policy.set": defineEvent({
    description:
      "An owner chose what a turn arriving mid-run does: wait (queue), cancel the run (interrupt), or be refused (reject).",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({ policy: z.enum(["queue", "interrupt", "reject"]) }),
  }),
};
