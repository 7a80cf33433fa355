import { z } from "zod";
import { defineEvent, identifier } from "./define-event.js";

/** Events that create and shape a continuity: the one chat a user keeps forever. */
export const continuityEvents = {
  "continuity.created": defineEvent({
    description: "A continuity began: one chat forever, bound to a workspace.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({
      title: z.string().min(1).max(200).optional(),
      workspace: z.string().min(1).max(4096).optional(),
      labels: z.record(z.string().max(64), z.string().max(256)).optional(),
    }),
  }),
  "continuity.archived": defineEvent({
    description: "A continuity was closed to new turns; its log stays readable.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({ reason: z.string().max(1000).optional() }),
  }),
  "actor.added": defineEvent({
    description: "Someone or something may now add input to the continuity.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({
      actor_id: identifier,
      kind: z.enum(["person", "bot", "source", "agent"]),
      name: z.string().max(200).optional(),
      access: z.enum(["owner", "write", "read"]),
    }),
  }),
  "actor.removed": defineEvent({
    description: "An actor lost access to the continuity.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({ actor_id: identifier, reason: z.string().max(1000).optional() }),
  }),
};
