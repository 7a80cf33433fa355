import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import type { StreamPart } from "../../src/providers/stream-part.js";
import type { NewEvent, SpoolEvent } from "../../src/spec/index.js";
import { stepStreamId } from "../../src/transcript/index.js";

/** A temporary directory with a real SQLite store in it; `cleanup` closes and deletes both. */
export async function tempStore(prefix = "spool-transcript-"): Promise<{
  dir: string;
  store: EventStore;
  cleanup(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const store = await openEventStore({ db: join(dir, "store"), durability: "fast" });
  return {
    dir,
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A temporary store for every test of the calling file: made before each test, closed and
 * deleted after it. Read `store` and `dir` inside tests (they change from test to test).
 */
export function useTempStore(prefix: string): { readonly store: EventStore; readonly dir: string } {
  let current: Awaited<ReturnType<typeof tempStore>> | undefined;
  beforeEach(async () => {
    current = await tempStore(prefix);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  const now = () => {
    if (!current) throw new Error("useTempStore: the store exists only while a test runs");
    return current;
  };
  return {
    get store() {
      return now().store;
    },
    get dir() {
      return now().dir;
    },
  };
}

/** Appends `continuity.created` (when `create`), `thread.started` and step `index`'s `step.started`. */
export async function startThread(
  store: EventStore,
  continuity: string,
  thread: string,
  options: { create?: boolean; index?: number; model?: string } = {},
): Promise<string> {
  const model = options.model ?? "claude-test";
  const index = options.index ?? 0;
  const events: NewEvent[] = [];
  if (options.create ?? true) {
    events.push({
      continuity,
      type: "continuity.created",
      actor: "ada",
      origin: "test",
      data: { title: "a chat" },
    });
  }
  if (index === 0) {
    events.push({
      continuity,
      type: "thread.started",
      stream: { kind: "thread", id: thread },
      data: { directive: "assistant", chain_root: thread, model },
    });
  }
  const step = stepStreamId(thread, index);
  events.push(stepStarted(continuity, thread, index, model));
  await store.appendBatch(events);
  return step;
}

/** A model step's `step.started`. */
export function stepStarted(
  continuity: string,
  thread: string,
  index: number,
  model = "claude-test",
): NewEvent {
  return {
    continuity,
    type: "step.started",
    stream: { kind: "step", id: stepStreamId(thread, index) },
    data: { kind: "model", thread, index, provider: "anthropic", model },
  };
}

/** An event on a step (or task) stream. */
export function onStep(
  continuity: string,
  step: string,
  type: string,
  data: unknown,
  kind: "step" | "task" = "step",
): NewEvent {
  return { continuity, type, stream: { kind, id: step }, data };
}

/** `action.dispatched` of a tool action. */
export function dispatched(id: string, name = "search"): Record<string, unknown> {
  return {
    action_id: id,
    type: "tool",
    mode: "sync",
    name,
    parameters: { q: "x" },
    depends_on: [],
    retry: 0,
    on_error: "fail",
    in_thought: false,
  };
}

/** Text deltas that exercise JSON escaping: unicode, emoji, newlines, quotes, backslashes. */
export function sampleDeltas(count: number): string[] {
  const pieces = [
    "Hel",
    "lo",
    " wörld",
    " 👋🏽",
    "\n",
    "«quote»",
    ' "q" ',
    "\\",
    "日本",
    "\t",
    "ok",
  ];
  return Array.from({ length: count }, (_, index) => `${pieces[index % pieces.length]}${index}`);
}

/** `start`, one text part per delta (block 0), usage and `stop`. */
export function textParts(deltas: readonly string[]): StreamPart[] {
  return [
    { type: "start", responseId: "msg_1", model: "claude-test", usage: { inputTokens: 12 } },
    ...deltas.map((text): StreamPart => ({ type: "text", block: 0, text })),
    { type: "usage", usage: { outputTokens: deltas.length } },
    { type: "stop", reason: "end", providerReason: "end_turn" },
  ];
}

/** Every event of a continuity. */
export async function readAll(store: EventStore, continuity: string): Promise<SpoolEvent[]> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity })) events.push(event);
  return events;
}

/** The parsed lines of a transcript. */
export function lines(bytes: Buffer | string): Record<string, unknown>[] {
  return bytes
    .toString()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
