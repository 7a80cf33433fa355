import Anthropic from "@anthropic-ai/sdk";
import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import type { Provider } from "../provider.js";
import { ProviderError } from "../provider-error.js";
import { createSdkProvider, type SdkAdapter, type TransportOptions } from "../sdk-provider.js";
import { decodeAnthropicEvents } from "./anthropic-decode.js";
import { toAnthropicParams } from "./anthropic-request.js";
import { withSdkWarnings } from "./sdk-warnings.js";

/** Options of `createAnthropicProvider`. */
export interface AnthropicProviderOptions {
  /** The API key, sent as the SDK sends it (`Authorization: Bearer` in SDK 1.12); never shown in errors. */
  apiKey: string;
  /** Default `https://api.anthropic.com` (or the SDK's `ANTHROPIC_BASE_URL`); any compatible server. */
  baseURL?: string;
  /** The `fetch` the SDK uses (default the global one); inject one to record or replay. */
  fetch?: typeof globalThis.fetch;
  /** A name for logs and errors (default `anthropic`). */
  name?: string;
  /** `max_tokens` for requests without `maxOutputTokens` (default 4096). */
  defaultMaxOutputTokens?: number;
  /** Extra headers on every request (`anthropic-beta`, a gateway's own headers, …). */
  headers?: Record<string, string>;
  /** Retries before the first byte, idle timeout, backoff (the SDK's own retries are off). */
  transport?: TransportOptions;
}

/**
 * A `Provider` for the Anthropic Messages API, on the official SDK's raw event stream
 * (`messages.create({ stream: true })`, not the `MessageStream` helper: every event, less work).
 *
 * The SDK's retries are off: Spool's transport retries attempts that fail before the first
 * byte and reports them as `retry` parts, ends silent streams after `transport.idleTimeoutMs`,
 * and turns every failure into one `error` part whose message never contains the key. Requests
 * are mapped by `toAnthropicParams` and events decoded by `decodeAnthropicEvents`.
 *
 * Throws `provider.no-key` at once when `apiKey` is empty; never throws after that.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  const name = options.name ?? "anthropic";
  if (!options.apiKey?.trim()) {
    throw new ProviderError({
      code: "provider.no-key",
      message: `${name}: no API key. Pass apiKey, or set ANTHROPIC_API_KEY for Spool's configuration to find`,
      retryable: false,
    });
  }
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: 0,
    fetch: options.fetch,
    defaultHeaders: options.headers,
  });
  const defaults = { maxOutputTokens: options.defaultMaxOutputTokens };
  const adapter: SdkAdapter<RawMessageStreamEvent> = {
    name,
    format: "anthropic",
    baseURL: client.baseURL,
    checkURL: `${client.baseURL.replace(/\/+$/, "")}/v1/models`,
    async open(request, signal) {
      const params = toAnthropicParams(request, defaults);
      // Resolves once the response headers arrived; the body is read as the events are.
      // The SDK's deprecation warning would print on every attempt: Spool says it once a run.
      return withSdkWarnings(() => client.messages.create({ ...params, stream: true }, { signal }));
    },
    decode: (events) => decodeAnthropicEvents(events, { provider: name }),
  };
  const secrets = [...(options.transport?.secrets ?? []), options.apiKey];
  return createSdkProvider(adapter, { ...options.transport, secrets });
}
