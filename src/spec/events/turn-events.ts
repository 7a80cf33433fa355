import { z } from "zod";
import { artifactRef, defineEvent, ulidString } from "./define-event.js";

/** Inputs appended to a continuity by its actors. */
export const turnEvents = {
  "turn.added": defineEvent({
    description: "An actor added input to the continuity; it may start foreground work.",
    criticality: "critical",
    streams: ["continuity"],
    input: true,
    schema: z.strictObject({
      text: z
        .string()
        .max(1_000_000, "must be at most 1,000,000 characters; store more as an artifact"),
      attachments: z.array(artifactRef).max(100).optional(),
      reply_to: ulidString.optional(),
    }),
  }),
};
