import { z } from "zod";
import { VARIABLE_NAME_PATTERN } from "../protocol/index.js";
import { defineInternalAction } from "./internal-action.js";
import { toJsonValue } from "./json-value.js";

const variableName = z
  .string()
  .regex(
    VARIABLE_NAME_PATTERN,
    "must be a variable name: a letter or _ then letters, digits or _ (at most 128)",
  );

/**
 * `set_variable {name, value}`: records `variable.set` (`by: "action"`), durably, then stores
 * `value` as `$name`. Resolves with `{ name, value }` (the stored JSON form).
 */
export const setVariableAction = defineInternalAction({
  name: "set_variable",
  description: "Stores a value as $name for later actions and responses.",
  parameters: z.strictObject({ name: variableName, value: z.unknown() }),
  async run({ name, value }, context) {
    const stored = toJsonValue(value);
    // Logged first: a variable the log does not know of would not survive a replay.
    await context.log.record("variable.set", {
      name,
      value: stored,
      by: "action",
      action_id: context.actionId,
    });
    context.variables.set(name, stored);
    return { name, value: stored };
  },
});

/**
 * `delete_variable {name}`: removes `$name` (references to it stay literal again) and records
 * `variable.deleted`. Deleting a name that is not set succeeds with `existed: false` and records
 * nothing.
 */
export const deleteVariableAction = defineInternalAction({
  name: "delete_variable",
  description: "Removes $name; later references to it stay literal text.",
  parameters: z.strictObject({ name: variableName }),
  async run({ name }, context) {
    const existed = context.variables.delete(name);
    if (existed) {
      await context.log.record("variable.deleted", {
        name,
        by: "action",
        action_id: context.actionId,
      });
    }
    return { name, existed };
  },
});

/** The variable actions every agent has: `set_variable` and `delete_variable`. */
export function internalVariableActions() {
  return [setVariableAction, deleteVariableAction];
}
