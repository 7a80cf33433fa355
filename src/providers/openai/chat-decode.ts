import { z } from "zod";
import { parseToolInput } from "../assembled-message.js";
import { ProviderError } from "../provider-error.js";
import type { StopReason, StreamPart, Usage } from "../stream-part.js";
import { BlockNumbers } from "./block-numbers.js";
import {
  OPENAI_FLAVOURS,
  type OpenAIFlavourName,
  type ReasoningField,
  reasoningReadOrder,
} from "./flavours.js";

const count = z.number().nullish();

const chatUsageSchema = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: z.object({ cached_tokens: count }).nullish(),
  completion_tokens_details: z.object({ reasoning_tokens: count }).nullish(),
  /** DeepSeek's spelling of cached input tokens. */
  prompt_cache_hit_tokens: count,
});

const textPartSchema = z.object({ type: z.string().nullish(), text: z.string().nullish() });

/** Mistral (Magistral) streams `content` as typed parts: `thinking` (nested text parts) and `text`. */
const contentPartSchema = z.object({
  type: z.string().nullish(),
  text: z.string().nullish(),
  thinking: z.union([z.string(), z.array(textPartSchema)]).nullish(),
});

const toolCallDeltaSchema = z.object({
  index: z.number().nullish(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const chatChunkSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({
            content: z.union([z.string(), z.array(contentPartSchema)]).nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z.array(toolCallDeltaSchema).nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
        /** Moonshot puts usage inside the finishing choice. */
        usage: chatUsageSchema.nullish(),
      }),
    )
    .nullish(),
  usage: chatUsageSchema.nullish(),
  /** Groq repeats usage (with timings) under `x_groq`. */
  x_groq: z.object({ usage: chatUsageSchema.nullish() }).nullish(),
});

type ChatUsage = z.infer<typeof chatUsageSchema>;
type ToolCallDelta = z.infer<typeof toolCallDeltaSchema>;
type ChatChunk = z.infer<typeof chatChunkSchema>;

interface CallDraft {
  id: string;
  name: string;
  args: string[];
  block: number | undefined;
  ended: boolean;
}

/**
 * Turns Chat Completions chunks (as the SDK parsed them) into stream parts. Pure and synchronous:
 * `push` one chunk, `end` once the stream closed.
 *
 * Only choice 0 is read (`n > 1` answers are not supported). Block numbers follow first appearance
 * of reasoning, text, refusal and each tool call. Tool calls are keyed by their `index`; a call
 * without one (Mistral) is keyed by its id, and an id-less, index-less delta continues the last
 * call. `tool-call-end` comes for every open call at `finish_reason`; `stop` comes only at `end`,
 * because the usage chunk follows the finish chunk. A stream that closes without any
 * `finish_reason` gets no `stop`, so the runner reports it as cut.
 */
export class ChatStreamDecoder {
  readonly #reasoningFields: readonly ReasoningField[];
  readonly #provider: string;
  readonly #blocks = new BlockNumbers();
  readonly #calls = new Map<string, CallDraft>();
  /** The call each `index` currently continues (a new id at a used index starts a new call). */
  readonly #byIndex = new Map<number, string>();
  #lastCall: string | undefined;
  #started = false;
  #responseId: string | null = null;
  #model = "";
  #finishReason: string | null = null;
  #sawToolCall = false;
  #sawRefusal = false;

  /** `provider` names the provider in error messages. */
  constructor(flavourName: OpenAIFlavourName = "openai", provider = "openai-chat") {
    this.#reasoningFields = reasoningReadOrder(OPENAI_FLAVOURS[flavourName]);
    this.#provider = provider;
  }

  /** The parts one chunk adds. Throws a `provider.bad-stream` ProviderError for a malformed chunk. */
  push(raw: unknown): StreamPart[] {
    // Most chunks carry one text delta: checked by hand, they skip the schema (the hot path).
    const parsed = isPlainTextChunk(raw)
      ? { success: true as const, data: raw as ChatChunk }
      : chatChunkSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ProviderError({
        code: "provider.bad-stream",
        message: `${this.#provider}: a chunk is not a Chat Completions chunk (${parsed.error.issues
          .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
          .join("; ")}); check the base URL and the flavour`,
        retryable: false,
      });
    }
    const chunk = parsed.data;
    const out: StreamPart[] = [];
    if (!this.#started && (chunk.id || chunk.model)) {
      this.#responseId = chunk.id || null;
      this.#model = chunk.model ?? "";
      this.#start(out);
    }
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    const delta = choice?.delta;
    if (delta) {
      for (const field of this.#reasoningFields) {
        const text = delta[field];
        if (text) {
          this.#emit(out, { type: "reasoning", block: this.#blocks.of("reasoning"), text });
          break;
        }
      }
      if (typeof delta.content === "string") {
        if (delta.content !== "") this.#text(out, delta.content);
      } else if (delta.content) {
        for (const part of delta.content) this.#contentPart(out, part);
      }
      if (delta.refusal) {
        this.#sawRefusal = true;
        this.#emit(out, {
          type: "refusal",
          block: this.#blocks.of("refusal"),
          text: delta.refusal,
        });
      }
      for (const call of delta.tool_calls ?? []) this.#toolCall(out, call);
    }
    const usage = chunk.usage ?? chunk.x_groq?.usage ?? choice?.usage;
    if (usage) this.#emit(out, { type: "usage", usage: toUsage(usage) });
    if (choice?.finish_reason && this.#finishReason === null) {
      this.#finishReason = choice.finish_reason;
      this.#endCalls(out);
    }
    return out;
  }

  /** The parts after the stream closed: open tool calls end, then `stop` (if a finish came). */
  end(): StreamPart[] {
    const out: StreamPart[] = [];
    if (this.#finishReason === null) return out;
    this.#endCalls(out);
    this.#emit(out, {
      type: "stop",
      reason: chatStopReason(this.#finishReason, this.#sawToolCall, this.#sawRefusal),
      providerReason: this.#finishReason,
    });
    return out;
  }

  #start(out: StreamPart[]): void {
    this.#started = true;
    out.push({ type: "start", responseId: this.#responseId, model: this.#model });
  }

  #emit(out: StreamPart[], part: StreamPart): void {
    if (!this.#started) this.#start(out);
    out.push(part);
  }

  #text(out: StreamPart[], text: string): void {
    this.#emit(out, { type: "text", block: this.#blocks.of("text"), text });
  }

  #contentPart(out: StreamPart[], part: z.infer<typeof contentPartSchema>): void {
    if (part.type === "thinking") {
      const text =
        typeof part.thinking === "string"
          ? part.thinking
          : (part.thinking ?? []).map((inner) => inner.text ?? "").join("");
      if (text !== "") {
        this.#emit(out, { type: "reasoning", block: this.#blocks.of("reasoning"), text });
      }
    } else if ((part.type === "text" || part.type == null) && part.text) {
      this.#text(out, part.text);
    }
  }

  #toolCall(out: StreamPart[], delta: ToolCallDelta): void {
    const key = this.#callKey(delta);
    let call = this.#calls.get(key);
    if (!call) {
      call = { id: "", name: "", args: [], block: undefined, ended: false };
      this.#calls.set(key, call);
    }
    this.#lastCall = key;
    if (call.ended) return;
    if (delta.id && !call.id) call.id = delta.id;
    if (delta.function?.name && !call.name) call.name = delta.function.name;
    const args = delta.function?.arguments ?? "";
    if (args !== "") call.args.push(args);
    if (call.block === undefined && call.name !== "") this.#startCall(out, key, call);
    else if (call.block !== undefined && args !== "") {
      this.#emit(out, { type: "tool-call-delta", block: call.block, id: call.id, inputText: args });
    }
  }

  #callKey(delta: ToolCallDelta): string {
    if (typeof delta.index === "number") {
      const current = this.#byIndex.get(delta.index);
      const existing = current === undefined ? undefined : this.#calls.get(current);
      // A server that numbers every parallel call 0 still gives each its own id.
      if (current !== undefined && !(delta.id && existing?.id && existing.id !== delta.id)) {
        return current;
      }
      const key = `call:${delta.index}:${this.#calls.size}`;
      this.#byIndex.set(delta.index, key);
      return key;
    }
    if (delta.id) {
      for (const [key, call] of this.#calls) if (call.id === delta.id) return key;
      return `call:id:${delta.id}`;
    }
    return this.#lastCall ?? "call:0:0";
  }

  #startCall(out: StreamPart[], key: string, call: CallDraft): void {
    const block = this.#blocks.of(key);
    call.block = block;
    if (!call.id) call.id = `call_${block}`;
    this.#sawToolCall = true;
    this.#emit(out, { type: "tool-call-start", block, id: call.id, name: call.name });
    if (call.args.length > 0) {
      this.#emit(out, {
        type: "tool-call-delta",
        block,
        id: call.id,
        inputText: call.args.join(""),
      });
    }
  }

  #endCalls(out: StreamPart[]): void {
    for (const [key, call] of this.#calls) {
      if (call.ended) continue;
      if (call.block === undefined) {
        if (call.args.length === 0 && !call.id) continue;
        this.#startCall(out, key, call);
      }
      call.ended = true;
      const inputText = call.args.join("");
      this.#emit(out, {
        type: "tool-call-end",
        block: call.block!,
        id: call.id,
        inputText,
        ...parseToolInput(inputText),
      });
    }
  }
}

/**
 * Decodes a Chat Completions event stream (the SDK's parsed chunks) into stream parts: `start`,
 * content, `usage`, then `stop` once the stream closed. Throws what the SDK throws (an `error`
 * chunk, a cut connection), and a `provider.bad-stream` ProviderError for a malformed chunk.
 */
export async function* decodeChatStream(
  events: AsyncIterable<unknown>,
  flavourName: OpenAIFlavourName = "openai",
  provider = "openai-chat",
): AsyncGenerator<StreamPart> {
  const decoder = new ChatStreamDecoder(flavourName, provider);
  for await (const event of events) for (const part of decoder.push(event)) yield part;
  for (const part of decoder.end()) yield part;
}

/**
 * A Chat Completions usage object as `Usage` fields (only those it carries). `outputTokens`
 * includes reasoning tokens, also for servers that count them apart (xAI).
 */
export function toUsage(usage: ChatUsage): Partial<Usage> {
  const out: Partial<Usage> = {};
  if (usage.prompt_tokens != null) out.inputTokens = usage.prompt_tokens;
  if (usage.completion_tokens != null) out.outputTokens = usage.completion_tokens;
  const cached = [usage.prompt_tokens_details?.cached_tokens, usage.prompt_cache_hit_tokens].filter(
    (value): value is number => typeof value === "number",
  );
  if (cached.length > 0) out.cacheReadTokens = Math.max(...cached);
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoning != null) {
    out.reasoningTokens = reasoning;
    // xAI counts reasoning apart from completion_tokens (the total adds all three up).
    const { prompt_tokens: input, completion_tokens: output, total_tokens: total } = usage;
    if (reasoning > 0 && input != null && output != null && total === input + output + reasoning) {
      out.outputTokens = output + reasoning;
    }
  }
  return out;
}

/**
 * A `finish_reason` as a StopReason. `stop` after tool calls is `tool-use` (some servers say
 * `stop` there) and after a refusal is `refusal`; unknown words are `other`.
 */
export function chatStopReason(
  finishReason: string,
  sawToolCall: boolean,
  sawRefusal: boolean,
): StopReason {
  switch (finishReason) {
    case "stop":
    case "end_turn":
      return sawToolCall ? "tool-use" : sawRefusal ? "refusal" : "end";
    case "length":
      return "max-tokens";
    case "tool_calls":
    case "function_call":
      return "tool-use";
    case "content_filter":
      return "content-filter";
    default:
      return "other";
  }
}

/**
 * True for the common chunk that `chatChunkSchema` accepts and that holds only a text delta: one
 * choice of index 0 whose delta has a string `content` (and maybe a string `role`), no finish
 * reason, no usage. Anything else goes through the schema.
 */
function isPlainTextChunk(raw: unknown): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const chunk = raw as Record<string, unknown>;
  if (chunk.usage != null || chunk.x_groq != null) return false;
  if (chunk.id !== undefined && typeof chunk.id !== "string") return false;
  if (chunk.model !== undefined && typeof chunk.model !== "string") return false;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return false;
  const choice = choices[0] as Record<string, unknown> | null;
  if (typeof choice !== "object" || choice === null) return false;
  if ((choice.index ?? 0) !== 0 || choice.finish_reason != null || choice.usage != null)
    return false;
  const delta = choice.delta as Record<string, unknown> | null;
  if (typeof delta !== "object" || delta === null || typeof delta.content !== "string")
    return false;
  for (const key in delta) {
    if (key === "content") continue;
    if (key === "role" && typeof delta.role === "string") continue;
    return false;
  }
  return true;
}
