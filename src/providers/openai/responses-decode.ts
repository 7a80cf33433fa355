import type {
  Response,
  ResponseOutputItem,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import { parseToolInput } from "../assembled-message.js";
import { ProviderError } from "../provider-error.js";
import type { StopReason, StreamPart, Usage } from "../stream-part.js";
import { BlockNumbers } from "./block-numbers.js";
import { streamFailureInfo } from "./openai-errors.js";

interface CallDraft {
  block: number;
  id: string;
  args: string[];
  ended: boolean;
}

/** Any output item, read loosely: the stream carries item types newer than the SDK's types. */
type LooseItem = ResponseOutputItem | { type: string; [key: string]: unknown };

/**
 * Turns Responses API stream events (as the SDK parsed them) into stream parts. Pure and
 * synchronous: `push` one event at a time.
 *
 * - `response.created` → `start`; text, refusal, reasoning summary and reasoning text deltas →
 *   their parts; a `function_call` item → `tool-call-start` / `-delta` / `-end` (id = `call_id`).
 * - Block numbers come from `output_index` plus the part's kind and `content_index` /
 *   `summary_index`: each distinct triple gets the next number when it first appears. Item ids are
 *   not used (some gateways rotate them on every event).
 * - A reasoning item ends with a `reasoning-signature` on its first block: the final item as JSON
 *   (id, summary, encrypted content), which `toResponsesRequest` sends back when it holds encrypted
 *   content.
 * - Every other item (web search, file search, code interpreter, image generation, MCP, shell,
 *   apply-patch, computer, custom tool, compaction, …) is a `provider-block` whose `kind` is the
 *   item type; it is sent when the item is added and again, with the final item, when it is done.
 * - Annotations of a finished text part (citations) become a `provider-block` of kind
 *   `annotations` after that text.
 * - `response.completed` / `response.incomplete` → `usage`, then `stop`.
 * - `response.failed` and `error` events throw a ProviderError (code from the event's error code).
 */
export class ResponsesStreamDecoder {
  readonly #provider: string;
  readonly #secrets: readonly string[];
  readonly #blocks = new BlockNumbers();
  readonly #calls = new Map<number, CallDraft>();
  /** The first block of each reasoning item, by output index. */
  readonly #reasoning = new Map<number, number>();
  #started = false;
  #sawFunctionCall = false;
  #sawRefusal = false;

  constructor(provider = "openai-responses", secrets: readonly string[] = []) {
    this.#provider = provider;
    this.#secrets = secrets;
  }

  /** The parts one event adds; throws a ProviderError for a failed response or an error event. */
  push(event: ResponseStreamEvent): StreamPart[] {
    const out: StreamPart[] = [];
    switch (event.type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        if (!this.#started) this.#start(out, event.response);
        break;
      case "response.output_item.added":
        this.#itemAdded(out, event.output_index, event.item);
        break;
      case "response.output_item.done":
        this.#itemDone(out, event.output_index, event.item);
        break;
      case "response.output_text.delta":
        if (event.delta !== "")
          this.#text(out, event.output_index, event.content_index, event.delta);
        break;
      case "response.refusal.delta":
        if (event.delta !== "") {
          this.#refusal(out, event.output_index, event.content_index, event.delta);
        }
        break;
      case "response.reasoning_summary_text.delta":
        if (event.delta !== "") {
          this.#reasoningText(
            out,
            event.output_index,
            `summary:${event.summary_index}`,
            event.delta,
          );
        }
        break;
      case "response.reasoning_text.delta":
        if (event.delta !== "") {
          this.#reasoningText(out, event.output_index, `text:${event.content_index}`, event.delta);
        }
        break;
      case "response.function_call_arguments.delta": {
        const call = this.#calls.get(event.output_index);
        if (call && !call.ended && event.delta !== "") {
          call.args.push(event.delta);
          this.#emit(out, {
            type: "tool-call-delta",
            block: call.block,
            id: call.id,
            inputText: event.delta,
          });
        }
        break;
      }
      case "response.function_call_arguments.done":
        this.#endCall(out, event.output_index, event.arguments);
        break;
      case "response.completed":
      case "response.incomplete":
        this.#finish(out, event.response);
        break;
      case "response.failed": {
        const error = event.response?.error;
        throw new ProviderError(
          streamFailureInfo(this.#provider, error?.code, error?.message, this.#secrets),
        );
      }
      case "error":
        throw new ProviderError(
          streamFailureInfo(this.#provider, event.code ?? undefined, event.message, this.#secrets),
        );
    }
    return out;
  }

  #start(out: StreamPart[], response: Partial<Response> | undefined): void {
    this.#started = true;
    out.push({ type: "start", responseId: response?.id ?? null, model: response?.model ?? "" });
  }

  #emit(out: StreamPart[], part: StreamPart): void {
    if (!this.#started) this.#start(out, undefined);
    out.push(part);
  }

  #text(out: StreamPart[], outputIndex: number, contentIndex: number, text: string): void {
    const block = this.#blocks.of(`${outputIndex}:text:${contentIndex ?? 0}`);
    this.#emit(out, { type: "text", block, text });
  }

  #refusal(out: StreamPart[], outputIndex: number, contentIndex: number, text: string): void {
    this.#sawRefusal = true;
    const block = this.#blocks.of(`${outputIndex}:refusal:${contentIndex ?? 0}`);
    this.#emit(out, { type: "refusal", block, text });
  }

  #reasoningText(out: StreamPart[], outputIndex: number, part: string, text: string): void {
    const block = this.#blocks.of(`${outputIndex}:reasoning:${part}`);
    if (!this.#reasoning.has(outputIndex)) this.#reasoning.set(outputIndex, block);
    const summary = part.startsWith("summary:");
    this.#emit(
      out,
      summary ? { type: "reasoning", block, text, summary } : { type: "reasoning", block, text },
    );
  }

  #itemAdded(out: StreamPart[], outputIndex: number, item: LooseItem): void {
    if (item.type === "message" || item.type === "reasoning") return;
    if (item.type === "function_call") {
      this.#startCall(out, outputIndex, item as FunctionCallItem);
      return;
    }
    const block = this.#blocks.of(`${outputIndex}:item`);
    this.#emit(out, { type: "provider-block", block, kind: item.type, data: item });
  }

  #startCall(out: StreamPart[], outputIndex: number, item: FunctionCallItem): CallDraft {
    let call = this.#calls.get(outputIndex);
    if (call) return call;
    const block = this.#blocks.of(`${outputIndex}:call`);
    call = { block, id: item.call_id || item.id || `call_${block}`, args: [], ended: false };
    this.#calls.set(outputIndex, call);
    this.#sawFunctionCall = true;
    this.#emit(out, { type: "tool-call-start", block, id: call.id, name: item.name ?? "" });
    if (item.arguments) {
      call.args.push(item.arguments);
      this.#emit(out, { type: "tool-call-delta", block, id: call.id, inputText: item.arguments });
    }
    return call;
  }

  #endCall(out: StreamPart[], outputIndex: number, finalArgs: string | undefined): void {
    const call = this.#calls.get(outputIndex);
    if (!call || call.ended) return;
    call.ended = true;
    const inputText = typeof finalArgs === "string" ? finalArgs : call.args.join("");
    this.#emit(out, {
      type: "tool-call-end",
      block: call.block,
      id: call.id,
      inputText,
      ...parseToolInput(inputText),
    });
  }

  #itemDone(out: StreamPart[], outputIndex: number, item: LooseItem): void {
    switch (item.type) {
      case "function_call":
        this.#startCall(out, outputIndex, item as FunctionCallItem);
        this.#endCall(out, outputIndex, (item as FunctionCallItem).arguments);
        return;
      case "message":
        this.#messageDone(out, outputIndex, item as MessageItem);
        return;
      case "reasoning":
        this.#reasoningDone(out, outputIndex, item as ReasoningItem);
        return;
      default: {
        const block = this.#blocks.of(`${outputIndex}:item`);
        this.#emit(out, { type: "provider-block", block, kind: item.type, data: item });
      }
    }
  }

  /** Text never streamed as deltas is taken from the finished item; citations follow their text. */
  #messageDone(out: StreamPart[], outputIndex: number, item: MessageItem): void {
    (item.content ?? []).forEach((part, index) => {
      if (part.type === "output_text") {
        if (this.#blocks.peek(`${outputIndex}:text:${index}`) === undefined && part.text) {
          this.#text(out, outputIndex, index, part.text);
        }
        if (Array.isArray(part.annotations) && part.annotations.length > 0) {
          const block = this.#blocks.of(`${outputIndex}:annotations:${index}`);
          this.#emit(out, {
            type: "provider-block",
            block,
            kind: "annotations",
            data: part.annotations,
          });
        }
      } else if (part.type === "refusal") {
        if (this.#blocks.peek(`${outputIndex}:refusal:${index}`) === undefined && part.refusal) {
          this.#refusal(out, outputIndex, index, part.refusal);
        }
      }
    });
  }

  #reasoningDone(out: StreamPart[], outputIndex: number, item: ReasoningItem): void {
    (item.summary ?? []).forEach((part, index) => {
      const key = `${outputIndex}:reasoning:summary:${index}`;
      if (this.#blocks.peek(key) === undefined && part.text) {
        this.#reasoningText(out, outputIndex, `summary:${index}`, part.text);
      }
    });
    (item.content ?? []).forEach((part, index) => {
      const key = `${outputIndex}:reasoning:text:${index}`;
      if (this.#blocks.peek(key) === undefined && part.text) {
        this.#reasoningText(out, outputIndex, `text:${index}`, part.text);
      }
    });
    let block = this.#reasoning.get(outputIndex);
    if (block === undefined) {
      if (!item.encrypted_content) return;
      block = this.#blocks.of(`${outputIndex}:reasoning:signature`);
    }
    const { status: _status, ...signed } = item;
    this.#emit(out, { type: "reasoning-signature", block, signature: JSON.stringify(signed) });
  }

  #finish(out: StreamPart[], response: Response): void {
    for (const outputIndex of this.#calls.keys()) this.#endCall(out, outputIndex, undefined);
    if (response.usage) this.#emit(out, { type: "usage", usage: responsesUsage(response.usage) });
    const hasCall =
      this.#sawFunctionCall ||
      (response.output ?? []).some((item) => item.type === "function_call");
    if (response.status === "incomplete") {
      const reason = response.incomplete_details?.reason ?? null;
      this.#emit(out, {
        type: "stop",
        reason: incompleteReason(reason),
        providerReason: reason ?? "incomplete",
      });
      return;
    }
    const reason: StopReason = hasCall ? "tool-use" : this.#sawRefusal ? "refusal" : "end";
    this.#emit(out, { type: "stop", reason, providerReason: response.status ?? "completed" });
  }
}

type FunctionCallItem = {
  type: "function_call";
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
};
type MessageItem = {
  type: "message";
  content?: { type: string; text?: string; refusal?: string; annotations?: unknown[] }[];
};
type ReasoningItem = {
  type: "reasoning";
  id?: string;
  status?: string;
  summary?: { text?: string }[];
  content?: { text?: string }[];
  encrypted_content?: string | null;
};

/**
 * Decodes a Responses API event stream into stream parts (see `ResponsesStreamDecoder`). Throws
 * what the SDK throws and a ProviderError for failed responses; never emits `error` itself.
 */
export async function* decodeResponsesStream(
  events: AsyncIterable<ResponseStreamEvent>,
  provider = "openai-responses",
  secrets: readonly string[] = [],
): AsyncGenerator<StreamPart> {
  const decoder = new ResponsesStreamDecoder(provider, secrets);
  for await (const event of events) for (const part of decoder.push(event)) yield part;
}

/** Responses usage as `Usage` fields. */
export function responsesUsage(usage: NonNullable<Response["usage"]>): Partial<Usage> {
  const out: Partial<Usage> = {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
  };
  const cached = usage.input_tokens_details?.cached_tokens;
  if (typeof cached === "number") out.cacheReadTokens = cached;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number") out.reasoningTokens = reasoning;
  return out;
}

function incompleteReason(reason: string | null): StopReason {
  if (reason === "max_output_tokens") return "max-tokens";
  if (reason === "content_filter") return "content-filter";
  return "other";
}
