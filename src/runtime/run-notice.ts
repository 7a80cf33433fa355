import type { StepOutputEvent } from "../actions/index.js";
import type { Usage } from "../providers/index.js";
import type { EventData } from "../spec/index.js";

/** Why a run stopped before its work was done. */
export type RunLimitName = "max_turns" | "max_tokens" | "max_spend" | "wall_time" | "spawn_depth";

/** How a run ended. */
export type RunStatus =
  | "completed"
  | "failed"
  | "cancelled"
  | "limit"
  | "interrupted"
  | "continued";

/**
 * What a running agent tells whoever watches it live (the terminal chat, a test, a server), in
 * the order it happens. Everything here is also in the log; a notice is a convenience for a
 * renderer, never the record.
 *
 * - `run-started` / `run-ended`: one run handles one turn (or resumes one) on a thread.
 * - `step-started` / `step-completed`: one model call; `completed` carries the usage the provider
 *   reported, the spend in USD (when the model's prices are known) and the context pressure
 *   (input tokens ÷ the model's window, when the window is known).
 * - `output`: the step's parsed output as it streams: `block-start`/`block-delta`/`block-end`
 *   with `kind` `thought` or `response` (response text after `$name` substitution), `action`
 *   when an action closed, `action-event` for its lifecycle (`action.dispatched`,
 *   `action.started`, `action.succeeded` with `duration_ms`, `action.failed`, `action.skipped`…),
 *   `step-error` for protocol and scheduling errors.
 * - `retry`: the provider call is being retried before its first byte.
 * - `limit`: a limit stopped the run.
 * - `queued`: a turn arrived while another ran and waits for it.
 * - `turn-received`: a turn another process queued for this owner (a second `spool chat`,
 *   `spool run --continuity`), before it runs: its actor and text, so a chat can show the question
 *   its answer is for; also a delivery turn this runtime's sources appended (`origin` `source`,
 *   with `delivery`), which a chat shows as one line rather than its digest.
 * - `handoff`: the thread was continued in a new one (one quiet line in a chat).
 * - `memory-notice`: once per session, the memory index failed (its `code`, and in `text` what
 *   happened and how to fix it); the session runs on without memory.
 * - `model-notice`: once per run and model, what the user should know of the model: its window
 *   was assumed (with the config.yaml line that says it), or it is deprecated (one dim line).
 */
export type RunNotice =
  | { type: "run-started"; continuity: string; thread: string; turn?: string; resumed: boolean }
  | { type: "step-started"; step: string; index: number; model: string; provider: string }
  | { type: "output"; step: string; event: StepOutputEvent }
  | { type: "retry"; step: string; attempt: number; delayMs: number; message: string }
  | {
      type: "step-completed";
      step: string;
      usage: Usage;
      /** USD for this step, when the model's prices are known. */
      costUsd?: number;
      /** Input tokens ÷ the model's context window, when the window is known. */
      pressure?: number;
      /** Totals of the run so far. */
      totals: RunTotals;
    }
  | { type: "limit"; limit: RunLimitName; value: number; max: number }
  | { type: "queued"; turn: string; position: number }
  | {
      type: "turn-received";
      continuity: string;
      turn: string;
      actor: string;
      text: string;
      /** The turn's origin, when known (`source` for a delivery turn). */
      origin?: string;
      /** For a delivery turn: what it delivered and the ends it announces (its logged data). */
      delivery?: {
        sources: NonNullable<EventData<"turn.added">["sources"]>;
        ends: NonNullable<EventData<"turn.added">["ends"]>;
      };
    }
  | { type: "handoff"; from: string; to: string; reason: string }
  | { type: "model-notice"; model: string; text: string }
  | { type: "memory-notice"; code: string; text: string }
  | {
      type: "run-ended";
      thread: string;
      status: RunStatus;
      /** The final response's text (after substitution), when there was one. */
      result?: string;
      error?: { code: string; message: string };
      totals: RunTotals;
    };

/** Counters of one run. */
export interface RunTotals {
  steps: number;
  inputTokens: number;
  outputTokens: number;
  /** USD, summed over steps whose model has known prices. */
  costUsd: number;
  actions: number;
}

/** Receives run notices. It must not throw; a throwing observer is ignored. */
export type RunObserver = (notice: RunNotice) => void;
