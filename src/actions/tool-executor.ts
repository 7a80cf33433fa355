import { SpoolError } from "../spec/index.js";
import type { ActionRefusal, CheckedActionExecutor } from "./checked-executor.js";
import type { ActionCall } from "./executor.js";
import { describeParameterIssues } from "./parameter-issues.js";
import type { AnyTool, ToolRegistry } from "./tool-registry.js";

function badParameters(tool: AnyTool, issues: string): string {
  return `bad parameters for tool "${tool.name}": ${issues}. Call it again with parameters that match its schema.`;
}

/**
 * The executor of `type="tool"` actions over `registry`.
 *
 * Contract: `canRun` is true for registered names only (others are skipped `unknown-executor`
 * with the list of tools). `check` validates parameters with the tool's zod schema: invalid ones
 * are refused as `bad-parameters` with every field path and what was wrong, and the tool never
 * runs. `execute` parses again (so a direct call is safe too; it then rejects with a
 * non-retryable `action.bad-parameters`) and calls the tool with the parsed value, its signal,
 * and `progress` for partial results.
 */
export function createToolExecutor(registry: ToolRegistry): CheckedActionExecutor {
  return {
    type: "tool",
    canRun: (name) => registry.get(name) !== undefined,
    names: () => registry.names(),
    check(name, parameters): ActionRefusal | undefined {
      const tool = registry.get(name);
      if (!tool) return undefined;
      const parsed = tool.parameters.safeParse(parameters);
      if (parsed.success) return undefined;
      return {
        reason: "bad-parameters",
        message: badParameters(tool, describeParameterIssues(parsed.error)),
      };
    },
    async execute(call: ActionCall) {
      const tool = registry.get(call.name);
      if (!tool) {
        throw new SpoolError("action.unknown-tool", `there is no tool named "${call.name}"`, {
          hint: `Use one of: ${registry.names().join(", ") || "(no tools)"}`,
        });
      }
      const parsed = tool.parameters.safeParse(call.parameters);
      if (!parsed.success) {
        throw new SpoolError(
          "action.bad-parameters",
          badParameters(tool, describeParameterIssues(parsed.error)),
        );
      }
      return tool.execute(parsed.data, {
        actionId: call.actionId,
        attempt: call.attempt,
        signal: call.signal,
        progress: call.progress,
      });
    },
  };
}
