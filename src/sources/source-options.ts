import type { z } from "zod";
import type { SourceDefinition, SourceFailedEmission } from "./source-types.js";

/**
 * A message for a definition whose `options` failed an adapter's schema: each problem with the
 * option's name, so the manifest can be fixed (`file source "app": options.from: Invalid option:
 * expected one of "start"|"end"`).
 */
export function optionsProblem(definition: SourceDefinition, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const path = ["options", ...issue.path.map(String)].join(".");
    return `${path}: ${issue.message}`;
  });
  return `${definition.kind} source "${definition.id}": ${problems.join("; ")}; fix the source's options in its definition`;
}

/**
 * The definition's `options` checked against an adapter's `schema`: the parsed options, or the
 * `failed` emission (`code`) that names each wrong option and what it accepts (`optionsProblem`).
 */
export function parseSourceOptions<Schema extends z.ZodType>(
  definition: SourceDefinition,
  schema: Schema,
  code = "source.bad-options",
): { options: z.output<Schema> } | { failed: SourceFailedEmission } {
  const parsed = schema.safeParse(definition.options);
  if (parsed.success) return { options: parsed.data };
  return { failed: { type: "failed", code, message: optionsProblem(definition, parsed.error) } };
}
