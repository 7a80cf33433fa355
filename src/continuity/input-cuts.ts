import { createHash } from "node:crypto";
import type { EventStore } from "../log/index.js";
import type { UserPart } from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import type { ContextMessage, ThreadView } from "./context-bundle.js";

/** `context.input-cut` data: which message was cut, how much of it is kept, where the rest is. */
export type InputCutData = EventData<"context.input-cut">;

/** The media type of a cut input's artifact. */
export const INPUT_CUT_MEDIA_TYPE = "text/plain; charset=utf-8";

/**
 * The most tokens one input (a user turn, one tool result, one step's results text) may take in a
 * thread's context: a quarter of the input budget, so a turn, its step's results and the trailing
 * messages of a handoff always fit beside each other. Pure.
 */
export function inputTokenLimit(budget: number): number {
  return Math.max(256, Math.floor(budget / 4));
}

/** The share of the limit a cut leaves free, for the token estimate to drift in. */
const CUT_MARGIN = 0.1;

/** An input the thread's next compile cannot take whole, and how much of its start it keeps. */
export interface PlannedCut {
  seq: number;
  role: "user" | "tool";
  toolCallId?: string;
  /** The whole input (what the artifact stores); the message may hold less of it already. */
  text: string;
  tokens: number;
  limit: number;
  keptChars: number;
}

/**
 * The inputs of a thread's own messages (not those carried from another thread, which were cut
 * there) longer than `limit` tokens: user messages' text (`userText`), and each tool result.
 * For each, the most characters of its start that keep the cut message (excerpt and note) within
 * the limit. Deterministic: the same view, limit and counts give the same cuts; the caller logs
 * each (`logInputCuts`) before the compile, and the history applies it. Never cuts a message twice
 * at one limit (a cut message stays within it while the estimate drifts up to a tenth). Costs O(messages) cached counts, and a text count only for
 * a message over the limit.
 */
export function planInputCuts(
  view: ThreadView,
  limit: number,
  counts: {
    /** Tokens of a whole message (cached per message: most are under the limit). */
    message: (entry: ContextMessage) => number;
    /** Tokens of a text. */
    text: (text: string) => number;
  },
  original: (entry: ContextMessage, toolCallId?: string) => string | undefined = () => undefined,
): PlannedCut[] {
  const cuts: PlannedCut[] = [];
  const tokensOf = counts.text;
  for (const entry of view.messages) {
    if (entry.thread !== undefined || counts.message(entry) <= limit) continue;
    const { message } = entry;
    const text = message.role === "user" ? userText(message.content) : undefined;
    if (text !== undefined) {
      const cut = planOne(entry, text, original(entry), limit, tokensOf);
      if (cut) cuts.push(cut);
    } else if (message.role === "tool") {
      for (const result of message.results) {
        const whole = original(entry, result.toolCallId);
        const cut = planOne(entry, result.output, whole, limit, tokensOf, result.toolCallId);
        if (cut) cuts.push(cut);
      }
    }
  }
  return cuts;
}

/**
 * The text of a user message that a cut shortens: the whole of a text message, or the first part
 * of one with images (a step's results text before its screenshots).
 */
export function userText(content: string | readonly UserPart[]): string | undefined {
  if (typeof content === "string") return content;
  const first = content[0];
  return first?.type === "text" ? first.text : undefined;
}

function planOne(
  entry: ContextMessage,
  text: string,
  whole: string | undefined,
  limit: number,
  tokensOf: (text: string) => number,
  toolCallId?: string,
): PlannedCut | undefined {
  const tokens = tokensOf(text);
  if (tokens <= limit) return undefined;
  const base = {
    seq: entry.seq,
    role: entry.message.role === "tool" ? ("tool" as const) : ("user" as const),
    ...(toolCallId !== undefined ? { toolCallId } : {}),
    text: whole ?? text,
    tokens,
    limit,
  };
  // About two characters a token leaves room for the note; halve until the cut fits. The note
  // is measured with the artifact's real name (hex tokenizes unlike any placeholder), and the
  // cut aims a tenth under the limit: the estimate follows the provider's reported usage, and a
  // cut message must not cross the limit again (and be cut again) when it drifts a little.
  const target = Math.floor(limit * (1 - CUT_MARGIN));
  let keptChars = Math.min(text.length, target * 2);
  const chars = base.text.length;
  const hash = createHash("sha256").update(base.text, "utf8").digest("hex");
  const fits = (kept: number) =>
    tokensOf(cutInputText(text, { ...base, chars, keptChars: kept, hash })) <= target;
  while (keptChars > 0 && !fits(keptChars)) keptChars = Math.floor(keptChars / 2);
  return { ...base, keptChars: safeEnd(text, keptChars) };
}

/**
 * The text a cut input is sent as: the first `keptChars` characters of `text` (the input, or the
 * part of it the message held), then a note that says how long the input was (`chars`), that the whole text is artifact `hash`, and how to read it (`recall {"artifact"}`
 * from the offset where the excerpt stops). Pure: the history rebuilds it from the logged event.
 */
export function cutInputText(
  text: string,
  cut: { chars: number; keptChars: number; tokens: number; limit: number; hash: string },
): string {
  const kept = text.slice(0, cut.keptChars);
  return `${kept}…\n\n[input cut: it was ${cut.chars} characters (about ${cut.tokens} tokens), more than the ${cut.limit} tokens one input may take in this context. The whole text is artifact ${cut.hash}; read the rest with the internal action recall {"artifact": "${cut.hash}", "offset": ${cut.keptChars}}]`;
}

/**
 * Stores each planned cut's whole text as an artifact and logs its `context.input-cut` on the
 * thread's stream (the decision, before the compile that uses it). Returns the events' data.
 */
export async function logInputCuts(
  store: EventStore,
  continuity: string,
  thread: string,
  cuts: readonly PlannedCut[],
): Promise<InputCutData[]> {
  const logged: InputCutData[] = [];
  for (const cut of cuts) {
    const bytes = Buffer.from(cut.text, "utf8");
    const artifact = await store.artifacts.put(bytes, { mediaType: INPUT_CUT_MEDIA_TYPE });
    const data: InputCutData = {
      seq: cut.seq,
      role: cut.role,
      ...(cut.toolCallId !== undefined ? { tool_call_id: cut.toolCallId } : {}),
      chars: cut.text.length,
      tokens: cut.tokens,
      limit: cut.limit,
      kept_chars: cut.keptChars,
      artifact: { hash: artifact.hash, size: artifact.size, media_type: INPUT_CUT_MEDIA_TYPE },
    };
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "context.input-cut",
      data,
    });
    logged.push(data);
  }
  return logged;
}

/** `end`, moved back off the middle of a surrogate pair. */
function safeEnd(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return end;
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}
