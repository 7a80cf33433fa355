import { z } from "zod";
import { artifactRef, defineEvent, identifier, ulidString } from "./define-event.js";

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
      /**
       * For a turn a source delivered (actor `source:<id>`): the chunks its digest covers, per
       * source, and the cursor after the last. Chunks are delivered once, in order, with no gap.
       */
      sources: z
        .array(
          z.strictObject({
            source_id: identifier,
            from_chunk: z.number().int().min(1),
            to_chunk: z.number().int().min(1),
            cursor: z.record(z.string(), z.unknown()),
          }),
        )
        .max(256)
        .optional(),
    }),
  }),
};
