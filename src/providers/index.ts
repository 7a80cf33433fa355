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
export { type ClassifyContext, classifyProviderError, retryAfter } from "./classify-error.js";
export {
  type ContentBlockData,
  fromMessageData,
  type MessageData,
  type ProviderErrorData,
  toMessageData,
  toProviderErrorData,
  toUsageData,
} from "./message-data.js";
export type {
  Provider,
  ProviderMessage,
  ProviderRequest,
  StreamOptions,
  ToolResult,
  ToolSpec,
  UserPart,
} from "./provider.js";
export {
  PROVIDER_ERROR_CODES,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorInfo,
} from "./provider-error.js";
export { redactKeys } from "./redact-keys.js";
export {
  createSdkProvider,
  PROVIDER_BACKOFF,
  type SdkAdapter,
  type TransportOptions,
} from "./sdk-provider.js";
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
