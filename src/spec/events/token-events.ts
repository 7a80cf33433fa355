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
      /** Which content block: `text:0`, `reasoning:1`, `tool:2`, `refusal:3`. */
      block: z.string().min(1).max(64),
      text: z.string(),
      /**
       * The lengths (UTF-16 code units) of the provider deltas joined in `text`, in order, when
       * they were coalesced: a transcript rebuilds one line per delta from them.
       */
      deltas: z.array(z.number().int().nonnegative()).optional(),
    }),
    coalesce: (earlier, later) =>
      earlier.block === later.block
        ? {
            block: earlier.block,
            text: earlier.text + later.text,
            deltas: [
              ...(earlier.deltas ?? [earlier.text.length]),
              ...(later.deltas ?? [later.text.length]),
            ],
          }
        : undefined,
  }),
};
