import { z } from "zod";
import { defineEvent, identifier } from "./define-event.js";

/** Action ids come from the model's `id` attribute; same characters as other identifiers. */
const actionId = identifier;
const durationMs = z.number().nonnegative();
const attempt = z.number().int().min(1);

/** A failure as the model and the log see it: a stable code and a message, never a stack. */
export const actionError = z.strictObject({
  code: z.string().min(1).max(200),
  message: z.string().max(20_000),
  retryable: z.boolean().optional(),
});

const actionStreams = ["step", "task"] as const;

/**
 * The lifecycle of an action the model asked for. `action.dispatched` is durable before its
 * executor is called; exactly one terminal event (`succeeded`, `failed`, `timed-out`, `skipped`,
 * `cancelled`) follows for every dispatched or rejected action.
 */
export const actionEvents = {
  "action.dispatched": defineEvent({
    description:
      "An action's intent, durable before its executor is called: what runs, how, and after what.",
    criticality: "critical",
    intent: true,
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      type: z.enum(["tool", "agent", "relic", "workflow", "llm", "internal"]),
      mode: z.enum(["sync", "async", "fire_and_forget"]),
      name: z.string().min(1).max(200),
      /** Parameters after `$name` substitution: exactly what the executor receives. */
      parameters: z.record(z.string(), z.unknown()),
      depends_on: z.array(actionId).max(256),
      output_key: z.string().min(1).max(128).optional(),
      timeout_ms: z.number().int().positive().optional(),
      retry: z.number().int().min(0).max(100),
      on_error: z.enum(["fail", "skip", "retry"]),
      in_thought: z.boolean(),
      /** Milliseconds the action waited for its dependencies after it was parsed. */
      waited_ms: durationMs.optional(),
    }),
  }),
  "action.started": defineEvent({
    description: "An attempt of a dispatched action began running in its executor.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({ action_id: actionId, attempt }),
  }),
  "action.progress": defineEvent({
    description: "A partial result an action streamed while running; droppable.",
    criticality: "droppable",
    streams: actionStreams,
    schema: z.strictObject({ action_id: actionId, attempt, data: z.unknown() }),
  }),
  "action.retrying": defineEvent({
    description: "An attempt failed and another follows after a backoff delay.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      attempt,
      error: actionError,
      delay_ms: durationMs,
      duration_ms: durationMs,
    }),
  }),
  "action.succeeded": defineEvent({
    description: "An action finished; its output is stored under its output_key if it has one.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      attempt,
      output: z.unknown(),
      duration_ms: durationMs,
    }),
  }),
  "action.failed": defineEvent({
    description: "An action failed for good; its dependents are skipped unless on_error says skip.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      attempt,
      error: actionError,
      duration_ms: durationMs,
    }),
  }),
  "action.timed-out": defineEvent({
    description: "An attempt ran past the action's timeout and was cancelled.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      attempt,
      timeout_ms: z.number().int().positive(),
      duration_ms: durationMs,
      /** True when a retry follows. */
      will_retry: z.boolean(),
    }),
  }),
  "action.skipped": defineEvent({
    description:
      "An action did not run: a dependency failed or never appeared, a cycle, or a blocked name.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      reason: z.enum([
        "dependency-failed",
        "dependency-missing",
        "dependency-cycle",
        "self-dependency",
        "on-error-skip",
        "unknown-executor",
        "not-allowed",
        "bad-parameters",
      ]),
      message: z.string().min(1).max(2000),
      /** The action whose failure caused this skip, when there is one. */
      cause_action: actionId.optional(),
    }),
  }),
  "action.cancelled": defineEvent({
    description: "An action was stopped because the step that owned it was cancelled.",
    criticality: "critical",
    streams: actionStreams,
    schema: z.strictObject({
      action_id: actionId,
      reason: z.string().min(1).max(2000),
      duration_ms: durationMs.optional(),
    }),
  }),
  "protocol.error": defineEvent({
    description:
      "The model's output broke the protocol (unclosed tag, bad attribute, body not JSON, …); parsing went on.",
    criticality: "critical",
    streams: ["step"],
    schema: z.strictObject({
      code: z.string().min(1).max(100),
      message: z.string().min(1).max(2000),
      offset: z.number().int().nonnegative(),
      line: z.number().int().min(1),
      column: z.number().int().min(1),
      expected: z.string().max(500).optional(),
      action_id: z.string().max(200).optional(),
    }),
  }),
};
