import type { ActionExecutor } from "./executor.js";
import type { SerialQueue } from "./serial-queue.js";

/** Why an executor refuses a call before it is dispatched. */
export type RefusalReason = "not-allowed" | "bad-parameters";

/** A refusal: recorded as `action.skipped` with this reason and message; nothing runs. */
export interface ActionRefusal {
  reason: RefusalReason;
  /** What was wrong and how to fix it, addressed to the model. */
  message: string;
}

/**
 * An `ActionExecutor` that can also say what it has and refuse a call before it runs. Both
 * methods are optional; the scheduler uses them when present.
 *
 * Contract: `check` is pure and synchronous. It is called at dispatch time, after `$name`
 * substitution and before `action.dispatched` is recorded; a refusal becomes `action.skipped`
 * (`not-allowed`: a policy forbids it; `bad-parameters`: the parameters fail the schema), the
 * executor is never called, and retries and `on_error` do not apply (the same call would be
 * refused again). `names` lists what `canRun` accepts, for the `unknown-executor` message.
 * `serialQueue` names the queue a call of `name` waits its turn in (a side effect): each attempt
 * acquires it before it starts, so `action.started` and the attempt's timeout begin when the call
 * actually runs, never while it waits behind another side effect.
 */
export interface CheckedActionExecutor extends ActionExecutor {
  names?(): readonly string[];
  check?(name: string, parameters: Record<string, unknown>): ActionRefusal | undefined;
  /** The queue calls of `name` run one at a time in, or `undefined` to run at once. */
  serialQueue?(name: string): SerialQueue | undefined;
  /**
   * True when a call of `name` changes nothing outside the process and logs nothing of its own
   * besides progress (a tool without side effects): on a log that allows it
   * (`ActionLog.pureStartsEarly`) it starts while its intent is being written.
   */
  pure?(name: string): boolean;
}
