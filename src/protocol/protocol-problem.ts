import type { SourcePosition } from "./action-request.js";
import type { ProtocolErrorCode, ProtocolEvent } from "./protocol-event.js";

/** One thing wrong with a tag or an action body, before it becomes an `error` event. */
export interface Problem {
  code: ProtocolErrorCode;
  message: string;
  at: SourcePosition;
  expected?: string;
}

/** The catalog's limit on a `protocol.error` message. */
const MAX_MESSAGE = 2000;

/** `line:column` of a position, as messages show it. */
export function where(at: SourcePosition): string {
  return `${at.line}:${at.column}`;
}

/** A value quoted for a message, cut to a readable length. */
export function quote(value: string, max = 60): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

/**
 * One `error` event for everything wrong with one tag or action: the first problem's code,
 * position and `expected`, and a message that lists every problem (so the model can fix them
 * all in one go) and then `outcome` (what became of the tag), cut to the event catalog's 2,000
 * characters (the outcome is kept).
 */
export function problemsToError(
  problems: readonly Problem[],
  actionId?: string,
  outcome?: string,
): Extract<ProtocolEvent, { type: "error" }> {
  const first = problems[0]!;
  let message = first.message;
  if (problems.length > 1) {
    message += ` Also: ${problems
      .slice(1)
      .map((problem) => problem.message)
      .join(" ")}`;
  }
  if (outcome) message += ` ${outcome}`;
  if (message.length > MAX_MESSAGE) {
    message = `${message.slice(0, MAX_MESSAGE - 1 - (outcome ? outcome.length + 1 : 0))}…${outcome ? ` ${outcome}` : ""}`;
  }
  return {
    type: "error",
    code: first.code,
    message,
    at: first.at,
    ...(first.expected === undefined ? {} : { expected: first.expected }),
    ...(actionId === undefined ? {} : { actionId }),
  };
}
