import type { EventStore } from "../log/index.js";
import type { AnyNewEvent, EventData } from "../spec/index.js";
import { type CheckpointSigner, writeCheckpoint } from "../transcript/index.js";
import type { ContextMessage, SummaryItem, ThreadView } from "./context-bundle.js";
import { withoutCarriedImages } from "./image-fallback.js";
import { messageToSeed, positionToData, spanToData } from "./seed-messages.js";
import { seedPositions } from "./source-coverage.js";
import { IMAGE_SUMMARIZER } from "./summarizer-selection.js";
import type { SummaryOutcome, SummaryWorker } from "./summary-worker.js";
import { selectTrailing } from "./trailing.js";

/** The most summaries a continuation's seed carries (the newest ones of the chain). */
export const MAX_CHAIN = 8;

/** Everything `handOff` needs. */
export interface HandoffInput {
  store: EventStore;
  continuity: string;
  /** The thread handing off, and what the continuation inherits from it. */
  thread: string;
  directive: string;
  model: string;
  agent?: string;
  view: ThreadView;
  pressure: { tokensUsed: number; maxTokens: number; ratio: number };
  reason: string;
  summarizer: { name: string; maxSummaryTokens: number };
  /** Tokens the continuation's seed (summary and trailing messages) may take. */
  ceiling: number;
  /** This handoff's attempt (1 for the first), and the attempts before the last resort. */
  attempt: number;
  maxAttempts: number;
  /** The thread can take another step as it is (its context still fits). */
  fits: boolean;
  /** The thread's next step index (a deferred handoff is retried from a later one). */
  nextStep: number;
  worker: SummaryWorker;
  /** Tokens of one message, as the thread's model counts them. */
  cost: (entry: ContextMessage) => number;
  /** The provider response id the thread's last step continued from (rotated away). */
  responseId: string | null;
  /** The run goes on after the handoff: its part in this thread ends, and it starts in the next. */
  run?: { completed: EventData<"run.completed">; started: EventData<"run.started"> };
  signer?: CheckpointSigner;
}

/** How a handoff ended. */
export type HandoffResult =
  | {
      kind: "continued";
      continuation: string;
      mode: "summary" | "trailing-only";
      summary?: SummaryItem;
      tokensAfter: number;
    }
  | { kind: "deferred"; retryAtStep: number; reason: string };

/**
 * The continuation thread's id: `<root>.c<n>` for the n-th continuation of a chain, so a handoff
 * interrupted by a crash and done again makes the same thread, never a second one.
 */
export function continuationId(thread: string): { id: string; chainRoot: string } {
  const match = /^(.*)\.c(\d+)$/.exec(thread);
  if (match) return { id: `${match[1]}.c${Number(match[2]) + 1}`, chainRoot: match[1]! };
  return { id: `${thread}.c1`, chainRoot: thread };
}

/**
 * Hands a thread's work to a continuation thread (seed 000's `handoff_thread`):
 *
 * 1. `handoff.started`, and a `handoff` checkpoint when there is a signer;
 * 2. the summary: the pre-computed one brought up to date, or one made now (`SummaryWorker`);
 * 3. the newest whole messages that fill the rest of the ceiling (`selectTrailing`);
 * 4. the resume messages: the summary chain ("Thread Handoff Context"), the trailing messages,
 *    and an instruction to continue when the run goes on; with, for a thread that sources
 *    delivered chunks to, where each source stands (`seedPositions`: which chunks the chain
 *    summarizes, which the trailing messages carry, where the continuation goes on);
 * 5. the continuation thread, with the same directive, and the provider cursor rotated;
 * 6. the registry link (`continuation_of`, `chain_root`) and `thread.continued`.
 *
 * Steps 4–6 are one atomic batch (with the run's end here and start there), so a crash leaves
 * either no continuation or a whole one. A summary that fails defers the handoff while the thread
 * still fits (`handoff.deferred`, retried after 1, 2, 4… steps); when it does not, or after
 * `maxAttempts`, the continuation starts from the last summary made, or with trailing messages
 * only when there is none (the last resort).
 */
export async function handOff(input: HandoffInput): Promise<HandoffResult> {
  const { store, continuity, thread, view } = input;
  const { id: continuation, chainRoot } = continuationId(thread);
  const stream = { kind: "thread" as const, id: thread };
  await store.append({
    continuity,
    stream,
    type: "handoff.started",
    data: {
      continuation,
      reason: input.reason,
      tokens_used: input.pressure.tokensUsed,
      max_tokens: input.pressure.maxTokens,
      pressure_ratio: input.pressure.ratio,
      summarizer: input.summarizer.name,
      attempt: input.attempt,
    },
  });
  if (input.signer) {
    await writeCheckpoint({
      store,
      signer: input.signer,
      continuity,
      reason: "handoff",
      thread,
    });
  }

  const outcome: SummaryOutcome = await input.worker.summaryFor({
    thread,
    directive: input.directive,
    summarizer: input.summarizer.name,
    maxSummaryTokens: input.summarizer.maxSummaryTokens,
    messages: view.messages,
    chain: view.summaries,
    ...(view.sourceModes ? { sourceModes: view.sourceModes } : {}),
  });
  if (!outcome.ok && input.fits && input.attempt < input.maxAttempts) {
    const retryAtStep = input.nextStep + 2 ** (input.attempt - 1);
    const reason = `the summary failed (${outcome.reason}: ${outcome.error.message}); the thread still fits, so it goes on and the handoff is tried again at step ${retryAtStep}`;
    await store.append({
      continuity,
      stream,
      type: "handoff.deferred",
      data: { continuation, attempt: input.attempt, retry_at_step: retryAtStep, reason },
    });
    return { kind: "deferred", retryAtStep, reason };
  }

  // The last resort keeps what it can: a summary made earlier (stale, but better than none),
  // else trailing messages only.
  const stale = outcome.ok ? undefined : input.worker.latest(thread);
  const summary = outcome.ok ? outcome.summary : stale;
  const reason = outcome.ok
    ? input.reason
    : `${input.reason}; the summary failed (${outcome.reason}), so the continuation starts ${stale ? "from the last summary made" : "with trailing messages only"}`;
  const chain = [...view.summaries, ...(summary ? [summary] : [])].slice(-MAX_CHAIN);
  // A thread that watched frames hands off its visual state as text: no image crosses over.
  const carried =
    input.summarizer.name === IMAGE_SUMMARIZER
      ? withoutCarriedImages(view.messages)
      : view.messages;
  const trailing = selectTrailing(
    carried,
    view.newestTurn,
    Math.max(0, input.ceiling - (summary?.tokens ?? 0)),
    input.cost,
  );
  const positions = seedPositions({
    thread,
    ...(view.streams ? { prior: view.streams } : {}),
    messages: view.messages,
    trailing: trailing.messages,
    chain,
  });
  const mode = summary ? "summary" : "trailing-only";
  const tokensAfter = (summary?.tokens ?? 0) + trailing.tokens;
  const events: AnyNewEvent[] = [
    {
      continuity,
      stream: { kind: "thread", id: continuation },
      type: "thread.started",
      data: {
        directive: input.directive,
        chain_root: chainRoot,
        continuation_of: thread,
        model: input.model,
        ...(input.agent !== undefined ? { agent: input.agent } : {}),
      },
    },
    {
      continuity,
      stream: { kind: "thread", id: continuation },
      type: "handoff.seeded",
      data: {
        from: thread,
        mode,
        summaries: chain.map((item) => ({
          id: item.id,
          summarizer: item.summarizer,
          text: item.text,
          tokens: item.tokens,
          covers: item.covers,
          ...(item.sources ? { sources: item.sources.map(spanToData) } : {}),
        })),
        trailing: trailing.messages.map(messageToSeed),
        resume: input.run !== undefined,
        ...(positions.length > 0 ? { sources: positions.map(positionToData) } : {}),
        tokens: { summary: summary?.tokens ?? 0, trailing: trailing.tokens },
      },
    },
    {
      continuity,
      stream,
      type: "provider.cursor-rotated",
      data: {
        previous_response_id: input.responseId,
        reason: "handoff",
        rebuilt_messages: trailing.messages.length + (chain.length > 0 ? 1 : 0),
      },
    },
    ...(input.run
      ? [{ continuity, stream, type: "run.completed" as const, data: input.run.completed }]
      : []),
    {
      continuity,
      stream,
      type: "thread.continued",
      data: {
        continuation,
        reason,
        mode,
        pressure_ratio: input.pressure.ratio,
        tokens_before: input.pressure.tokensUsed,
        tokens_after: tokensAfter,
        ...(summary ? { summary_id: summary.id, summary_tokens: summary.tokens } : {}),
      },
    },
    ...(input.run
      ? [
          {
            continuity,
            stream: { kind: "thread" as const, id: continuation },
            type: "run.started" as const,
            data: input.run.started,
          },
        ]
      : []),
  ];
  await store.appendBatch(events);
  return {
    kind: "continued",
    continuation,
    mode,
    ...(summary ? { summary } : {}),
    tokensAfter,
  };
}
