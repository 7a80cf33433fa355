import { ConfigError, SpoolError } from "../spec/index.js";
import type { ActionLog } from "./action-log.js";
import type { ActionRefusal, CheckedActionExecutor } from "./checked-executor.js";
import type { ActionCall } from "./executor.js";
import {
  type AnyInternalAction,
  type InternalActionsPolicy,
  internalActionRefusal,
  internalActionsPolicySchema,
} from "./internal-action.js";
import { describeParameterIssues } from "./parameter-issues.js";
import type { VariableStore } from "./variable-store.js";

/**
 * A checked table of internal actions and their policy (`internalActionTable`): made once and
 * shared by the executors of many steps, since checking the policy costs more than a step.
 */
export interface InternalActionTable {
  readonly byName: ReadonlyMap<string, AnyInternalAction>;
  readonly policy: InternalActionsPolicy;
}

/** Options of `createInternalExecutor`. */
export interface InternalExecutorOptions {
  /**
   * The internal actions (`internalVariableActions()`, the feeds' actions, …), or a table
   * `internalActionTable` already checked.
   */
  actions: readonly AnyInternalAction[] | InternalActionTable;
  /** The manifest's `internal_actions` section (default: enabled, everything allowed). */
  policy?: InternalActionsPolicy;
  variables: VariableStore;
  /** Where the actions record their state changes: the step's log. */
  log: ActionLog;
}

/**
 * The executor of `type="internal"` actions: one per step, since its actions record to the step's
 * log.
 *
 * Contract: an unknown name is `unknown-executor` (with the list of names); a name the policy
 * refuses is `action.skipped` `not-allowed`, never a silent no-op; invalid parameters are
 * `bad-parameters` with their field paths. The policy is validated on creation: an unknown field,
 * or a name in `allowed_actions`/`blocked_actions` that is not in the table, is a `ConfigError`.
 */
export function createInternalExecutor(options: InternalExecutorOptions): CheckedActionExecutor {
  const { byName, policy } =
    "byName" in options.actions
      ? options.actions
      : internalActionTable(options.actions, options.policy);
  const refuse = (name: string, parameters: Record<string, unknown>): ActionRefusal | undefined => {
    const action = byName.get(name);
    if (!action) return undefined;
    const notAllowed = internalActionRefusal(policy, name);
    if (notAllowed) return { reason: "not-allowed", message: notAllowed };
    const parsed = action.parameters.safeParse(parameters);
    if (parsed.success) return undefined;
    return {
      reason: "bad-parameters",
      message: `bad parameters for internal action "${name}": ${describeParameterIssues(parsed.error)}. Call it again with parameters that match its schema.`,
    };
  };
  return {
    type: "internal",
    canRun: (name) => byName.has(name),
    names: () => [...byName.keys()],
    check: refuse,
    async execute(call: ActionCall) {
      const action = byName.get(call.name);
      const refusal = action ? refuse(call.name, call.parameters) : undefined;
      if (!action || refusal) {
        throw new SpoolError(
          refusal ? `action.${refusal.reason}` : "action.unknown-internal",
          refusal?.message ?? `there is no internal action named "${call.name}"`,
        );
      }
      const parsed = action.parameters.parse(call.parameters);
      return action.run(parsed, {
        actionId: call.actionId,
        attempt: call.attempt,
        signal: call.signal,
        progress: call.progress,
        variables: options.variables,
        log: options.log,
      });
    },
  };
}

/**
 * Checks a table of internal actions and its policy once: two actions with one name, an unknown
 * field of the policy, or a name in `allowed_actions`/`blocked_actions` that is not in the table
 * is a `ConfigError`.
 */
export function internalActionTable(
  actions: readonly AnyInternalAction[],
  policy: InternalActionsPolicy = {},
): InternalActionTable {
  const byName = actionsByName(actions);
  return { byName, policy: parsePolicy(policy, byName) };
}

/**
 * `table`'s policy over other `actions` (each step's own binding of the same feed actions):
 * checked as `internalActionTable` checks a table, without parsing the policy again (`table`'s
 * is already), so a step does not pay for it.
 */
export function withInternalActions(
  table: InternalActionTable,
  actions: readonly AnyInternalAction[],
): InternalActionTable {
  const byName = actionsByName(actions);
  checkListedNames(table.policy, byName);
  return { byName, policy: table.policy };
}

function actionsByName(actions: readonly AnyInternalAction[]): Map<string, AnyInternalAction> {
  const byName = new Map<string, AnyInternalAction>();
  for (const action of actions) {
    if (byName.has(action.name)) {
      throw new ConfigError(
        "config.internal-actions",
        `two internal actions are named "${action.name}"`,
        {
          hint: "Give every internal action its own name",
        },
      );
    }
    byName.set(action.name, action);
  }
  return byName;
}

function parsePolicy(
  input: InternalActionsPolicy,
  known: ReadonlyMap<string, AnyInternalAction>,
): InternalActionsPolicy {
  const parsed = internalActionsPolicySchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(
      "config.internal-actions",
      `internal_actions is invalid: ${describeParameterIssues(parsed.error)}`,
      { hint: "Use { enabled, allowed_actions?, blocked_actions? } with lists of action names" },
    );
  }
  if (parsed.data.allowed_actions && parsed.data.allowedActions) {
    throw new ConfigError(
      "config.internal-actions",
      "internal_actions has both allowed_actions and allowedActions",
      { hint: "Give the allowed list once" },
    );
  }
  checkListedNames(parsed.data, known);
  return parsed.data;
}

/** Throws unless every action name a parsed policy lists is in `known`. */
function checkListedNames(
  policy: InternalActionsPolicy,
  known: ReadonlyMap<string, AnyInternalAction>,
): void {
  const { allowed_actions, blocked_actions, allowedActions, blockedActions } = policy;
  const listed = [
    ...(allowed_actions ?? []),
    ...(blocked_actions ?? []),
    ...(allowedActions ?? []),
    ...(blockedActions ?? []),
  ];
  const unknown = listed.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new ConfigError(
      "config.internal-actions",
      `internal_actions names unknown actions: ${unknown.join(", ")}`,
      { hint: `Known internal actions: ${[...known.keys()].join(", ") || "none"}` },
    );
  }
}
