import type { ContinuationConfig, Directive, SummaryLimits } from "../directives/index.js";

/** Where the chosen summarizer came from, in the order `selectSummarizer` tries them. */
export type SummarizerSource = "directive" | "override" | "convention" | "default";

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
   * undefined`). Asked only for the `<directive>_summarizer` convention, and only when neither
   * the directive nor the overrides chose.
   */
  exists: (name: string) => boolean;
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
 * 4. `default`: `summary_directive`.
 *
 * Names chosen by 1, 2 and 4 are not checked: loading a missing one fails loudly later. Budgets
 * are the per-summarizer `summarizers[name]` entry over the global values. Pure: reads nothing
 * but its arguments and `exists`; never throws unless `exists` does.
 */
export function selectSummarizer(options: SelectSummarizerOptions): SummarizerChoice {
  const { directive, continuation, exists } = options;
  const { name, source } = chooseName(directive, continuation, exists);
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

function chooseName(
  directive: Pick<Directive, "name" | "summarizer">,
  continuation: ContinuationConfig,
  exists: (name: string) => boolean,
): { name: string; source: SummarizerSource } {
  if (directive.summarizer) return { name: directive.summarizer, source: "directive" };
  const override = own(continuation.summaryDirectiveOverrides, directive.name);
  if (override) return { name: override, source: "override" };
  const conventional = `${directive.name}_summarizer`;
  if (exists(conventional)) return { name: conventional, source: "convention" };
  return { name: continuation.summaryDirective, source: "default" };
}

/** `record[key]` when it is the record's own entry: a directive named `constructor` finds none. */
function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
