import { createHash } from "node:crypto";
import { z } from "zod";
import { type AnyInternalAction, defineInternalAction } from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import { type EventData, identifier, SpoolError, type SpoolEvent } from "../spec/index.js";
import { parseStepStreamId } from "../transcript/index.js";

/** The most events one `recall` returns, and its default size in characters. */
export const RECALL_MAX_EVENTS = 400;
const RECALL_DEFAULT_CHARS = 20_000;

/** Event types `recall` shows: what was said, asked, done and decided (not deltas or progress). */
const RECALLED = new Set([
  "turn.added",
  "run.started",
  "message.completed",
  "action.dispatched",
  "action.succeeded",
  "action.failed",
  "action.skipped",
  "action.timed-out",
  "action.cancelled",
  "action.interrupted",
  "protocol.error",
  "variable.set",
  "context.pinned",
  "summary.completed",
  "thread.continued",
  "handoff.seeded",
]);

/** The actions' parameter schemas, built once (a schema costs far more to build than to check). */
const recallParameters = z
  .strictObject({
    summary: identifier.optional(),
    thread: identifier.optional(),
    artifact: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "an artifact's sha256, as a cut input's note gives it")
      .optional(),
    from_step: z.number().int().nonnegative().optional(),
    to_step: z.number().int().nonnegative().optional(),
    offset: z.number().int().nonnegative().optional(),
    max_chars: z.number().int().min(200).max(200_000).optional(),
  })
  .refine(
    (query) =>
      [query.summary, query.thread, query.artifact].filter((given) => given !== undefined)
        .length === 1,
    { message: 'give one of "summary" (a summary id), "thread", or "artifact" (a cut input)' },
  );
const pinParameters = z.strictObject({
  text: z.string().trim().min(1).max(4000),
  kind: z.enum(["fact", "rule"]).default("fact"),
});
const unpinParameters = z.strictObject({ id: identifier });

/**
 * The internal actions of the continuity for a thread:
 * - `recall {summary}` reads the raw events a summary covers back (`{thread, from_step,
 *   to_step}` a thread's steps), bounded to `RECALL_MAX_EVENTS` events and `max_chars` a call,
 *   paged with `offset`, so compaction never makes a detail unreachable. Its text names steps,
 *   never log positions, so a replay (whose seqs may differ) reads the same; `recall {artifact}`
 *   reads the whole text of an input cut to an artifact (`context.input-cut`), by characters;
 * - `pin {text, kind}` pins a fact or rule into every later context of the continuity (after
 *   every handoff too); its id is derived from the text, so pinning the same text twice is one pin;
 * - `unpin {id}` removes one.
 */
export function continuityActions(options: {
  store: EventStore;
  continuity: string;
  thread: string;
}): AnyInternalAction[] {
  const { store, continuity, thread } = options;
  const recall = defineInternalAction({
    name: "recall",
    description:
      'Reads the raw events a handoff summary covers back ({"summary": id}), a thread\'s steps ({"thread", "from_step", "to_step"}), or the whole text of a cut input ({"artifact": hash}); bounded, "offset" pages on.',
    parameters: recallParameters,
    async run(parameters) {
      if (parameters.artifact !== undefined) {
        return recallArtifact(
          store,
          parameters.artifact,
          parameters.offset ?? 0,
          parameters.max_chars ?? RECALL_DEFAULT_CHARS,
        );
      }
      const range = await recallRange(store, continuity, parameters);
      const maxChars = parameters.max_chars ?? RECALL_DEFAULT_CHARS;
      const offset = parameters.offset ?? 0;
      const lines: string[] = [];
      let size = 0;
      let index = 0;
      let more = false;
      for await (const event of store.read({
        continuity,
        after: range.after,
        ...(range.until !== undefined ? { until: range.until } : {}),
      })) {
        if (!RECALLED.has(event.type) || !inThread(event, range.thread)) continue;
        const step = stepOf(event);
        if (
          parameters.from_step !== undefined &&
          step !== undefined &&
          step < parameters.from_step
        ) {
          continue;
        }
        if (parameters.to_step !== undefined && step !== undefined && step > parameters.to_step) {
          break;
        }
        index += 1;
        if (index <= offset) continue;
        const line = describeEvent(event, step);
        if (lines.length >= RECALL_MAX_EVENTS || size + line.length > maxChars) {
          more = true;
          break;
        }
        lines.push(line);
        size += line.length + 1;
      }
      return {
        thread: range.thread,
        events: lines.length,
        text: lines.join("\n"),
        ...(more
          ? {
              more: true,
              next_offset: offset + lines.length,
              note: "recall again with next_offset",
            }
          : {}),
      };
    },
  });

  const pin = defineInternalAction({
    name: "pin",
    description:
      "Pins a fact or rule into every later context of this conversation (it survives every handoff).",
    parameters: pinParameters,
    async run({ text, kind }) {
      const id = pinId(text);
      await store.append({
        continuity,
        stream: { kind: "thread", id: thread },
        type: "context.pinned",
        data: { id, kind, text, by: thread },
      });
      return { id, kind };
    },
  });

  const unpin = defineInternalAction({
    name: "unpin",
    description: "Removes a pinned fact or rule by its id.",
    parameters: unpinParameters,
    async run({ id }) {
      await store.append({
        continuity,
        stream: { kind: "thread", id: thread },
        type: "context.unpinned",
        data: { id, by: thread },
      });
      return { id };
    },
  });
  return [recall, pin, unpin];
}

/** The id of a pinned text: the same text is the same pin. */
export function pinId(text: string): string {
  return `pin-${createHash("sha256").update(text.trim()).digest("hex").slice(0, 16)}`;
}

function inThread(event: SpoolEvent, thread: string): boolean {
  const { kind, id } = event.stream;
  if (kind === "thread") return id === thread;
  if (kind === "step") return parseStepStreamId(id).thread === thread;
  return kind === "continuity";
}

/** A slice of a cut input's artifact: `maxChars` characters from `offset`, and where to go on. */
async function recallArtifact(store: EventStore, hash: string, offset: number, maxChars: number) {
  if (!(await store.artifacts.has(hash))) {
    throw new SpoolError("recall.unknown-artifact", `there is no artifact "${hash}"`, {
      hint: "Give the hash a cut input's note names",
    });
  }
  const text = (await store.artifacts.get(hash)).toString("utf8");
  const part = text.slice(offset, offset + maxChars);
  const next = offset + part.length;
  return {
    artifact: hash,
    chars: text.length,
    offset,
    text: part,
    ...(next < text.length
      ? { more: true, next_offset: next, note: "recall again with next_offset" }
      : {}),
  };
}

/** Where a recall reads: the summary's covered range, or a thread from its start. */
async function recallRange(
  store: EventStore,
  continuity: string,
  query: { summary?: string; thread?: string },
): Promise<{ thread: string; after: number; until?: number }> {
  if (query.summary !== undefined) {
    for await (const event of store.read({
      continuity,
      stream: { kind: "worker", id: query.summary },
      types: ["summary.completed"],
    })) {
      const covers = (event.data as EventData<"summary.completed">).covers;
      return { thread: covers.thread, after: covers.from_seq - 1, until: covers.to_seq };
    }
    throw new SpoolError("recall.unknown-summary", `there is no summary "${query.summary}"`, {
      hint: "Use the id a handoff summary names (Summary … (<id>))",
    });
  }
  const thread = query.thread!;
  for await (const event of store.read({
    continuity,
    stream: { kind: "thread", id: thread },
    types: ["thread.started"],
  })) {
    return { thread, after: event.seq - 1 };
  }
  throw new SpoolError("recall.unknown-thread", `there is no thread "${thread}"`, {
    hint: "Use a thread id from `spool threads`",
  });
}

/** The step index of a step event, or undefined for thread events. */
function stepOf(event: SpoolEvent): number | undefined {
  if (event.stream.kind !== "step") return undefined;
  const { index } = parseStepStreamId(event.stream.id);
  return Number.isInteger(index) ? index : undefined;
}

/** One event as a line of text: its step, type and what it says (no log positions). */
function describeEvent(event: SpoolEvent, step: number | undefined): string {
  const data = event.data as Record<string, unknown>;
  let body: string;
  switch (event.type) {
    case "turn.added":
      body = `user: ${String(data.text)}`;
      break;
    case "message.completed": {
      const content = (
        data.content as { type: string; text?: string; name?: string; input_text?: string }[]
      )
        .map((block) =>
          block.type === "text"
            ? block.text
            : block.type === "tool-call"
              ? `[tool call ${block.name} ${block.input_text}]`
              : "",
        )
        .filter((text) => text)
        .join("");
      body = `assistant: ${content}`;
      break;
    }
    default:
      body = JSON.stringify(data);
  }
  return `[${step === undefined ? "thread" : `step ${step}`}] ${event.type}: ${body}`;
}
