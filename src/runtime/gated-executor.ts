import type {
  ActionCall,
  ActionExecutor,
  ActionRefusal,
  CheckedActionExecutor,
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
 * anything runs. Calls with side effects go through `serial`.
 */
export function gateExecutor(
  inner: ActionExecutor | CheckedActionExecutor,
  options: GateOptions,
): CheckedActionExecutor {
  const checked = inner as CheckedActionExecutor;
  return {
    type: inner.type,
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
    execute(call: ActionCall) {
      if (options.serial && options.sideEffects?.(call.name)) {
        return options.serial.run(() => inner.execute(call));
      }
      return inner.execute(call);
    },
  };
}

/** Runs tasks one at a time, in the order they were handed over. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
