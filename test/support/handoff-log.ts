/**
 * A chat continuity that handed off, built from real events appended through the store (so the
 * catalog validates each one), for the CLI's continuity tests.
 */
import type { EventStore } from "../../src/log/index.js";
import { pinId } from "../../src/runtime/continuity-actions.js";
import type { NewEvent, SpoolEvent } from "../../src/spec/index.js";

/** The chat's continuity. */
export const CHAT = "chat";
/** The model of every thread of the chat. */
export const MODEL = "claude-test";
/** The thread that hands off. */
export const T1 = "th-01JC3V7Q8ZK2N5W4X6Y8A0B1C2";
/** The continuation of `T1`. */
export const T2 = `${T1}.c1`;
/** The child thread that summarizes `T1` for the handoff. */
export const SUMMARIZER = `${T1}@summary1`;
const HOOK = `${T1}@hook1`;

const usage = (input: number, output = 20) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
});

const onThread = (thread: string, type: string, data: unknown): NewEvent => ({
  continuity: CHAT,
  stream: { kind: "thread", id: thread },
  type,
  data,
});

const onStream = (kind: "step" | "worker", id: string, type: string, data: unknown): NewEvent => ({
  continuity: CHAT,
  stream: { kind, id },
  type,
  data,
});

/** A whole model step of `thread`: start, its compiled context, the message and the usage. */
async function modelStep(
  store: EventStore,
  thread: string,
  index: number,
  text: string,
  inputTokens: number,
  compiled: Record<string, unknown> = {},
): Promise<SpoolEvent[]> {
  const step = `${thread}:${index}`;
  const base = { kind: "model", thread, index, provider: "scripted", model: MODEL };
  return store.appendBatch([
    onStream("step", step, "step.started", base),
    onStream("step", step, "context.compiled", {
      strategy: "continuity",
      messages: 2,
      omitted: 0,
      tokens: inputTokens,
      budget: 8000,
      digest: "a".repeat(64),
      ...compiled,
    }),
    onStream("step", step, "message.completed", {
      format: "scripted",
      provider: "scripted",
      model: MODEL,
      response_id: null,
      content: [{ type: "text", text }],
      usage: usage(inputTokens),
      stop_reason: "end",
      provider_stop_reason: null,
    }),
    onStream("step", step, "step.completed", {
      ...base,
      usage: usage(inputTokens),
      stop_reason: "end",
      duration_ms: 5,
    }),
  ]);
}

async function turn(store: EventStore, text: string): Promise<SpoolEvent> {
  return store.append({
    continuity: CHAT,
    type: "turn.added",
    actor: "ada",
    origin: "cli",
    data: { text },
  });
}

const runStarted = (turnId: string, nextStep: number) => ({
  turn: turnId,
  resumed: false,
  directive: "assistant",
  model: MODEL,
  next_step: nextStep,
});

const runCompleted = (turnId: string, status: string, steps: number) => ({
  turn: turnId,
  status,
  steps,
  usage: usage(100),
  cost_usd: 0,
});

/**
 * Appends to `store` a chat whose thread T1 answers two turns, reaches the handoff pressure and hands off to T2
 * (summarized by the child thread T1@summary1, a hook firing beside it); T2 carries the second
 * exchange as trailing messages and answers the rest of the second turn. `mode: "trailing-only"`
 * hands off without a summary; `answer: false` stops right after the handoff.
 */
export async function buildHandoffLog(
  store: EventStore,
  options: { mode?: "summary" | "trailing-only"; answer?: boolean } = {},
) {
  const mode = options.mode ?? "summary";
  await store.append({
    continuity: CHAT,
    type: "continuity.created",
    actor: "ada",
    origin: "cli",
    data: { title: "Chat", labels: { kind: "chat" } },
  });
  const first = await turn(store, "what grows in the garden?");
  await store.appendBatch([
    onThread(T1, "thread.started", {
      directive: "assistant",
      chain_root: T1,
      model: MODEL,
      turn: first.id,
    }),
    onThread(T1, "run.started", runStarted(first.id, 0)),
  ]);
  await modelStep(
    store,
    T1,
    0,
    "<thought>looking at the beds</thought><response>Tomatoes and basil.</response>",
    3100,
    {
      parts: { system: 900, pinned: 0, summaries: 0, feeds: 0, messages: 2200 },
      ranges: [{ thread: T1, from_seq: 2, to_seq: 4 }],
      summaries: [],
      pinned: [],
    },
  );
  await store.append(onThread(T1, "run.completed", runCompleted(first.id, "completed", 1)));
  const second = await turn(store, "and what is in the shed?");
  await store.append(onThread(T1, "run.started", runStarted(second.id, 1)));
  const [, , shedAnswer] = await modelStep(
    store,
    T1,
    1,
    '<response final="false">A rake and a spade.</response>',
    7402,
  );
  await store.appendBatch([
    onThread(T1, "hook.fired", {
      hook: "precompute",
      event: "pressure",
      layer: 1,
      item_type: "directive",
      item_id: "thread_summary",
      params: {},
    }),
    onStream("worker", HOOK, "hook.completed", {
      hook: "precompute",
      event: "pressure",
      outcome: "completed",
      detail: "HOOK-DETAIL",
    }),
    onThread(T1, "handoff.started", {
      continuation: T2,
      reason: "context pressure",
      tokens_used: 7402,
      max_tokens: 8134,
      pressure_ratio: 0.91,
      summarizer: "thread_summary",
      attempt: 1,
    }),
  ]);
  const covers = { thread: T1, from_seq: first.seq, to_seq: shedAnswer!.seq };
  const summaryText = "SUMMARY-TEXT: the user keeps a garden.";
  const summary = {
    id: SUMMARIZER,
    summarizer: "thread_summary",
    text: summaryText,
    tokens: 812,
    covers,
  };
  if (mode === "summary") {
    await store.appendBatch([
      onStream("worker", SUMMARIZER, "summary.started", {
        thread: T1,
        summarizer: "thread_summary",
        mode: "handoff",
        covers,
        attempt: 1,
      }),
      onThread(SUMMARIZER, "thread.started", {
        directive: "thread_summary",
        chain_root: SUMMARIZER,
        model: MODEL,
        parent: { thread: T1, step: `${T1}:2`, action: "summary1", depth: 1 },
      }),
      onThread(SUMMARIZER, "run.started", {
        input: "Write the summary now.",
        resumed: false,
        directive: "thread_summary",
        model: MODEL,
        next_step: 0,
      }),
    ]);
    await modelStep(store, SUMMARIZER, 0, `<response>${summaryText}</response>`, 5000);
    const artifact = await store.artifacts.put(Buffer.from(summaryText), {
      mediaType: "text/markdown",
    });
    await store.appendBatch([
      onThread(SUMMARIZER, "run.completed", {
        status: "completed",
        steps: 1,
        usage: usage(5000),
        cost_usd: 0,
      }),
      onThread(SUMMARIZER, "thread.completed", { result: summaryText }),
      onStream("worker", SUMMARIZER, "summary.completed", {
        ...summary,
        thread: T1,
        mode: "handoff",
        artifact: { hash: artifact.hash, size: artifact.size, media_type: "text/markdown" },
      }),
    ]);
  }
  const summaryTokens = mode === "summary" ? 812 : 0;
  await store.appendBatch([
    onThread(T2, "thread.started", {
      directive: "assistant",
      chain_root: T1,
      continuation_of: T1,
      model: MODEL,
    }),
    onThread(T2, "handoff.seeded", {
      from: T1,
      mode,
      summaries: mode === "summary" ? [summary] : [],
      trailing: [
        { role: "user", content: "and what is in the shed?", seq: second.seq, turn: true },
        { role: "assistant", content: "A rake and a spade.", seq: shedAnswer!.seq },
      ],
      resume: true,
      tokens: { summary: summaryTokens, trailing: 1498 },
    }),
    onThread(T1, "provider.cursor-rotated", {
      previous_response_id: null,
      reason: "handoff",
      rebuilt_messages: 3,
    }),
    onThread(T1, "run.completed", runCompleted(second.id, "continued", 1)),
    onThread(T1, "thread.continued", {
      continuation: T2,
      reason: "context pressure",
      mode,
      pressure_ratio: 0.91,
      tokens_before: 7402,
      tokens_after: summaryTokens + 1498,
      ...(mode === "summary" ? { summary_id: SUMMARIZER, summary_tokens: 812 } : {}),
    }),
    onThread(T2, "run.started", runStarted(second.id, 0)),
  ]);
  if (options.answer === false) return { first, second };
  const pin = await store.append({
    continuity: CHAT,
    type: "context.pinned",
    actor: "ada",
    origin: "cli",
    data: { id: pinId("Water daily"), kind: "rule", text: "Water daily", by: "user" },
  });
  const manifest = { version: 1, model: MODEL, summaries: [SUMMARIZER], tokens: 2900 };
  const bundle = await store.artifacts.put(Buffer.from(JSON.stringify(manifest)), {
    mediaType: "application/vnd.spool.bundle+json",
  });
  await modelStep(store, T2, 0, "<response>Also a wheelbarrow.</response>", 2900, {
    messages: 3,
    omitted: 1,
    parts: { system: 900, pinned: 12, summaries: 812, feeds: 0, messages: 1176 },
    ranges: [{ thread: T2, from_seq: pin.seq, to_seq: pin.seq + 1 }],
    summaries: [SUMMARIZER],
    pinned: [pinId("Water daily")],
    bundle: {
      hash: bundle.hash,
      size: bundle.size,
      media_type: "application/vnd.spool.bundle+json",
    },
  });
  await store.append(onThread(T2, "run.completed", runCompleted(second.id, "completed", 1)));
  return { first, second, pin, bundle };
}

/** The JSON values of a command's output, one a line. */
export const jsonLines = <T>(text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as T);
