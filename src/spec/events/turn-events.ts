import { z } from "zod";
import { artifactRef, defineEvent, identifier, ulidString } from "./define-event.js";

const count = z.number().int().nonnegative();

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
       * `lines`, `bytes` and `matches` sum the chunks' own counts, so a reader shows what the turn
       * brought without reading the chunks (absent in logs written before they were recorded).
       */
      sources: z
        .array(
          z.strictObject({
            source_id: identifier,
            from_chunk: z.number().int().min(1),
            to_chunk: z.number().int().min(1),
            cursor: z.record(z.string(), z.unknown()),
            lines: count.optional(),
            bytes: count.optional(),
            matches: z.record(z.string(), count).optional(),
          }),
        )
        .max(256)
        .optional(),
      /**
       * For a delivery turn: the sources whose end (`exhausted`, or `failed` for good) its text
       * announces. Absent in logs written before it was recorded (the end is then inferred).
       */
      ends: z
        .array(z.strictObject({ source_id: identifier, status: z.enum(["exhausted", "failed"]) }))
        .max(256)
        .optional(),
    }),
  }),
};
