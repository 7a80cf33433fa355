import { readFile } from "node:fs/promises";
import { LineCounter, parseDocument } from "yaml";
import {
  type FeedIssue,
  formatIssuePath,
  locateYamlPath,
  type TextPosition,
  zodFeedIssues,
} from "../feeds/index.js";
import { describeError } from "../spec/index.js";
import { type WorkflowDefinition, workflowSchema } from "./workflow-definition.js";
import { WorkflowError } from "./workflow-error.js";
import { validateWorkflow } from "./workflow-validation.js";

/** Options of `parseWorkflow`. */
export interface ParseWorkflowOptions {
  /** The file's name for messages (`flows/enrich.yaml`). */
  source?: string;
}

/** One problem of a workflow file, located. */
export interface WorkflowIssue {
  /** Field path: `steps[2].depends[0]`. */
  field: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * Parses and validates a workflow from YAML text (or an already parsed object): the schema in
 * `workflow-definition.ts`, then the graph checks of `validateWorkflow` (unknown dependencies,
 * cycles, references to steps a step does not depend on), all before anything runs.
 *
 * Throws one `WorkflowError` (`workflow.invalid`) listing every problem, one per line, as
 * `<source>:<line>: <field>: <what is wrong>`; `details.issues` holds them as `WorkflowIssue`s.
 * Text that is not YAML is reported with its line and column.
 */
export function parseWorkflow(
  input: unknown,
  options: ParseWorkflowOptions = {},
): WorkflowDefinition {
  const source = options.source ?? "(workflow)";
  let data = input;
  let locate: (path: readonly (string | number)[]) => TextPosition | undefined = () => undefined;
  if (typeof input === "string") {
    const counter = new LineCounter();
    const document = parseDocument(input, { lineCounter: counter, prettyErrors: false });
    const syntax = document.errors[0];
    if (syntax) {
      const { line, col } = counter.linePos(syntax.pos[0]);
      throw invalid(source, [
        { field: "(yaml)", message: `not valid YAML: ${syntax.message}`, line, column: col },
      ]);
    }
    try {
      data = document.toJS({ maxAliasCount: 1000 });
    } catch (error) {
      throw invalid(source, [
        { field: "(yaml)", message: `cannot be read: ${describeError(error)}` },
      ]);
    }
    locate = (path) => locateYamlPath(document, counter, path);
  }
  const parsed = workflowSchema.safeParse(data);
  const issues: FeedIssue[] = parsed.success
    ? validateWorkflow(parsed.data)
    : zodFeedIssues(parsed.error, []);
  if (issues.length > 0 || !parsed.success) {
    throw invalid(source, located(issues, locate));
  }
  return parsed.data;
}

/** Issues with their positions, in the order of the file. */
function located(
  issues: readonly FeedIssue[],
  locate: (path: readonly (string | number)[]) => TextPosition | undefined,
): WorkflowIssue[] {
  return issues
    .map((issue): WorkflowIssue => {
      const position = locate(issue.path);
      return {
        field: formatIssuePath(issue.path).replace("(manifest)", "(workflow)"),
        message: issue.message,
        ...(position ? { line: position.line, column: position.column } : {}),
      };
    })
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** Reads and parses the workflow file at `path`; a missing file is `workflow.unknown`. */
export async function readWorkflowFile(path: string): Promise<WorkflowDefinition> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new WorkflowError(
      "workflow.unknown",
      `cannot read workflow file ${path}: ${describeError(error)}`,
      {
        cause: error,
        hint: "Check the file's name and permissions",
      },
    );
  }
  return parseWorkflow(text, { source: path });
}

function invalid(source: string, issues: WorkflowIssue[]): WorkflowError {
  const lines = issues.map(
    (issue) =>
      `${source}${issue.line !== undefined ? `:${issue.line}` : ""}: ${issue.field}: ${issue.message}`,
  );
  return new WorkflowError(
    "workflow.invalid",
    `workflow ${source} is invalid (fix each field named; docs/workflows.md describes the format):\n${lines.join("\n")}`,
    {
      details: { source, issues },
    },
  );
}
