/**
 * Workflows: YAML graphs of steps that a `type="workflow"` action runs. Steps run as soon as
 * their dependencies succeed, optionally once per item (`foreach`), with retries, timeouts and
 * `on_error`; every node's progress is a `graph.*` / `step.*` event on the action's task stream.
 * See `docs/workflows.md`.
 */
export {
  type ParseWorkflowOptions,
  parseWorkflow,
  readWorkflowFile,
  type WorkflowIssue,
} from "./parse-workflow.js";
export {
  type AttemptsOutcome,
  runStepAttempts,
  type StepAttemptsOptions,
} from "./step-attempts.js";
export {
  RESERVED_REFERENCE_NAMES,
  WORKFLOW_ACTION_TYPES,
  WORKFLOW_NAME_PATTERN,
  type WorkflowAction,
  type WorkflowDefinition,
  type WorkflowInput,
  type WorkflowStep,
  workflowSchema,
} from "./workflow-definition.js";
export { type WorkflowDirectory, workflowDirectory } from "./workflow-directory.js";
export { WorkflowError, type WorkflowErrorCode } from "./workflow-error.js";
export { createWorkflowExecutor, type WorkflowExecutorOptions } from "./workflow-executor.js";
export { resolveWorkflowInputs } from "./workflow-inputs.js";
export { type FoundReference, findReferences } from "./workflow-references.js";
export {
  runWorkflowGraph,
  type WorkflowGraphOptions,
  type WorkflowInnerCall,
} from "./workflow-run.js";
export { validateWorkflow } from "./workflow-validation.js";
