import { DependencyGraph } from "../actions/index.js";
import type { FeedIssue } from "../feeds/index.js";
import {
  RESERVED_REFERENCE_NAMES,
  type WorkflowDefinition,
  type WorkflowStep,
} from "./workflow-definition.js";
import { findReferences } from "./workflow-references.js";

/**
 * The graph checks of a workflow that passed its schema: unique step ids, dependencies that
 * exist, no cycles, `as` names that do not shadow `inputs`/`steps`/`index`, and references that
 * can resolve: `$inputs.<name>` must be declared, and `$steps.<id>` in a step must name one of
 * its (transitive) dependencies, so its output is there when the step runs. Returns every issue
 * with its path; an empty list means the workflow can run. Pure.
 */
export function validateWorkflow(definition: WorkflowDefinition): FeedIssue[] {
  const issues: FeedIssue[] = [];
  const index = new Map<string, number>();
  definition.steps.forEach((step, i) => {
    if (index.has(step.id)) {
      issues.push({
        path: ["steps", i, "id"],
        message: `duplicates the id of steps[${index.get(step.id)}]; step ids must be unique`,
      });
    } else {
      index.set(step.id, i);
    }
  });
  const known = [...index.keys()];
  const graph = new DependencyGraph();
  definition.steps.forEach((step, i) => {
    if (index.get(step.id) !== i) return;
    const deps: string[] = [];
    step.depends.forEach((dep, j) => {
      if (dep === step.id) {
        issues.push({
          path: ["steps", i, "depends", j],
          message: "a step cannot depend on itself",
        });
      } else if (!index.has(dep)) {
        issues.push({
          path: ["steps", i, "depends", j],
          message: `unknown step "${dep}" (steps: ${known.join(", ")})`,
        });
      } else {
        deps.push(dep);
      }
    });
    const added = graph.add(step.id, deps);
    if (added.cycle) {
      issues.push({
        path: ["steps", i, "depends"],
        message: `closes a dependency cycle: ${[...added.cycle, added.cycle[0]].join(" → ")}`,
      });
    }
  });
  // References are only checked over a sound graph: ancestors need unique ids and no cycles.
  if (issues.length > 0) return issues;
  definition.steps.forEach((step, i) => {
    if ((RESERVED_REFERENCE_NAMES as readonly string[]).includes(step.as)) {
      issues.push({
        path: ["steps", i, "as"],
        message: `"${step.as}" is reserved; name the item something else, such as item`,
      });
    }
  });

  const byId = new Map(definition.steps.map((step) => [step.id, step]));
  const inputs = Object.keys(definition.inputs);
  const ancestorsOf = ancestors(byId);
  definition.steps.forEach((step, i) => {
    const refs = [
      ...findReferences(step.action.parameters, ["steps", i, "action", "parameters"]),
      ...(step.foreach !== undefined ? findReferences(step.foreach, ["steps", i, "foreach"]) : []),
    ];
    const upstream = ancestorsOf(step.id);
    for (const ref of refs) {
      if (ref.name === "inputs") checkInput(ref.key, ref.path, inputs, issues);
      if (ref.name !== "steps") continue;
      if (ref.key === undefined || !byId.has(ref.key)) {
        issues.push({
          path: ref.path,
          message: `$steps.${ref.key ?? ""} names no step (steps: ${known.join(", ")})`,
        });
      } else if (!upstream.has(ref.key)) {
        issues.push({
          path: ref.path,
          message: `uses $steps.${ref.key}, which step "${step.id}" does not depend on; add "${ref.key}" to its depends`,
        });
      }
    }
  });
  for (const ref of findReferences(definition.output, ["output"])) {
    if (ref.name === "inputs") checkInput(ref.key, ref.path, inputs, issues);
    if (ref.name === "steps" && (ref.key === undefined || !byId.has(ref.key))) {
      issues.push({
        path: ref.path,
        message: `$steps.${ref.key ?? ""} names no step (steps: ${known.join(", ")})`,
      });
    }
  }
  return issues;
}

function checkInput(
  key: string | undefined,
  path: (string | number)[],
  inputs: readonly string[],
  issues: FeedIssue[],
): void {
  if (key !== undefined && inputs.includes(key)) return;
  issues.push({
    path,
    message: `$inputs.${key ?? ""} is not a declared input (inputs: ${inputs.join(", ") || "none"}); declare it under inputs`,
  });
}

/** Transitive dependencies of a step (the graph is known to be acyclic), memoized. */
function ancestors(byId: Map<string, WorkflowStep>): (id: string) => Set<string> {
  const memo = new Map<string, Set<string>>();
  const of = (id: string): Set<string> => {
    const cached = memo.get(id);
    if (cached) return cached;
    const result = new Set<string>();
    memo.set(id, result);
    for (const dep of byId.get(id)?.depends ?? []) {
      result.add(dep);
      for (const further of of(dep)) result.add(further);
    }
    return result;
  };
  return of;
}
