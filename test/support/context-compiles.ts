import {
  type ContextBundle,
  type ContextPolicy,
  compileContext,
  type DirectiveContext,
  type SummaryItem,
  type ThreadView,
} from "../../src/continuity/index.js";
import type { ProviderMessage, ToolSpec } from "../../src/providers/index.js";
import { createModelCatalogue } from "../../src/providers/models/index.js";
import { createTokenEstimator, type TokenEstimator } from "../../src/providers/tokens/index.js";
import { FROM_THREAD } from "./context-histories.js";

/** A model without a tokenizer (characters ÷ 3.5): the estimate of a request is additive. */
export const MODEL = "claude-sonnet-4-5";
/** A model with a real BPE tokenizer (o200k_base). */
export const BPE_MODEL = "gpt-4o";
/** The built-in model catalogue. */
export const catalogue = createModelCatalogue();
/** An uncalibrated estimator over `catalogue`: what `compile` counts with by default. */
export const estimator = createTokenEstimator({ catalogue });

/** The directive of the compiles: a system prompt and no tools. */
export const DIRECTIVE: DirectiveContext = {
  name: "chat",
  system: "You help with the user's files.",
};
/** A tool a directive may offer. */
export const FS_READ: ToolSpec = {
  name: "fs_read",
  description: "Reads a file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
};

/** An estimator whose calibration factor for `model` (default `MODEL`) is `factor`. */
export function calibrated(factor: number, model = MODEL): TokenEstimator {
  return createTokenEstimator({ catalogue, calibration: { [model]: { factor, observations: 6 } } });
}

/** `compileContext` of `view` for `MODEL` (unless the policy names another), `DIRECTIVE`. */
export function compile(
  view: ThreadView,
  policy: Omit<ContextPolicy, "model"> & { model?: string },
  directive: DirectiveContext = DIRECTIVE,
  tokens: TokenEstimator = estimator,
): ContextBundle {
  return compileContext(view, directive, { model: MODEL, ...policy }, tokens);
}

/** The text of a message whose content is a string; "" for any other. */
export const textOf = (message: ProviderMessage | undefined): string =>
  message && message.role !== "tool" && typeof message.content === "string" ? message.content : "";

/** The ids of the tool calls an assistant message makes. */
export const callIds = (message: ProviderMessage | undefined): string[] =>
  message?.role === "assistant" && typeof message.content !== "string"
    ? message.content.flatMap((block) => (block.type === "tool-call" ? [block.id] : []))
    : [];

/** Summary `index` of `FROM_THREAD`, covering ten seqs, of `text` (characters ÷ 3.5 tokens). */
export function summary(index: number, text: string): SummaryItem {
  return {
    id: `${FROM_THREAD}@summary${index}`,
    summarizer: "thread_summary",
    text,
    tokens: Math.ceil(text.length / 3.5),
    covers: { thread: FROM_THREAD, from_seq: index * 10, to_seq: index * 10 + 9 },
  };
}
