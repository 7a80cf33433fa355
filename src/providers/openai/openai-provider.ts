import OpenAI from "openai";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import type { Provider } from "../provider.js";
import { createSdkProvider, type TransportOptions } from "../sdk-provider.js";
import { boundedReadFetch } from "./bounded-reads.js";
import { decodeChatStream } from "./chat-decode.js";
import { toChatRequest } from "./chat-request.js";
import { wrappedErrorFetch } from "./error-bodies.js";
import {
  NO_KEY_PLACEHOLDER,
  type OpenAIFlavourName,
  resolveApiKey,
  resolveBaseURL,
} from "./flavours.js";
import { classifyOpenAIError } from "./openai-errors.js";
import { decodeResponsesStream } from "./responses-decode.js";
import { toResponsesRequest } from "./responses-request.js";

/** Options shared by the OpenAI providers. */
export interface OpenAIProviderOptions {
  /** The API key; default the flavour's environment variable (`OPENAI_API_KEY`, `GROQ_API_KEY`, …). */
  apiKey?: string;
  /** The server's base URL, `/v1` included; default the flavour's. */
  baseURL?: string;
  /** The `fetch` the SDK uses (default the global one); inject one for tests or proxies. */
  fetch?: typeof globalThis.fetch;
  /** A name for logs and errors; default `openai-chat` / the flavour's name / `openai-responses`. */
  name?: string;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries before the first byte and the idle timeout (the key is added to `secrets`). */
  transport?: TransportOptions;
  /** Where environment variables are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Options of `createOpenAIChatProvider`. */
export interface OpenAIChatProviderOptions extends OpenAIProviderOptions {
  /** Which server speaks Chat Completions here (default `openai`); see `OPENAI_FLAVOURS`. */
  flavour?: OpenAIFlavourName;
}

/**
 * A provider for OpenAI Chat Completions and the servers that speak it (Ollama, vLLM, llama.cpp,
 * Groq, DeepSeek, Mistral, Moonshot, OpenRouter, Together, any compatible one), through the
 * official `openai` SDK with its own retries off (the shared transport retries before the first
 * byte). Throws a `provider.no-key` ProviderError at once when a hosted flavour has no key, and
 * `provider.bad-request` when a `compatible` server has no base URL; the stream itself never throws.
 */
export function createOpenAIChatProvider(options: OpenAIChatProviderOptions = {}): Provider {
  const flavour = options.flavour ?? "openai";
  const name = options.name ?? (flavour === "openai" ? "openai-chat" : flavour);
  const { client, secrets } = openAIClient(flavour, options);
  return createSdkProvider<unknown>(
    {
      name,
      format: "openai-chat",
      baseURL: client.baseURL,
      checkURL: `${client.baseURL.replace(/\/+$/, "")}/models`,
      async open(request, signal) {
        return client.chat.completions.create(toChatRequest(request, flavour), {
          signal,
        });
      },
      decode: (events) => decodeChatStream(events, flavour, name),
      classify: (error) => classifyOpenAIError(error, name, secrets),
    },
    { ...options.transport, secrets: [...(options.transport?.secrets ?? []), ...secrets] },
  );
}

/**
 * A provider for the OpenAI Responses API (`POST /responses`), through the official `openai` SDK.
 * It continues from `request.previousResponseId` when given; when OpenAI no longer knows that
 * response (a 400/404 `previous_response_not_found`, or the same code in the stream), the stream
 * ends with a `provider.cursor-expired` error part, never retried. Throws a `provider.no-key`
 * ProviderError at once when there is no key.
 */
export function createOpenAIResponsesProvider(options: OpenAIProviderOptions = {}): Provider {
  const name = options.name ?? "openai-responses";
  const { client, secrets } = openAIClient("openai", options);
  return createSdkProvider<ResponseStreamEvent>(
    {
      name,
      format: "openai-responses",
      baseURL: client.baseURL,
      checkURL: `${client.baseURL.replace(/\/+$/, "")}/models`,
      async open(request, signal) {
        return client.responses.create(toResponsesRequest(request), { signal });
      },
      decode: (events) => decodeResponsesStream(events, name, secrets),
      classify: (error) => classifyOpenAIError(error, name, secrets),
    },
    { ...options.transport, secrets: [...(options.transport?.secrets ?? []), ...secrets] },
  );
}

function openAIClient(
  flavour: OpenAIFlavourName,
  options: OpenAIProviderOptions,
): { client: OpenAI; secrets: string[] } {
  const apiKey = resolveApiKey(flavour, options.apiKey, options.env);
  const client = new OpenAI({
    apiKey,
    baseURL: resolveBaseURL(flavour, options.baseURL),
    maxRetries: 0,
    fetch: boundedReadFetch(wrappedErrorFetch(options.fetch ?? globalThis.fetch)),
    ...(options.headers ? { defaultHeaders: options.headers } : {}),
  });
  return { client, secrets: apiKey === NO_KEY_PLACEHOLDER ? [] : [apiKey] };
}
