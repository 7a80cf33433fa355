import type { ActionRequest, ActionType } from "../protocol/index.js";
import { ConfigError } from "../spec/index.js";
import type { ActionLogData } from "./action-log.js";
import type { CheckedActionExecutor } from "./checked-executor.js";
import type { ActionExecutor } from "./executor.js";

/** Most retries an action may ask for (the catalog's limit). */
const MAX_RETRIES = 100;

/**
 * The executors by action type. Throws `ConfigError` when two executors claim one type.
 */
export function executorTable(
  executors: readonly (ActionExecutor | CheckedActionExecutor)[],
): ReadonlyMap<ActionType, CheckedActionExecutor> {
  const table = new Map<ActionType, CheckedActionExecutor>();
  for (const executor of executors) {
    if (table.has(executor.type)) {
      throw new ConfigError("config.executors", `two executors for action type ${executor.type}`, {
        hint: "Give the scheduler one executor per action type",
      });
    }
    table.set(executor.type, executor);
  }
  return table;
}

/**
 * Attempts an action gets: 1 + `retry` when it asks for retries (whatever `on_error` says), else
 * 1 + `defaultRetries` for `on_error: "retry"`, else 1. Retries are capped at 100.
 */
export function attemptsAllowed(request: ActionRequest, defaultRetries: number): number {
  const asked = Math.max(0, Math.floor(request.retry));
  const retries = asked > 0 ? asked : request.onError === "retry" ? defaultRetries : 0;
  return 1 + Math.min(MAX_RETRIES, retries);
}

/** A positive whole number of milliseconds, or none. */
function normalizeTimeout(ms: number | undefined): number | undefined {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return undefined;
  return Math.max(1, Math.ceil(ms));
}

/**
 * The `action.dispatched` event of `request`: its intent with the substituted `parameters`,
 * the time it waited for its dependencies, and its timeout in whole milliseconds.
 */
export function dispatchedData(
  request: ActionRequest,
  parameters: Record<string, unknown>,
  waitedMs: number,
): ActionLogData<"action.dispatched"> & { timeout_ms?: number } {
  const data: ActionLogData<"action.dispatched"> = {
    action_id: request.id,
    type: request.type,
    mode: request.mode,
    name: request.name,
    parameters,
    depends_on: [...request.dependsOn],
    retry: Math.min(MAX_RETRIES, Math.max(0, Math.floor(request.retry))),
    on_error: request.onError,
    in_thought: request.inThought,
    waited_ms: waitedMs,
  };
  if (request.outputKey !== undefined) data.output_key = request.outputKey;
  const timeoutMs = normalizeTimeout(request.timeoutMs);
  if (timeoutMs !== undefined) data.timeout_ms = timeoutMs;
  return data;
}
