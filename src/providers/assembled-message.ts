import type { ProviderErrorInfo } from "./provider-error.js";
import type { ProviderFormat, StopReason, StreamPart, Usage } from "./stream-part.js";

/** One content block of an assembled message, in the order the model produced them. */
export type ContentBlock =
  | { type: "text"; text: string }
  | {
      type: "reasoning";
      text: string;
      /** Anthropic's thinking signature or OpenAI's encrypted reasoning: send it back unchanged. */
      signature?: string;
      /** An OpenAI reasoning summary rather than the reasoning itself. */
      summary?: boolean;
    }
  | { type: "redacted-reasoning"; data: string }
  | {
      type: "tool-call";
      id: string;
      name: string;
      /** The parsed input (`{}` when the model sent none); absent when `inputText` did not parse. */
      input?: unknown;
      inputText: string;
      inputError?: string;
      /** Executed by the provider (server tools); Spool does not run it. */
      server?: boolean;
    }
  | { type: "refusal"; text: string }
  | { type: "provider"; kind: string; data: unknown };

/** A tool call of an assembled message. */
export type ToolCallBlock = Extract<ContentBlock, { type: "tool-call" }>;

/**
 * A model's whole response, assembled from its stream parts: what the return sink hands back and
 * what `message.completed` stores.
 */
export interface AssembledMessage {
  format: ProviderFormat;
  model: string;
  /** The provider's id of the response (`msg_…`, `chatcmpl-…`, `resp_…`); null when none came. */
  responseId: string | null;
  content: ContentBlock[];
  usage: Usage;
  stopReason: StopReason;
  providerStopReason: string | null;
  /** Set when the stream failed: the content is what arrived before. */
  error?: ProviderErrorInfo;
}

/** The text blocks of a message joined: what the protocol parser reads. */
export function messageText(message: Pick<AssembledMessage, "content">): string {
  let text = "";
  for (const block of message.content) if (block.type === "text") text += block.text;
  return text;
}

/** The tool calls the caller must run (server tools excluded: the provider ran them). */
export function clientToolCalls(message: Pick<AssembledMessage, "content">): ToolCallBlock[] {
  return message.content.filter(
    (block): block is ToolCallBlock => block.type === "tool-call" && !block.server,
  );
}

/** Usage with every count zero. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/**
 * Folds stream parts into an `AssembledMessage`, one part at a time, so a sink can hold the
 * message so far. Pure: the same parts give the same message. Text of one block is joined once,
 * at `message()`, so long streams do not copy strings per delta.
 */
export class MessageAssembler {
  readonly #format: ProviderFormat;
  #model = "";
  #responseId: string | null = null;
  readonly #blocks: BlockDraft[] = [];
  readonly #usage: Usage = emptyUsage();
  #stopReason: StopReason | null = null;
  #providerStopReason: string | null = null;
  #error: ProviderErrorInfo | undefined;

  constructor(format: ProviderFormat) {
    this.#format = format;
  }

  /** Adds one part. Parts after the terminal one are ignored. */
  push(part: StreamPart): void {
    if (this.#stopReason !== null) return;
    switch (part.type) {
      case "start":
        this.#model = part.model;
        this.#responseId = part.responseId;
        if (part.usage) Object.assign(this.#usage, definedOnly(part.usage));
        return;
      case "text":
      case "refusal":
        this.#draft(part.block, part.type).pieces.push(part.text);
        return;
      case "reasoning": {
        const draft = this.#draft(part.block, "reasoning");
        draft.pieces.push(part.text);
        if (part.summary) draft.summary = true;
        return;
      }
      case "reasoning-signature":
        this.#draft(part.block, "reasoning").signature = part.signature;
        return;
      case "redacted-reasoning":
        this.#draft(part.block, "redacted-reasoning").pieces.push(part.data);
        return;
      case "tool-call-start": {
        const draft = this.#draft(part.block, "tool-call");
        draft.id = part.id;
        draft.name = part.name;
        if (part.server) draft.server = true;
        return;
      }
      case "tool-call-delta":
        this.#draft(part.block, "tool-call").pieces.push(part.inputText);
        return;
      case "tool-call-end": {
        const draft = this.#draft(part.block, "tool-call");
        draft.id ||= part.id;
        draft.pieces = [part.inputText];
        draft.ended = { input: part.input, inputError: part.inputError };
        return;
      }
      case "provider-block": {
        const draft = this.#draft(part.block, "provider");
        draft.kind = part.kind;
        draft.data = part.data;
        return;
      }
      case "usage":
        Object.assign(this.#usage, definedOnly(part.usage));
        return;
      case "stop":
        this.#stopReason = part.reason;
        this.#providerStopReason = part.providerReason;
        return;
      case "error":
        this.#error = part.error;
        this.#stopReason = part.error.code === "provider.cancelled" ? "cancelled" : "error";
        return;
      case "retry":
      case "raw":
        return;
    }
  }

  /** True once a `stop` or `error` part arrived. */
  get finished(): boolean {
    return this.#stopReason !== null;
  }

  /** The message so far (complete once `finished`). */
  message(): AssembledMessage {
    const message: AssembledMessage = {
      format: this.#format,
      model: this.#model,
      responseId: this.#responseId,
      content: this.#blocks.filter((draft) => draft !== undefined).map(toBlock),
      usage: { ...this.#usage },
      stopReason: this.#stopReason ?? "error",
      providerStopReason: this.#providerStopReason,
    };
    if (this.#error) message.error = this.#error;
    return message;
  }

  #draft(index: number, type: ContentBlock["type"]): BlockDraft {
    let draft = this.#blocks[index];
    if (!draft) {
      draft = { type, pieces: [], id: "", name: "" };
      this.#blocks[index] = draft;
    }
    return draft;
  }
}

/** Assembles the parts of one whole stream. */
export function assembleMessage(
  format: ProviderFormat,
  parts: Iterable<StreamPart>,
): AssembledMessage {
  const assembler = new MessageAssembler(format);
  for (const part of parts) assembler.push(part);
  return assembler.message();
}

interface BlockDraft {
  type: ContentBlock["type"];
  pieces: string[];
  id: string;
  name: string;
  server?: boolean;
  summary?: boolean;
  signature?: string;
  kind?: string;
  data?: unknown;
  ended?: { input: unknown; inputError: string | undefined };
}

function toBlock(draft: BlockDraft): ContentBlock {
  const text = draft.pieces.join("");
  switch (draft.type) {
    case "text":
      return { type: "text", text };
    case "refusal":
      return { type: "refusal", text };
    case "reasoning": {
      const block: ContentBlock = { type: "reasoning", text };
      if (draft.signature !== undefined) block.signature = draft.signature;
      if (draft.summary) block.summary = true;
      return block;
    }
    case "redacted-reasoning":
      return { type: "redacted-reasoning", data: text };
    case "tool-call": {
      const block: ToolCallBlock = {
        type: "tool-call",
        id: draft.id,
        name: draft.name,
        inputText: text,
      };
      const parsed = draft.ended ?? parseToolInput(text);
      if (parsed.inputError !== undefined) block.inputError = parsed.inputError;
      else block.input = parsed.input;
      if (draft.server) block.server = true;
      return block;
    }
    case "provider":
      return { type: "provider", kind: draft.kind ?? "unknown", data: draft.data ?? null };
  }
}

/**
 * Parses a tool call's streamed input: `{}` for empty text, the value for JSON, and the parser's
 * complaint otherwise. Used by adapters for `tool-call-end` and by the assembler when a stream was
 * cut before the end.
 */
export function parseToolInput(text: string): { input?: unknown; inputError?: string } {
  if (text.trim() === "") return { input: {} };
  try {
    return { input: JSON.parse(text) };
  } catch (error) {
    return { inputError: error instanceof Error ? error.message : String(error) };
  }
}

function definedOnly(usage: Partial<Usage>): Partial<Usage> {
  const out: Partial<Usage> = {};
  for (const [key, value] of Object.entries(usage) as [keyof Usage, number | undefined][]) {
    if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  }
  return out;
}
