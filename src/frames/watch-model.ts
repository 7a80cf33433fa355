import type { Provider, ProviderMessage, StreamPart, UserPart } from "../providers/index.js";
import type { FrameRef } from "./frame-types.js";
import { noteLine } from "./watch-notes-text.js";
import type { CompactionPlan } from "./watch-state.js";

/** What one stream-watch model call answered. */
export interface WatchAnswer {
  readonly text: string;
  /** The model that answered, as the provider named it. */
  readonly model?: string;
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number };
}

/** What a commentary call is given. */
export interface CommentaryInput {
  readonly frame: FrameRef;
  /** The notes block (`renderWatchNotes`), possibly empty. */
  readonly notes: string;
  /** The conversation's recent turns as text (who said what), possibly empty. */
  readonly conversation: string;
  /** The agent's own instructions (its directive's body), so the commentary speaks as the agent. */
  readonly instructions?: string;
}

/**
 * The three model calls of a stream watch. A live implementation calls providers
 * (`createWatchModel`); a replay answers from the log (`recordedWatchModel`). Contract: each
 * resolves with the answer or rejects with an error carrying a `code` (a provider's error info);
 * the loops log a rejection as `watch.failed` and go on.
 */
export interface WatchModel {
  /** One line of what `frame` shows (the note-taker). `previous` is the last note, for contrast. */
  describe(frame: FrameRef, previous: string | undefined): Promise<WatchAnswer>;
  /** The new running summary from `plan` (the old summary and the evicted notes). */
  compact(plan: CompactionPlan): Promise<WatchAnswer>;
  /** A commentary on `input.frame`: something to say, `[SKIP]`, and `[[NOTE: …]]` observations. */
  comment(input: CommentaryInput): Promise<WatchAnswer>;
}

/** The note-taker's instructions: one line, no urgency, nothing but what is seen. */
export const NOTE_PROMPT = [
  "You take notes of a live screen or camera stream for an assistant that cannot see it.",
  "Describe what the image shows now in ONE line of at most 30 words: the app or scene, what is",
  "happening, any text or numbers that matter (scores, health, errors, titles). If a previous note",
  "is given, say what changed since it; if nothing did, repeat the previous note exactly.",
  "Answer with the line only: no preamble, no quotes, no list markers.",
].join(" ");

/** The compaction instructions: fold the evicted notes into the running summary. */
export const COMPACTION_PROMPT = [
  "You keep the running summary of a long screen-watching session. Rewrite the summary so it",
  "keeps the arc of what happened (scenes, phases, outcomes, anything the user may ask about",
  "later) and folds in the new notes, oldest first. Drop moment-to-moment detail that no longer",
  "matters. At most 200 words. Answer with the summary only.",
].join(" ");

/** The commentary instructions appended to the agent's own. */
export const COMMENTARY_PROMPT = [
  "You are watching the user's screen with them. The current frame is attached and the notes",
  "above say what happened so far. If something is worth saying now (a change, a success, a",
  "problem, a question to ask), say it in one or two short sentences, in your own voice. If",
  "nothing is worth saying, answer exactly [SKIP]. You may add observations for your own later",
  "reference as [[NOTE: one line]]; they are kept with the notes and never shown.",
].join(" ");

/** The provider and model of one kind of call. */
export interface WatchCallTarget {
  readonly provider: Provider;
  readonly model: string;
  readonly maxOutputTokens?: number;
}

/**
 * A `WatchModel` over providers: notes and compactions through `note`, commentary through
 * `commentary`. Frames go as image parts that name their artifact (`UserPart.artifact`): give
 * providers wrapped by the runtime's artifact edge (`withArtifactImages`) so the bytes are read
 * right before the call. An `error` part of the stream rejects with that error's info.
 */
export function createWatchModel(options: {
  note: WatchCallTarget;
  commentary: WatchCallTarget;
  signal?: AbortSignal;
}): WatchModel {
  const call = (target: WatchCallTarget, system: string, messages: ProviderMessage[]) =>
    collect(
      target.provider.stream(
        {
          model: target.model,
          system,
          messages,
          maxOutputTokens: target.maxOutputTokens ?? 512,
        },
        options.signal ? { signal: options.signal } : undefined,
      ),
      target.model,
    );
  return {
    describe(frame, previous) {
      const content: UserPart[] = [
        imagePart(frame),
        { type: "text", text: previous ? `Previous note: ${previous}` : "No previous note." },
      ];
      return call(options.note, NOTE_PROMPT, [{ role: "user", content }]);
    },
    compact(plan) {
      const text = [
        plan.summary ? `Current summary:\n${plan.summary}` : "There is no summary yet.",
        "",
        "Notes to fold in (oldest first):",
        ...plan.notes.map(noteLine),
      ].join("\n");
      return call(options.note, COMPACTION_PROMPT, [{ role: "user", content: text }]);
    },
    comment(input) {
      const context = [
        input.conversation ? `Recent conversation:\n${input.conversation}` : "",
        input.notes,
        "Comment on the current frame, or answer [SKIP].",
      ]
        .filter((part) => part !== "")
        .join("\n\n");
      const system = input.instructions
        ? `${input.instructions}\n\n${COMMENTARY_PROMPT}`
        : COMMENTARY_PROMPT;
      const content: UserPart[] = [imagePart(input.frame), { type: "text", text: context }];
      return call(options.commentary, system, [{ role: "user", content }]);
    },
  };
}

/** The image part of a stored frame: it names its artifact; the runtime edge reads the bytes. */
export function imagePart(frame: FrameRef): UserPart {
  return {
    type: "image",
    mediaType: frame.mime,
    data: "",
    artifact: frame.hash,
    width: frame.width,
    height: frame.height,
  };
}

/** An error a watch call rejects with: the provider's code and message. */
export class WatchCallError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  constructor(code: string, message: string, retryable: boolean) {
    super(message);
    this.name = "WatchCallError";
    this.code = code;
    this.retryable = retryable;
  }
}

async function collect(parts: AsyncIterable<StreamPart>, requested: string): Promise<WatchAnswer> {
  const pieces: string[] = [];
  let model = requested;
  let input = 0;
  let output = 0;
  for await (const part of parts) {
    if (part.type === "start") {
      model = part.model || requested;
      input = part.usage?.inputTokens ?? input;
    } else if (part.type === "text") pieces.push(part.text);
    else if (part.type === "usage") {
      input = part.usage.inputTokens ?? input;
      output = part.usage.outputTokens ?? output;
    } else if (part.type === "error") {
      throw new WatchCallError(part.error.code, part.error.message, part.error.retryable ?? false);
    }
  }
  return {
    text: pieces.join("").trim(),
    model,
    usage: { input_tokens: input, output_tokens: output },
  };
}
