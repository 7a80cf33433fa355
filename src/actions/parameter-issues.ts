import type { z } from "zod";

/** Most issues listed in one message; the rest are counted. */
const ISSUES_MAX = 12;

/**
 * A zod error as one line for the model: every issue as `path: message` (`(parameters)` for the
 * whole object), e.g. `query: Invalid input: expected string, received number; limit: Too big`.
 */
export function describeParameterIssues(error: z.ZodError): string {
  const lines = error.issues.slice(0, ISSUES_MAX).map((issue) => {
    const path = issue.path
      .map((part, index) =>
        typeof part === "number" ? `[${part}]` : `${index ? "." : ""}${String(part)}`,
      )
      .join("");
    return `${path || "(parameters)"}: ${issue.message}`;
  });
  const more = error.issues.length - ISSUES_MAX;
  return more > 0 ? `${lines.join("; ")}; and ${more} more` : lines.join("; ");
}
