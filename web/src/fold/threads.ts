import type { SpoolEvent } from "../../../src/spec/index.js";

/** How a thread handed its work on (its `thread.continued`). */
export interface Handoff {
  seq: number;
  ts: string;
  to: string;
  reason: string;
  mode?: string;
  pressureRatio?: number;
  tokensBefore?: number;
  tokensAfter?: number;
  summaryTokens?: number;
}

/** One thread of a continuity. */
export interface ThreadInfo {
  id: string;
  directive: string;
  model?: string;
  startedAt: string;
  chainRoot: string;
  continuationOf?: string;
  parent?: string;
  /** A summarizer or hook directive run beside the conversation (`<thread>@<action>`). */
  worker: boolean;
  status: "running" | "open" | "completed" | "failed" | "cancelled" | "continued";
  steps: string[];
  tokens: { input: number; output: number };
  handoff?: Handoff;
}

/**
 * Folds thread lifecycle events into the continuity's threads, in start order, each with its
 * status, its model steps, its token totals and the handoff that continued it. `chains()` gives
 * the conversation's chains of continuations (root first) for the thread chain view. Takes events
 * in seq order; never throws.
 */
export class ThreadsFold {
  readonly threads = new Map<string, ThreadInfo>();

  push(event: SpoolEvent): void {
    const data = event.data as Record<string, unknown>;
    const threadOf = (id: string) => this.threads.get(id.slice(0, id.lastIndexOf(":")));
    switch (event.type) {
      case "thread.started": {
        const parent = data.parent as { thread: string } | undefined;
        this.threads.set(event.stream.id, {
          id: event.stream.id,
          directive: String(data.directive ?? ""),
          model: typeof data.model === "string" ? data.model : undefined,
          startedAt: event.ts,
          chainRoot: String(data.chain_root ?? event.stream.id),
          continuationOf:
            typeof data.continuation_of === "string" ? data.continuation_of : undefined,
          parent: parent?.thread,
          worker: event.stream.id.includes("@"),
          status: "open",
          steps: [],
          tokens: { input: 0, output: 0 },
        });
        return;
      }
      case "run.started": {
        this.status(event.stream.id, "running");
        return;
      }
      case "run.completed": {
        const status = String(data.status);
        if (status === "completed") {
          this.status(event.stream.id, "open");
          return;
        }
        if (status === "failed" || status === "cancelled") {
          this.status(event.stream.id, status);
          return;
        }
        this.status(event.stream.id, "open");
        return;
      }
      case "thread.completed": {
        this.status(event.stream.id, "completed");
        return;
      }
      case "thread.failed": {
        this.status(event.stream.id, "failed");
        return;
      }
      case "thread.continued": {
        const thread = this.threads.get(event.stream.id);
        if (!thread) return;
        thread.status = "continued";
        thread.handoff = {
          seq: event.seq,
          ts: event.ts,
          to: String(data.continuation),
          reason: String(data.reason ?? ""),
          mode: typeof data.mode === "string" ? data.mode : undefined,
          pressureRatio: numberOr(data.pressure_ratio),
          tokensBefore: numberOr(data.tokens_before),
          tokensAfter: numberOr(data.tokens_after),
          summaryTokens: numberOr(data.summary_tokens),
        };
        return;
      }
      case "step.started": {
        const thread = threadOf(event.stream.id);
        if (thread && data.kind === "model" && !thread.steps.includes(event.stream.id)) {
          thread.steps.push(event.stream.id);
          if (!thread.model && typeof data.model === "string") thread.model = data.model;
        }
        return;
      }
      case "step.completed": {
        const usage = data.usage as { input_tokens?: number; output_tokens?: number } | undefined;
        const thread = threadOf(event.stream.id);
        if (!thread || data.kind !== "model" || !usage) return;
        thread.tokens.input += usage.input_tokens ?? 0;
        thread.tokens.output += usage.output_tokens ?? 0;
        return;
      }
    }
  }

  /** The conversation's chains of continuations (workers left out), each root first. */
  chains(): ThreadInfo[][] {
    const chains = new Map<string, ThreadInfo[]>();
    for (const thread of this.threads.values()) {
      if (thread.worker) continue;
      const chain = chains.get(thread.chainRoot) ?? [];
      chain.push(thread);
      chains.set(thread.chainRoot, chain);
    }
    return [...chains.values()];
  }

  private status(id: string, status: ThreadInfo["status"]): void {
    const thread = this.threads.get(id);
    if (thread && thread.status !== "continued") thread.status = status;
  }
}

function numberOr(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}
