import { z } from "zod";
import { defineEvent } from "./define-event.js";

/** Per-token output of a model step, as it streams. */
export const tokenEvents = {
  "token.delta": defineEvent({
    description:
      "A piece of a model's output as it streamed; droppable, adjacent deltas of one block coalesce.",
    criticality: "droppable",
    streams: ["step"],
    schema: z.strictObject({
      block: z.string().min(1).max(64),
      text: z.string(),
    }),
    coalesce: (earlier, later) =>
      earlier.block === later.block
        ? { block: earlier.block, text: earlier.text + later.text }
        : undefined,
  }),
};
