import type { ActionCall, ActionRefusal, CheckedActionExecutor } from "../actions/index.js";
import { describeParameterIssues } from "../actions/index.js";
import { RelicError } from "./relic-error.js";
import type { RelicHost } from "./relic-host.js";

/** `kv.get` → `{ relic: "kv", method: "get" }`; `undefined` when the name has no dot. */
export function splitRelicAction(name: string): { relic: string; method: string } | undefined {
  const dot = name.indexOf(".");
  if (dot <= 0 || dot === name.length - 1) return undefined;
  return { relic: name.slice(0, dot), method: name.slice(dot + 1) };
}

/**
 * The executor of `type="relic"` actions over `host`. An action's `name` is
 * `<relic>.<method>` (`kv.get`, `http.request`); its `parameters` are the method's.
 *
 * Contract: `canRun` is true exactly for the names in `names()` (every method of every relic),
 * so anything else is skipped `unknown-executor` with that list. `check` validates the parameters
 * with the method's zod schema and refuses invalid ones as `bad-parameters`, naming every field
 * and what was wrong; the relic is then neither started nor called. `execute` goes through
 * `host.call` (which validates again, starts the relic if needed and logs the call) with the
 * action's signal, so a timeout or cancellation aborts the relic call.
 */
export function createRelicExecutor(host: RelicHost): CheckedActionExecutor {
  const methodOf = (name: string) => {
    const split = splitRelicAction(name);
    if (!split) return undefined;
    const description = host.describe(split.relic);
    if (!description || !Object.hasOwn(description.methods, split.method)) return undefined;
    return { ...split, spec: description.methods[split.method]! };
  };
  return {
    type: "relic",
    canRun: (name) => methodOf(name) !== undefined,
    names: () => host.methods(),
    check(name, parameters): ActionRefusal | undefined {
      const found = methodOf(name);
      if (!found) return undefined;
      const parsed = found.spec.parameters.safeParse(parameters);
      if (parsed.success) return undefined;
      return {
        reason: "bad-parameters",
        message: `bad parameters for relic method "${name}": ${describeParameterIssues(parsed.error)}. Call it again with parameters that match its schema.`,
      };
    },
    execute(call: ActionCall) {
      const split = splitRelicAction(call.name);
      if (!split) {
        return Promise.reject(
          new RelicError(
            "relic.unknown",
            `"${call.name}" does not name a relic method; relic actions are named <relic>.<method>`,
            { hint: `Use one of: ${host.methods().join(", ") || "(no relics)"}` },
          ),
        );
      }
      return host.call(split.relic, split.method, call.parameters, {
        signal: call.signal,
        actionId: call.actionId,
      });
    },
  };
}
