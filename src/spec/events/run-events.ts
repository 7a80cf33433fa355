import { z } from "zod";
import { compiledContextData } from "./context-events.js";
import { defineEvent, identifier, ulidString } from "./define-event.js";
import { usageData } from "./message-events.js";

const limitName = z.enum(["max_turns", "max_tokens", "max_spend", "wall_time", "spawn_depth"]);
const error = z.strictObject({ code: z.string().min(1).max(200), message: z.string().max(20_000) });
const stepId = z.string().min(1).max(200);

/**
 * The agent loop's own record: runs (one per turn handled or resumed), the decision taken after
 * every step, the context each model call was given, limits, queued turns, and what recovery
 * found after a crash. With these, a run replays without the world.
 */
export const runEvents = {
  "run.started": defineEvent({
    description:
      "The agent began handling a turn on a thread (or went on with an interrupted run after a restart).",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      turn: ulidString.optional(),
      /** The task given to a child thread (an `agent` action's parameters), as its first message. */
      input: z.string().max(1_000_000).optional(),
      /** True when this run continues one a crash interrupted. */
      resumed: z.boolean(),
      directive: z.string().min(1).max(200),
      model: z.string().min(1).max(200),
      /** The next step's index in the thread. */
      next_step: z.number().int().nonnegative(),
    }),
  }),
  "model.described": defineEvent({
    description:
      "The context window and output limit a run's model is measured against, and where they came from (once per model per runtime, before its first run).",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      model: z.string().min(1).max(200),
      context_window: z.number().int().positive(),
      max_output_tokens: z.number().int().positive(),
      /** env (SPOOL_CONTEXT_WINDOW), config (model_info), server, catalogue or default (assumed). */
      source: z.enum(["env", "config", "server", "catalogue", "default"]),
      /** What the source was: the server's route and field, the config key, … */
      detail: z.string().max(500),
    }),
  }),
  "run.completed": defineEvent({
    description:
      "A run ended: completed with a final response, failed, cancelled, or stopped by a limit.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      turn: ulidString.optional(),
      status: z.enum(["completed", "failed", "cancelled", "limit", "continued"]),
      steps: z.number().int().nonnegative(),
      result: z.string().max(1_000_000).optional(),
      error: error.optional(),
      usage: usageData,
      cost_usd: z.number().nonnegative(),
    }),
  }),
  "loop.decided": defineEvent({
    description:
      "What the loop decided after a step: continue with the action results, end the run, or stop.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      step: stepId,
      decision: z.enum(["continue", "complete", "fail", "cancel", "limit", "retry"]),
      reason: z.string().min(1).max(2000),
      /** Actions whose results go to the model in the next step. */
      results: z.number().int().nonnegative(),
    }),
  }),
  "context.compiled": defineEvent({
    description:
      "The context a model call was given: which messages of the thread, in how many tokens.",
    criticality: "critical",
    streams: ["step"],
    schema: compiledContextData,
  }),
  "limit.reached": defineEvent({
    description: "A limit of the directive or the runtime stopped a run (or refused a spawn).",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({ limit: limitName, value: z.number(), max: z.number() }),
  }),
  "turn.queued": defineEvent({
    description: "A turn arrived while a run was going on and waits for it to end.",
    criticality: "critical",
    streams: ["continuity"],
    schema: z.strictObject({ turn: ulidString, behind: identifier, position: z.number().int() }),
  }),
  "recovery.started": defineEvent({
    description:
      "A runtime took up a continuity another runtime had run (after a crash or a close) and began recovering from the log what it left open, if anything. Replay restarts its runtime here.",
    criticality: "critical",
    streams: ["continuity"],
    schema: z.strictObject({
      /** Threads with a run that had not completed. */
      open_runs: z.array(identifier).max(10_000),
      /** Turns no run had taken. */
      waiting_turns: z.number().int().nonnegative(),
      /** Task streams whose task had no result: each gets `action.interrupted`. */
      open_tasks: z.array(identifier).max(10_000).optional(),
      /** Summary jobs (worker streams) started and never ended: each gets `summary.failed`. */
      open_summaries: z.array(identifier).max(10_000).optional(),
    }),
  }),
  "runtime.closed": defineEvent({
    description:
      "A runtime that ran the continuity closed: it cancels the run and the tasks it names (each then logs its own `action.cancelled`), lets background work finish and releases its lease. Replay closes its runtime here.",
    criticality: "critical",
    streams: ["continuity"],
    schema: z.strictObject({
      reason: z.string().min(1).max(2000),
      /** The thread whose running run the close cancels. */
      run: identifier.optional(),
      /** Task streams still running, which the close cancels, in order. */
      tasks: z.array(identifier).max(10_000),
    }),
  }),
  "step.interrupted": defineEvent({
    description:
      "Recovery found a model call a crash cut off: it is not sent again; its actions are reported.",
    criticality: "critical",
    streams: ["step"],
    schema: z.strictObject({ reason: z.string().min(1).max(2000) }),
  }),
  "action.interrupted": defineEvent({
    description:
      "Recovery found an action a crash cut off: durable intent and no result (or parsed and never dispatched). It is re-run only if its tool is idempotent.",
    criticality: "critical",
    streams: ["step", "task"],
    schema: z.strictObject({
      action_id: identifier,
      name: z.string().min(1).max(200),
      /** False when the crash came before its dispatch (nothing ran). */
      dispatched: z.boolean(),
      rerun: z.boolean(),
      reason: z.string().min(1).max(2000),
    }),
  }),
};
