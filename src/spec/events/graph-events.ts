import { z } from "zod";
import { defineEvent, identifier } from "./define-event.js";
import { usageData } from "./message-events.js";

const durationMs = z.number().nonnegative();
const nodeId = z.string().min(1).max(200);
const graphStreams = ["task", "thread", "continuity"] as const;
const error = z.strictObject({ code: z.string().min(1).max(200), message: z.string().max(20_000) });

/** A model call of a thread. */
const modelStep = z.strictObject({
  kind: z.literal("model"),
  thread: identifier,
  index: z.number().int().nonnegative(),
  provider: z.string().min(1).max(200),
  model: z.string().max(200),
  /** The input tokens estimated before the call; with the reported usage it calibrates estimates. */
  estimated_input_tokens: z.number().int().nonnegative().optional(),
});

/** A node of a workflow graph. */
const graphStep = z.strictObject({
  kind: z.literal("graph"),
  graph: identifier,
  node: nodeId,
  name: z.string().max(200).optional(),
});

/**
 * Steps (a thread's model calls, a workflow's nodes) and workflow graphs, for observability: the
 * knowledge sink renders a node status table from them.
 */
export const graphEvents = {
  "step.started": defineEvent({
    description:
      "A step began: a model call of a thread (`kind: model`) or a node of a workflow graph (`kind: graph`).",
    criticality: "critical",
    intent: true,
    streams: ["step", "task"],
    schema: z.discriminatedUnion("kind", [modelStep, graphStep]),
  }),
  "step.completed": defineEvent({
    description:
      "A step ended: a model call with its usage and stop reason, or a graph node with its status.",
    criticality: "critical",
    streams: ["step", "task"],
    schema: z.discriminatedUnion("kind", [
      modelStep.extend({
        usage: usageData,
        stop_reason: z.string().min(1).max(200),
        duration_ms: durationMs,
      }),
      graphStep.extend({
        status: z.enum(["succeeded", "failed", "skipped"]),
        duration_ms: durationMs,
        error: error.optional(),
      }),
    ]),
  }),
  "graph.started": defineEvent({
    description: "A workflow graph began, with its nodes and their dependencies.",
    criticality: "critical",
    streams: graphStreams,
    schema: z.strictObject({
      graph: identifier,
      name: z.string().min(1).max(200),
      nodes: z
        .array(
          z.strictObject({
            node: nodeId,
            name: z.string().max(200).optional(),
            depends_on: z.array(nodeId).max(256).optional(),
          }),
        )
        .max(10_000),
    }),
  }),
  "foreach.completed": defineEvent({
    description: "A graph node that ran once per item finished all its items.",
    criticality: "critical",
    streams: graphStreams,
    schema: z.strictObject({
      graph: identifier,
      node: nodeId,
      items: z.number().int().nonnegative(),
      succeeded: z.number().int().nonnegative(),
      failed: z.number().int().nonnegative(),
      duration_ms: durationMs,
    }),
  }),
  "graph.completed": defineEvent({
    description: "A workflow graph finished with every node done.",
    criticality: "critical",
    streams: graphStreams,
    schema: z.strictObject({
      graph: identifier,
      duration_ms: durationMs,
      result: z.unknown().optional(),
    }),
  }),
  "graph.error": defineEvent({
    description: "A workflow graph stopped on an error.",
    criticality: "critical",
    streams: graphStreams,
    schema: z.strictObject({ graph: identifier, node: nodeId.optional(), error }),
  }),
  "graph.cancelled": defineEvent({
    description: "A workflow graph was cancelled before it finished.",
    criticality: "critical",
    streams: graphStreams,
    schema: z.strictObject({ graph: identifier, reason: z.string().min(1).max(2000) }),
  }),
};
