import type { z } from "zod";

/** What a tool's `execute` gets besides its parameters. */
export interface ToolContext {
  /** The action's id in its step. */
  actionId: string;
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number;
  /** Aborted on timeout or cancellation: stop and settle soon after. */
  signal: AbortSignal;
  /** Streams a partial result: logged as droppable `action.progress`, seen by subscribers. */
  progress(data: unknown): void;
}

/**
 * A tool the model can call with `<action type="tool">`.
 *
 * Contract: `parameters` is a zod schema; the executor validates the model's parameters with it
 * before dispatch and `execute` receives the parsed output (defaults and transforms applied).
 * `execute` resolves with a JSON-able result or throws (a `SpoolError` keeps its code and
 * `retryable`). `idempotent` tools may be re-run after a crash left them interrupted; others never.
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Unique among the registry's tools; what the model writes as `name`. */
  name: string;
  /** One or two sentences for the model: what it does and when to use it. */
  description: string;
  parameters: S;
  /** True when running it twice leaves the world as running it once: resume may re-run it. */
  idempotent?: boolean;
  /**
   * True when running it changes the world: files, processes, remote state. The runtime
   * serialises side-effecting actions of one continuity, and resume never re-runs a
   * side-effecting tool that is not also `idempotent`. Absent means false.
   */
  sideEffects?: boolean;
  execute(parameters: z.output<S>, context: ToolContext): Promise<unknown> | unknown;
}

/** Declares a tool; the identity function that infers `execute`'s parameter type from the schema. */
export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> {
  return tool;
}
