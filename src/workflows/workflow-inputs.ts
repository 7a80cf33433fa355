import { preview } from "../feeds/index.js";
import type { WorkflowDefinition, WorkflowInput } from "./workflow-definition.js";
import { WorkflowError } from "./workflow-error.js";

/**
 * The inputs a run of `definition` sees: the action's `parameters`, with defaults filled in.
 * Throws `workflow.bad-inputs` (not retryable) naming every parameter that is missing, unknown,
 * or of the wrong type, and the inputs the workflow declares.
 */
export function resolveWorkflowInputs(
  definition: WorkflowDefinition,
  parameters: Record<string, unknown>,
): Record<string, unknown> {
  const problems: string[] = [];
  const inputs: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(definition.inputs)) {
    const given = Object.hasOwn(parameters, name) ? parameters[name] : undefined;
    const value = given === undefined ? spec.default : given;
    if (value === undefined) {
      if (spec.required !== false) problems.push(`${name}: is required`);
      continue;
    }
    if (!hasType(value, spec.type)) {
      problems.push(`${name}: must be ${article(spec.type)}, got ${preview(value)}`);
      continue;
    }
    inputs[name] = value;
  }
  for (const name of Object.keys(parameters)) {
    if (!Object.hasOwn(definition.inputs, name)) problems.push(`${name}: is not an input`);
  }
  if (problems.length > 0) {
    const declared = Object.entries(definition.inputs)
      .map(
        ([name, spec]) =>
          `${name} (${spec.type}${spec.required === false || spec.default !== undefined ? ", optional" : ""})`,
      )
      .join(", ");
    throw new WorkflowError(
      "workflow.bad-inputs",
      `bad parameters for workflow "${definition.name}": ${problems.join("; ")}`,
      { hint: `Call it again with its inputs: ${declared || "(none)"}` },
    );
  }
  return inputs;
}

function hasType(value: unknown, type: WorkflowInput["type"]): boolean {
  switch (type) {
    case "any":
      return true;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return typeof value === type;
  }
}

function article(type: string): string {
  return type === "any" ? "any value" : `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}
