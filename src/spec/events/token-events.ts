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
    // Every streamed delta is one of these: a plain `{ block, text }`, with the `deltas` of the
    // deltas the log sink joined (most of a stream's appends), is copied without zod.
    fastData(data) {
      if (typeof data !== "object" || data === null) return undefined;
      if (Object.getPrototypeOf(data) !== Object.prototype) return undefined;
      let keys = 0;
      for (const key in data) {
        if ((key !== "block" && key !== "text" && key !== "deltas") || !Object.hasOwn(data, key))
          return undefined;
        keys += 1;
      }
      const { block, text, deltas } = data as { block?: unknown; text?: unknown; deltas?: unknown };
      if (typeof block !== "string" || typeof text !== "string") return undefined;
      if (block.length < 1 || block.length > 64) return undefined;
      if (keys === 2) return { block, text };
      const lengths = keys === 3 ? copyLengths(deltas) : undefined;
      return lengths === undefined ? undefined : { block, text, deltas: lengths };
    },
    coalesce(earlier, later) {
      if (earlier.block !== later.block) return undefined;
      // `earlier` is the append queue's own pending copy: its deltas list grows in place, so a
      // window of n deltas costs O(n), not O(n²).
      const deltas = earlier.deltas ?? [earlier.text.length];
      if (later.deltas) for (const length of later.deltas) deltas.push(length);
      else deltas.push(later.text.length);
      return { block: earlier.block, text: earlier.text + later.text, deltas };
    },
  }),
};

/** A copy of `value` when it is an array of non-negative safe integers (as zod checks it). */
function copyLengths(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const lengths: number[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const length: unknown = value[i];
    if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) return undefined;
    lengths[i] = length;
  }
  return lengths;
}
