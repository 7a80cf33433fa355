import { z } from "zod";
import { artifactHash, defineEvent } from "./define-event.js";

/** Blobs stored beside the log and referenced by their sha256. */
export const artifactEvents = {
  "artifact.stored": defineEvent({
    description: "A content-addressed blob was stored and is referenced from this continuity.",
    criticality: "critical",
    streams: ["continuity", "thread", "step", "task", "source", "worker"],
    schema: z.strictObject({
      hash: artifactHash,
      size: z.number().int().nonnegative(),
      media_type: z.string().min(1).max(255),
      name: z.string().max(1024).optional(),
      purpose: z.string().max(200).optional(),
    }),
  }),
};
