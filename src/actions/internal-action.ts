import { z } from "zod";
import type { ActionLog } from "./action-log.js";
import type { VariableStore } from "./variable-store.js";

/**
 * What an internal action's `run` gets: the call's identity and signal, and the runtime state it
 * may change. Every change it makes must be recorded through `log` (`variable.set`,
 * `feed.added`, …) so a replay rebuilds it without running the action.
 */
export interface InternalActionContext {
  actionId: string;
  attempt: number;
  signal: AbortSignal;
  progress(data: unknown): void;
  variables: VariableStore;
  log: ActionLog;
}

/**
 * One built-in action the model can call with `<action type="internal">`: a name, a zod schema
 * for its parameters, and `run` with the parsed parameters.
 *
 * Contract: parameters are validated before dispatch (invalid: `action.skipped`
 * `bad-parameters`). `run` resolves with a JSON-able result or throws; it records its own state
 * changes through `context.log` before it resolves.
 */
export interface InternalActionDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: S;
  run(parameters: z.output<S>, context: InternalActionContext): Promise<unknown> | unknown;
}

/** Any internal action, whatever its schema. */
// biome-ignore lint/suspicious/noExplicitAny: a table holds actions of every parameter type.
export type AnyInternalAction = InternalActionDefinition<any>;

/** Declares an internal action; infers `run`'s parameter type from the schema. */
export function defineInternalAction<S extends z.ZodType>(
  action: InternalActionDefinition<S>,
): InternalActionDefinition<S> {
  return action;
}

/**
 * The `internal_actions` section of an agent manifest. `enabled: false` refuses every internal
 * action; `allowed_actions`, when present, is the only ones allowed; `blocked_actions` are
 * refused even when also allowed. A refusal is `action.skipped` with reason `not-allowed`.
 * The camelCase spellings (`allowedActions`, `blockedActions`), as `src/feeds` parses the
 * manifest into, are accepted too; a name listed under either spelling counts.
 */
export const internalActionsPolicySchema = z.strictObject({
  enabled: z.boolean().default(true),
  allowed_actions: z.array(z.string().min(1)).optional(),
  blocked_actions: z.array(z.string().min(1)).optional(),
  allowedActions: z.array(z.string().min(1)).readonly().optional(),
  blockedActions: z.array(z.string().min(1)).readonly().optional(),
});

/** An `internal_actions` section, as written or as `src/feeds` parses it. */
export type InternalActionsPolicy = z.input<typeof internalActionsPolicySchema>;

/** The reason `name` is not allowed under `policy`, or `undefined` when it is. */
export function internalActionRefusal(
  policy: InternalActionsPolicy,
  name: string,
): string | undefined {
  const allowed = policy.allowed_actions ?? policy.allowedActions;
  const blocked = [...(policy.blocked_actions ?? []), ...(policy.blockedActions ?? [])];
  if (policy.enabled === false) {
    return `internal actions are disabled for this agent (internal_actions.enabled is false), so "${name}" did not run.`;
  }
  if (blocked.includes(name)) {
    return `the internal action "${name}" is blocked for this agent (internal_actions.blocked_actions), so it did not run.`;
  }
  if (allowed && !allowed.includes(name)) {
    return `the internal action "${name}" is not in internal_actions.allowed_actions (allowed: ${allowed.join(", ") || "none"}), so it did not run.`;
  }
  return undefined;
}
