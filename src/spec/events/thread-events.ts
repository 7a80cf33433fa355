import { z } from "zod";
import { artifactRef, defineEvent, identifier, ulidString } from "./define-event.js";

const reason = z.string().min(1).max(2000);

/** The lifecycle of threads: provider context lineages that run one directive each. */
export const threadEvents = {
  "thread.started": defineEvent({
    description: "A thread began running a directive, fresh or as the continuation of another.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      directive: z.string().min(1).max(200),
      chain_root: identifier,
      continuation_of: identifier.optional(),
      model: z.string().max(200).optional(),
      turn: ulidString.optional(),
      /** The agent manifest the thread runs with (tools, limits), when one: resume and replay use it. */
      agent: z.string().min(1).max(200).optional(),
      /**
       * The typed inputs the directive's instructions were filled with (`--input k=v`), when the
       * run gave any: resume and replay fill the same instructions from them.
       */
      inputs: z.record(z.string().max(200), z.unknown()).optional(),
      /**
       * The agent was offered `memory.search` (its session had a memory index): replay offers
       * it too, so the tools it compiles are the run's.
       */
      memory: z.literal(true).optional(),
      /** A child thread (an `agent` action): the thread, step and action that spawned it. */
      parent: z
        .strictObject({
          thread: identifier,
          step: z.string().min(1).max(200),
          action: identifier,
          depth: z.number().int().min(1),
        })
        .optional(),
    }),
  }),
  "thread.suspended": defineEvent({
    description:
      "A thread's run stopped at a limit of its directive; the thread has not ended, and the next turn goes on in it (`thread.resumed`).",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({ reason }),
  }),
  "thread.resumed": defineEvent({
    description: "A run went on in a thread that was suspended or cancelled.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({ reason }),
  }),
  "thread.completed": defineEvent({
    description: "A thread finished its work with a final response.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({ result: z.string().max(1_000_000).optional() }),
  }),
  "thread.failed": defineEvent({
    description: "A thread stopped on an error it could not recover from.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({ code: z.string().min(1).max(200), message: z.string().max(10_000) }),
  }),
  "thread.cancelled": defineEvent({
    description:
      "A thread's run was stopped on request (Ctrl-C, `runtime.cancel`, a turn that interrupts it, the runtime closing); the thread has not ended, and the next turn goes on in it (`thread.resumed`).",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({ reason }),
  }),
  "thread.continued": defineEvent({
    description:
      "A thread handed its work to a continuation thread, with the summary it passed on.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      continuation: identifier,
      reason,
      summary: artifactRef.optional(),
      pressure_ratio: z.number().nonnegative().optional(),
      /** `summary`: seeded with the summary chain; `trailing-only`: the last resort without one. */
      mode: z.enum(["summary", "trailing-only"]).optional(),
      /** The summary passed on (a `summary.completed` id) and its size. */
      summary_id: identifier.optional(),
      summary_tokens: z.number().int().nonnegative().optional(),
      /** The thread's context before the handoff, and the continuation's seed after it. */
      tokens_before: z.number().int().nonnegative().optional(),
      tokens_after: z.number().int().nonnegative().optional(),
    }),
  }),
};
