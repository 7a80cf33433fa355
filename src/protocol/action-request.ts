/** The action kinds the protocol knows; each has an executor behind one interface (`src/actions`). */
export const ACTION_TYPES = ["tool", "agent", "relic", "workflow", "llm", "internal"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/**
 * `sync` holds the processing of later output until the action finishes; `async` runs in the
 * background while the step goes on; `fire_and_forget` runs untracked by the step (still logged).
 */
export const ACTION_MODES = ["sync", "async", "fire_and_forget"] as const;
export type ActionMode = (typeof ACTION_MODES)[number];

/** What happens when an action fails: fail it (dependents are skipped), skip it, or retry it. */
export const ON_ERROR_POLICIES = ["fail", "skip", "retry"] as const;
export type OnErrorPolicy = (typeof ON_ERROR_POLICIES)[number];

/** Longest `$name`: an `output_key`, a feed id, a `set_variable` name. */
export const VARIABLE_NAME_MAX = 128;

/** A whole string that is a variable name: `[A-Za-z_][A-Za-z0-9_]*`, at most 128 characters. */
export const VARIABLE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** A place in a step's output: UTF-16 offset from its start, and 1-based line and column. */
export interface SourcePosition {
  offset: number;
  line: number;
  column: number;
}

/**
 * One complete, validated `<action>` from a model's output, as the parser hands it to the
 * scheduler. The JSON body's snake_case fields (`output_key`, `depends_on`, `on_error`) appear
 * here in camelCase; `timeout` (seconds in the body) is `timeoutMs`.
 *
 * Contract: `id` is unique within its step (a duplicate is a parse error, never a request);
 * `parameters` is the body's object as written, with `$name` references still unresolved.
 */
export interface ActionRequest {
  id: string;
  type: ActionType;
  mode: ActionMode;
  /** The tool, agent, relic, workflow, model task or internal action to run. */
  name: string;
  parameters: Record<string, unknown>;
  /** Stores the result as `$outputKey`. */
  outputKey?: string;
  /** Ids of actions (seen or not yet seen in this step) that must succeed first. */
  dependsOn: readonly string[];
  /** Per-attempt time limit; none when absent. */
  timeoutMs?: number;
  /** Further attempts after the first failure (0 = none). */
  retry: number;
  onError: OnErrorPolicy;
  /** True when the action sat inside a `<thought>`. */
  inThought: boolean;
  /** Where `<action` began and where `</action>` ended (exclusive). */
  span: { start: SourcePosition; end: SourcePosition };
}
