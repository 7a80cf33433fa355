import type { EventData } from "../spec/index.js";
import type { AssembledMessage, ContentBlock } from "./assembled-message.js";
import type { ProviderErrorInfo } from "./provider-error.js";
import type { Usage } from "./stream-part.js";

/** The `data` of a `message.completed` event. */
export type MessageData = EventData<"message.completed">;
/** A logged content block. */
export type ContentBlockData = MessageData["content"][number];
/** A logged provider error. */
export type ProviderErrorData = EventData<"message.failed">["error"];

/** An assembled message as `message.completed` stores it (snake_case, as every event's data). */
export function toMessageData(message: AssembledMessage, provider: string): MessageData {
  return {
    format: message.format,
    provider,
    model: message.model,
    response_id: message.responseId,
    content: message.content.map(toBlockData),
    usage: toUsageData(message.usage),
    stop_reason: message.stopReason,
    provider_stop_reason: message.providerStopReason,
  };
}

/** The assembled message back from a logged `message.completed` (or `message.partial`). */
export function fromMessageData(data: MessageData): AssembledMessage {
  return {
    format: data.format,
    model: data.model,
    responseId: data.response_id,
    content: data.content.map(fromBlockData),
    usage: {
      inputTokens: data.usage.input_tokens,
      outputTokens: data.usage.output_tokens,
      cacheReadTokens: data.usage.cache_read_tokens,
      cacheWriteTokens: data.usage.cache_write_tokens,
      ...(data.usage.reasoning_tokens !== undefined
        ? { reasoningTokens: data.usage.reasoning_tokens }
        : {}),
    },
    stopReason: data.stop_reason,
    providerStopReason: data.provider_stop_reason,
  };
}

/** Usage in the log's spelling. */
export function toUsageData(usage: Usage): MessageData["usage"] {
  const data: MessageData["usage"] = {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
  };
  if (usage.reasoningTokens !== undefined) data.reasoning_tokens = usage.reasoningTokens;
  return data;
}

/** A provider error in the log's spelling. */
export function toProviderErrorData(error: ProviderErrorInfo): ProviderErrorData {
  const data: ProviderErrorData = {
    code: error.code,
    message: error.message,
    retryable: error.retryable,
  };
  if (error.status !== undefined) data.status = error.status;
  if (error.providerType !== undefined) data.provider_type = error.providerType;
  if (error.retryAfterMs !== undefined) data.retry_after_ms = error.retryAfterMs;
  if (error.requestId !== undefined) data.request_id = error.requestId;
  return data;
}

/** One content block in the log's spelling. */
export function toBlockData(block: ContentBlock): ContentBlockData {
  if (block.type !== "tool-call") return { ...block };
  const data: ContentBlockData = {
    type: "tool-call",
    id: block.id,
    name: block.name,
    input_text: block.inputText,
  };
  if ("input" in block) data.input = block.input;
  if (block.inputError !== undefined) data.input_error = block.inputError;
  if (block.server) data.server = true;
  return data;
}

/** One logged content block back as the provider layer's block. */
export function fromBlockData(data: ContentBlockData): ContentBlock {
  if (data.type !== "tool-call") return { ...data } as ContentBlock;
  const block: ContentBlock = {
    type: "tool-call",
    id: data.id,
    name: data.name,
    inputText: data.input_text,
  };
  if ("input" in data) block.input = data.input;
  if (data.input_error !== undefined) block.inputError = data.input_error;
  if (data.server) block.server = true;
  return block;
}
