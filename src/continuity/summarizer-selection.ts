import type { ContinuationConfig, Directive, SummaryLimits } from "../directives/index.js";

/** Where the chosen summarizer came from, in the order `selectSummarizer` tries them. */
export type SummarizerSource = "directive" | "override" | "convention" | "agent" | "default";

/** The summarizer of a browser agent (a manifest with a `browser:` section) by default. */
export const BROWSER_SUMMARIZER = "browser_summarizer";

/** The summarizer of an agent that watches frames (a manifest with a `watch:` section) by default. */
export const IMAGE_SUMMARIZER = "image_summarizer";

/** What `selectSummarizer` needs. */
export interface SelectSummarizerOptions {
  /**
   * The directive the thread runs: `name` as the thread asked for it (the item name, folders
   * included: `browser/automate`), and its `<summarizer directive="…"/>` if it has one.
   */
  directive: Pick<Directive, "name" | "summarizer">;
  /** The merged `coordination.yaml` settings (`ItemSpace.coordination().continuation`). */
  continuation: ContinuationConfig;
  /**
   * Whether a directive of this name exists (e.g. `space.locate("directive", name) !==
   * undefined`). Asked only for the `<directive>_summarizer` convention and then `agentDefault`,
   * and only when neither the directive nor the overrides chose.
   */
  exists: (name: string) => boolean;
  /**
   * The summarizer the agent's kind calls for when nothing more specific chose one:
   * `BROWSER_SUMMARIZER` for a browser agent. Used only when `exists` says it exists.
   */
  agentDefault?: string;
}

/** The summarizer a handoff runs, and its budgets. */
export interface SummarizerChoice {
  /** The summarizer directive's name. */
  name: string;
  source: SummarizerSource;
  /** Tokens the summary may take: `summarizers[name].summary_max_tokens`, else the global. */
  maxSummaryTokens: number;
  /** Tokens a continuation starts with: `summarizers[name].resume_ceiling_tokens`, else global. */
  resumeCeilingTokens: number;
  /** `summary_limit_overrides[name]`, to use in place of the summarizer's own `<limits>`. */
  limits?: SummaryLimits;
}

/**
 * Picks the summarizer directive for a thread's handoff. The first that names one wins:
 *
 * 1. `directive`: the running directive's own `<summarizer directive="…"/>`;
 * 2. `override`: `summary_directive_overrides[<directive name>]`;
 * 3. `convention`: `<directive name>_summarizer`, when `exists` says there is such a directive;
 * 4. `agent`: `agentDefault` (a browser agent's `browser_summarizer`), when `exists` says so;
 * 5. `default`: `summary_directive`.
 *
 * Names chosen by 1, 2 and 5 are not checked: loading a missing one fails loudly later. Budgets
 * are the per-summarizer `summarizers[name]` entry over the global values. Pure: reads nothing
 * but its arguments and `exists`; never throws unless `exists` does.
 */
export function selectSummarizer(options: SelectSummarizerOptions): SummarizerChoice {
  const { name, source } = chooseName(options);
  const { continuation } = options;
  const budget = own(continuation.summarizers, name);
  const limits = own(continuation.summaryLimitOverrides, name);
  return {
    name,
    source,
    maxSummaryTokens: budget?.summaryMaxTokens ?? continuation.summaryMaxTokens,
    resumeCeilingTokens: budget?.resumeCeilingTokens ?? continuation.resumeCeilingTokens,
    ...(limits ? { limits: { ...limits } } : {}),
  };
}

function chooseName(options: SelectSummarizerOptions): {
  name: string;
  source: SummarizerSource;
} {
  const { directive, continuation, exists, agentDefault } = options;
  if (directive.summarizer) return { name: directive.summarizer, source: "directive" };
  const override = own(continuation.summaryDirectiveOverrides, directive.name);
  if (override) return { name: override, source: "override" };
  const conventional = `${directive.name}_summarizer`;
  if (exists(conventional)) return { name: conventional, source: "convention" };
  if (agentDefault !== undefined && exists(agentDefault)) {
    return { name: agentDefault, source: "agent" };
  }
  return { name: continuation.summaryDirective, source: "default" };
}

/** `record[key]` when it is the record's own entry: a directive named `constructor` finds none. */
function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
