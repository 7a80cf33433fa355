import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readWorkflowFile } from "./parse-workflow.js";
import type { WorkflowDefinition } from "./workflow-definition.js";
import { WorkflowError } from "./workflow-error.js";

/** Workflows kept as `<name>.yaml` (or `.yml`) files in one directory. */
export interface WorkflowDirectory {
  /** The workflow names there are now (file names without extension), sorted. */
  names(): string[];
  /** Reads, parses and validates `<name>.yaml` afresh (edits apply to the next run). */
  load(name: string): Promise<WorkflowDefinition>;
}

const FILE_NAME = /^([A-Za-z0-9][A-Za-z0-9._-]{0,127})\.ya?ml$/;

/**
 * A `WorkflowDirectory` over `directory`: pass `load` as `loadWorkflow` and `names` as `names`
 * to `createWorkflowExecutor`. A file's `name` must equal its file name; `load` rejects with
 * `workflow.unknown` for a name with no file, and `workflow.invalid` for a bad file.
 */
export function workflowDirectory(directory: string): WorkflowDirectory {
  const files = (): Map<string, string> => {
    let entries: string[];
    try {
      entries = readdirSync(directory);
    } catch {
      return new Map();
    }
    const found = new Map<string, string>();
    for (const entry of entries.sort()) {
      const match = FILE_NAME.exec(entry);
      if (match && !found.has(match[1]!)) found.set(match[1]!, join(directory, entry));
    }
    return found;
  };
  return {
    names: () => [...files().keys()],
    async load(name) {
      const all = files();
      const path = all.get(name);
      if (!path) {
        throw new WorkflowError("workflow.unknown", `there is no workflow named "${name}"`, {
          hint: `Use one of: ${[...all.keys()].join(", ") || `(no workflows in ${directory})`}`,
        });
      }
      const definition = await readWorkflowFile(path);
      if (definition.name !== name) {
        throw new WorkflowError(
          "workflow.invalid",
          `${path}: name: is "${definition.name}", but the file is named "${name}"`,
          { hint: "Make the workflow's name match its file name" },
        );
      }
      return definition;
    },
  };
}
