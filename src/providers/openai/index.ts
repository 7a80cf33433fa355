export { BlockNumbers } from "./block-numbers.js";
export { ChatStreamDecoder, chatStopReason, decodeChatStream, toUsage } from "./chat-decode.js";
export { toChatMessages, toChatRequest, toolArguments } from "./chat-request.js";
export {
  isOpenAIFlavourName,
  NO_KEY_PLACEHOLDER,
  OPENAI_FLAVOURS,
  type OpenAIFlavour,
  type OpenAIFlavourName,
  REASONING_FIELDS,
  type ReasoningField,
  reasoningReadOrder,
  resolveApiKey,
  resolveBaseURL,
} from "./flavours.js";
export { classifyOpenAIError, streamFailureInfo } from "./openai-errors.js";
export {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  type OpenAIChatProviderOptions,
  type OpenAIProviderOptions,
} from "./openai-provider.js";
export {
  decodeResponsesStream,
  ResponsesStreamDecoder,
  responsesUsage,
} from "./responses-decode.js";
export { toResponsesItems, toResponsesRequest } from "./responses-request.js";
