import type { EventStore } from "../log/index.js";
import { type EventData, SpoolError, type SpoolEvent } from "../spec/index.js";
import { parseStepStreamId } from "../transcript/index.js";
import { isWorkerThread } from "./thread-rows.js";

/** A continuity has no model call yet, or not the one asked for (`context.not-found`). */
export class ContextNotFoundError extends SpoolError {
  constructor(message: string, hint: string) {
    super("context.not-found", message, { hint });
  }
}

/** One model call's compiled context, with what its ids name resolved from the log. */
export interface ContextReport {
  continuity: string;
  step: string;
  thread: string;
  index: number;
  model: string | null;
  /** The `context.compiled` event. */
  seq: number;
  ts: string;
  compiled: EventData<"context.compiled">;
  /** The summaries it held (`null` fields where the log has no `summary.completed` for one). */
  summaries: {
    id: string;
    summarizer: string | null;
    tokens: number | null;
    covers: { thread: string; from_seq: number; to_seq: number } | null;
  }[];
  /** The pinned items it held (`null` text where the log has no `context.pinned` for one). */
  pinned: { id: string; kind: "rule" | "fact" | null; text: string | null }[];
  /** The bundle's manifest, with `--show`. */
  manifest?: Record<string, unknown>;
}

/**
 * Reads the continuity once and builds the report of `step` (a step id, or a number on the
 * thread of the latest call), or of the latest model call of a conversation thread.
 */
export async function contextReport(
  store: EventStore,
  continuity: string,
  step?: string,
): Promise<ContextReport> {
  const compiled: SpoolEvent[] = [];
  const models = new Map<string, string>();
  const workers = new Set<string>();
  const summaries = new Map<string, ContextReport["summaries"][number]>();
  const pins = new Map<string, ContextReport["pinned"][number]>();
  for await (const event of store.read({ continuity })) {
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case "context.compiled":
        if (event.stream.kind === "step") compiled.push(event);
        break;
      case "step.started":
        if (data.kind === "model") models.set(event.stream.id, String(data.model));
        break;
      case "thread.started": {
        const { parent } = data as EventData<"thread.started">;
        if (isWorkerThread(event.stream.id, parent) || (parent && workers.has(parent.thread))) {
          workers.add(event.stream.id);
        }
        break;
      }
      case "summary.completed": {
        const summary = data as EventData<"summary.completed">;
        summaries.set(summary.id, summaryOf(summary));
        break;
      }
      case "handoff.seeded":
        for (const summary of (data as EventData<"handoff.seeded">).summaries) {
          if (!summaries.has(summary.id)) summaries.set(summary.id, summaryOf(summary));
        }
        break;
      case "context.pinned": {
        const pin = data as EventData<"context.pinned">;
        pins.set(pin.id, { id: pin.id, kind: pin.kind, text: pin.text });
        break;
      }
    }
  }
  const threadOf = (event: SpoolEvent) => parseStepStreamId(event.stream.id).thread;
  const conversation = compiled.filter((event) => !workers.has(threadOf(event)));
  const latest = conversation.at(-1) ?? compiled.at(-1);
  if (!latest) {
    throw new ContextNotFoundError(
      `continuity ${JSON.stringify(continuity)} has no model call yet`,
      "Its context is compiled at each model step: send a turn first",
    );
  }
  let chosen = latest;
  if (step !== undefined) {
    const wanted = /^\d+$/.test(step.trim()) ? `${threadOf(latest)}:${Number(step.trim())}` : step;
    const found = compiled.findLast((event) => event.stream.id === wanted);
    if (!found) {
      throw new ContextNotFoundError(
        `no model call ${JSON.stringify(wanted)} in continuity ${JSON.stringify(continuity)}`,
        `Steps are <thread>:<n>; the latest is ${latest.stream.id}`,
      );
    }
    chosen = found;
  }
  const data = chosen.data as EventData<"context.compiled">;
  const id = chosen.stream.id;
  return {
    continuity,
    step: id,
    thread: threadOf(chosen),
    index: parseStepStreamId(id).index,
    model: models.get(id) ?? null,
    seq: chosen.seq,
    ts: chosen.ts,
    compiled: data,
    summaries: (data.summaries ?? []).map(
      (summary) =>
        summaries.get(summary) ?? { id: summary, summarizer: null, tokens: null, covers: null },
    ),
    pinned: (data.pinned ?? []).map((pin) => pins.get(pin) ?? { id: pin, kind: null, text: null }),
  };
}

function summaryOf(summary: {
  id: string;
  summarizer: string;
  tokens: number;
  covers: ContextReport["summaries"][number]["covers"];
}): ContextReport["summaries"][number] {
  return {
    id: summary.id,
    summarizer: summary.summarizer,
    tokens: summary.tokens,
    covers: summary.covers,
  };
}
