export {
  type AnthropicDecodeOptions,
  decodeAnthropicEvents,
} from "./anthropic-decode.js";
export { type AnthropicProviderOptions, createAnthropicProvider } from "./anthropic-provider.js";
export {
  type AnthropicParams,
  type AnthropicRequestDefaults,
  DEFAULT_MAX_OUTPUT_TOKENS,
  toAnthropicMessages,
  toAnthropicParams,
} from "./anthropic-request.js";
export { mapAnthropicStopReason } from "./anthropic-stop-reason.js";
