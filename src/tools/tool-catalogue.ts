import { z } from "zod";
import type { AnyTool } from "../actions/index.js";

/** One tool as the system prompt describes it. */
export interface ToolCatalogueEntry {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of what the model writes: the schema's input side. */
  parameters: Record<string, unknown>;
  idempotent: boolean;
  sideEffects: boolean;
}

/**
 * `tools` described for the model: name, description, parameters as JSON Schema (via
 * `z.toJSONSchema`, input side, `$schema` left out; a part zod cannot express becomes `{}`),
 * `idempotent` and `sideEffects` (absent flags read as false). Registration order is kept.
 * Never throws for a zod schema.
 */
export function toolCatalogue(tools: readonly AnyTool[]): ToolCatalogueEntry[] {
  return tools.map((tool) => {
    const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.parameters, {
      io: "input",
      unrepresentable: "any",
    }) as Record<string, unknown>;
    return {
      name: tool.name,
      description: tool.description,
      parameters: schema,
      idempotent: tool.idempotent === true,
      sideEffects: tool.sideEffects === true,
    };
  });
}

/**
 * `toolCatalogue(tools)` as compact text for a system prompt: per tool a heading line
 * `name (flags): description` and its parameters schema as one line of JSON.
 */
export function formatToolCatalogue(tools: readonly AnyTool[]): string {
  return toolCatalogue(tools)
    .map((entry) => {
      const flags = [
        entry.sideEffects ? "side effects" : "read-only",
        entry.idempotent ? "idempotent" : "not idempotent",
      ].join(", ");
      return `${entry.name} (${flags}): ${entry.description}\nparameters: ${JSON.stringify(entry.parameters)}`;
    })
    .join("\n\n");
}
