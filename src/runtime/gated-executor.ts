import type {
  ActionCall,
  ActionExecutor,
  ActionRefusal,
  CheckedActionExecutor,
  SerialQueue,
} from "../actions/index.js";
import type { ActionType } from "../protocol/index.js";

/** Says whether the running directive may execute `name` of kind `type`. */
export type PermissionCheck = (type: ActionType, name: string) => boolean;

/** Options of `gateExecutor`. */
export interface GateOptions {
  permits: PermissionCheck;
  /** The name of the directive, for the refusal message. */
  directive: string;
  /**
   * True for calls that change the world: they run one at a time per continuity, through
   * `serial`, so two side effects of one continuity never interleave.
   */
  sideEffects?(name: string): boolean;
  serial?: SerialQueue;
}

/**
 * Wraps an executor with the directive's permissions, checked at dispatch: a call the directive
 * does not allow is refused (`action.skipped`, `not-allowed`) with the permission to add, before
 * anything runs. Calls with side effects name `serial` as their `serialQueue`: the scheduler
 * acquires it before each attempt, so their timeouts start when they run, not while they wait.
 * A tool without side effects is `pure`: on a fast log it starts while its intent is written.
 */
export function gateExecutor(
  inner: ActionExecutor | CheckedActionExecutor,
  options: GateOptions,
): CheckedActionExecutor {
  const checked = inner as CheckedActionExecutor;
  const { sideEffects } = options;
  return {
    type: inner.type,
    ...(inner.composite ? { composite: true } : {}),
    ...(inner.canRun ? { canRun: (name: string) => inner.canRun!(name) } : {}),
    ...(checked.names ? { names: () => checked.names!() } : {}),
    check(name, parameters): ActionRefusal | undefined {
      if (!options.permits(inner.type, name)) {
        return {
          reason: "not-allowed",
          message: `the directive "${options.directive}" may not run ${inner.type} "${name}"; its <permissions><execute> list does not include it. Use an allowed ${inner.type}, or add <${inner.type}>${name}</${inner.type}> to the directive's permissions.`,
        };
      }
      return checked.check?.(name, parameters);
    },
    serialQueue(name: string) {
      return options.serial && sideEffects?.(name) ? options.serial : undefined;
    },
    // A tool without side effects is pure; other kinds spawn, write or spend.
    ...(inner.type === "tool" && sideEffects ? { pure: (name: string) => !sideEffects(name) } : {}),
    execute: (call: ActionCall) => inner.execute(call),
  };
}
