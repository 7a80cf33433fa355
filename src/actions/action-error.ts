import { describeError, SpoolError } from "../spec/index.js";
import type { ActionErrorData } from "./step-outcome.js";

/** Longest error message the log takes (the catalog's limit). */
const MESSAGE_MAX = 20_000;

/**
 * How a thrown value is recorded: a `SpoolError` keeps its `code` and `retryable`; anything else
 * is `action.error` with its message. Never throws; messages are cut to the catalog's limit.
 */
export function toActionError(error: unknown): ActionErrorData {
  const text = describeError(error) || "the action failed without a message";
  const message = text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX - 1)}…` : text;
  if (error instanceof SpoolError) return { code: error.code, message, retryable: error.retryable };
  return { code: "action.error", message };
}

/**
 * Whether another attempt may help: false only for a `SpoolError` that says `retryable: false`
 * (it knows the same call fails again); errors of unknown kind are worth a retry.
 */
export function mayRetry(error: unknown): boolean {
  return !(error instanceof SpoolError) || error.retryable;
}
