export * from "./anthropic/index.js";
export {
  type AssembledMessage,
  assembleMessage,
  type ContentBlock,
  clientToolCalls,
  emptyUsage,
  MessageAssembler,
  messageText,
  parseToolInput,
  type ToolCallBlock,
} from "./assembled-message.js";
export {
  type ClassifyContext,
  CONTEXT_TOO_LONG_ADVICE,
  classifyProviderError,
  connectionMessage,
  isContextTooLong,
  retryAfter,
} from "./classify-error.js";
export { type CreateProviderOptions, createProvider } from "./create-provider.js";
export {
  type ContentBlockData,
  fromBlockData,
  fromMessageData,
  type MessageData,
  type ProviderErrorData,
  toBlockData,
  toMessageData,
  toProviderErrorData,
  toUsageData,
} from "./message-data.js";
export { messageImages, replaceImages } from "./message-images.js";
export {
  MODEL_RETRY,
  type ModelRetryPolicy,
  modelRetryDelay,
  PROVIDER_BACKOFF,
} from "./model-retry.js";
export * from "./models/index.js";
export * from "./openai/index.js";
export type {
  ImagePart,
  Provider,
  ProviderMessage,
  ProviderRequest,
  StreamOptions,
  ToolResult,
  ToolSpec,
  UserPart,
} from "./provider.js";
export {
  type CursorCall,
  type CursorRotation,
  continuedRequest,
  cursorRotatedEvent,
  type ProviderCursor,
  providerCursorProjection,
  streamWithCursor,
} from "./provider-cursor.js";
export {
  PROVIDER_ERROR_CODES,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorInfo,
} from "./provider-error.js";
export {
  decodeRecordedStream,
  RECORDED_FORMATS,
  type RecordedFormat,
  type RecordedStreamOptions,
} from "./recorded-stream.js";
export { redactKeys } from "./redact-keys.js";
export * from "./scripted/index.js";
export { createSdkProvider, type SdkAdapter, type TransportOptions } from "./sdk-provider.js";
export * from "./settings/index.js";
export {
  PROVIDER_FORMATS,
  type ProviderFormat,
  STOP_REASONS,
  type StopReason,
  type StreamPart,
  type StreamPartOf,
  type StreamPartType,
  type Usage,
} from "./stream-part.js";
export * from "./tokens/index.js";
