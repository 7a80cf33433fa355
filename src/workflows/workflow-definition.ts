import { z } from "zod";
import { unknownFields } from "../feeds/index.js";
import type { ActionType } from "../protocol/index.js";

/** Action kinds a workflow step may run. */
export const WORKFLOW_ACTION_TYPES = [
  "tool",
  "agent",
  "relic",
  "workflow",
  "llm",
  "internal",
] as const satisfies readonly ActionType[];

/** Step ids and input names: usable in `$steps.<id>` and `$inputs.<name>` references. */
export const WORKFLOW_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Names a `foreach` step's `as` may not take: they are the workflow's own references. */
export const RESERVED_REFERENCE_NAMES = ["inputs", "steps", "index"] as const;

/** One declared input: the workflow action's parameter of the same name. */
export interface WorkflowInput {
  /** The JSON type the value must have (default `any`). */
  type: "any" | "string" | "number" | "integer" | "boolean" | "object" | "array";
  description?: string | undefined;
  /** Used when the parameter is absent. */
  default?: unknown;
  /** Absent without a default is an error (default: true unless there is a default). */
  required?: boolean | undefined;
}

/** The action a step runs: like a model's action, without mode or ids. */
export interface WorkflowAction {
  type: (typeof WORKFLOW_ACTION_TYPES)[number];
  name: string;
  /** May reference `$inputs.<name>`, `$steps.<id>` and, in a `foreach` step, `$<as>`, `$index`. */
  parameters: Record<string, unknown>;
}

/** One node of the workflow graph. */
export interface WorkflowStep {
  id: string;
  description?: string | undefined;
  action: WorkflowAction;
  /** Steps that must succeed first (or fail with `on_error: skip`). */
  depends: string[];
  /** Run the action once per item: a list, or a reference (`"$inputs.items"`) to one. */
  foreach?: string | unknown[] | undefined;
  /** The item's reference name inside a `foreach` step (default `item`). */
  as: string;
  /** Items of a `foreach` step run at once, at most (default 4). */
  concurrency: number;
  /** Further attempts after a failure, with backoff (default 0). */
  retry: number;
  /** Limit of one attempt, in milliseconds. */
  timeout_ms?: number | undefined;
  /** `fail` (default): dependents are skipped and the workflow fails; `skip`: they run, with `null`. */
  on_error: "fail" | "skip";
}

/** A validated workflow: its graph is acyclic and every reference names something that exists. */
export interface WorkflowDefinition {
  name: string;
  description?: string | undefined;
  inputs: Record<string, WorkflowInput>;
  /** In file order. */
  steps: WorkflowStep[];
  /** The workflow's result, with references substituted; absent: `{ <step id>: output, … }`. */
  output?: unknown;
}

const name = (what: string) =>
  z
    .string({ error: `must be ${what} (a name of letters, digits and _)` })
    .regex(WORKFLOW_NAME_PATTERN, `must be ${what}: a letter or _ first, then letters, digits, _`);

const inputSchema = z.strictObject(
  {
    type: z
      .enum(["any", "string", "number", "integer", "boolean", "object", "array"])
      .default("any"),
    description: z.string().max(2000).optional(),
    default: z.json().optional(),
    required: z.boolean().optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, "an input has type, description, default, required")
        : "must be a mapping with type, description, default, required",
  },
);

const actionSchema = z.strictObject(
  {
    type: z.enum(WORKFLOW_ACTION_TYPES),
    name: z.string().min(1).max(200),
    parameters: z.record(z.string(), z.unknown()).default({}),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, "an action has type, name, parameters")
        : "must be a mapping with type, name, parameters",
  },
);

const stepSchema = z.strictObject(
  {
    id: name("a step id"),
    description: z.string().max(2000).optional(),
    action: actionSchema,
    depends: z.array(name("a step id")).max(256).default([]),
    foreach: z
      .union([z.string().regex(/^\$/, 'must start with "$"'), z.array(z.unknown())], {
        error: 'must be a list or a reference such as "$inputs.items"',
      })
      .optional(),
    as: name("a reference name").default("item"),
    concurrency: z.number().int().min(1).max(64).default(4),
    retry: z.number().int().min(0).max(10).default(0),
    timeout_ms: z.number().int().positive().max(86_400_000).optional(),
    on_error: z.enum(["fail", "skip"]).default("fail"),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(
            issue.keys,
            "a step has id, description, action, depends, foreach, as, concurrency, retry, timeout_ms, on_error",
          )
        : "must be a mapping with id and action",
  },
);

/** The shape of a workflow file, before the graph checks. */
export const workflowSchema = z.strictObject(
  {
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "must be a name of letters, digits and . _ -"),
    description: z.string().max(5000).optional(),
    inputs: z.record(name("an input name"), inputSchema).default({}),
    steps: z.array(stepSchema).min(1, "must list at least one step").max(1000),
    output: z.unknown().optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? unknownFields(issue.keys, "a workflow has name, description, inputs, steps, output")
        : "must be a mapping with name and steps",
  },
);
