import { ProviderError } from "../provider-error.js";

/** Where a Chat Completions server streams reasoning text inside `choices[].delta`. */
export type ReasoningField = "reasoning_content" | "reasoning";

/**
 * What differs between servers that speak OpenAI Chat Completions. Everything else (SSE framing,
 * chunk shape, tool-call deltas) is the same, so one adapter serves them all.
 */
export interface OpenAIFlavour {
  /** The base URL used when the caller gives none; null when the caller must give one. */
  readonly baseURL: string | null;
  /** Whether a call without a key is refused before it is sent (local servers take a placeholder). */
  readonly requiresKey: boolean;
  /** The environment variable read when no `apiKey` option is given. */
  readonly apiKeyEnv: string;
  /**
   * The delta fields this server carries reasoning text in, in order of preference. Every flavour
   * reads both spellings (`reasoningReadOrder`), these first: the first field that holds text in
   * a delta is used, so a server that sends both spellings is not read twice, and reasoning is
   * never dropped because a server (DeepSeek on Azure, Alibaba, Cerebras, xAI) was reached
   * through another flavour.
   */
  readonly reasoningFields: readonly ReasoningField[];
  /** Whether the server accepts `stream_options: {include_usage: true}` (others send usage anyway). */
  readonly includeUsage: boolean;
  /** The request field of the output limit. */
  readonly maxTokensField: "max_completion_tokens" | "max_tokens";
  /** Whether `reasoning.effort` is sent, as `reasoning_effort`. */
  readonly reasoningEffort: boolean;
  /**
   * Whether earlier reasoning is sent back on assistant messages as `reasoning_content` (Moonshot
   * wants it for multi-step tool use; DeepSeek refuses it, so it is false there).
   */
  readonly echoReasoning: boolean;
}

/** Every delta field that carries reasoning text on some Chat Completions server. */
export const REASONING_FIELDS: readonly ReasoningField[] = ["reasoning_content", "reasoning"];

/**
 * The order in which a flavour's decoder looks for reasoning in a delta: its own fields, then
 * every other known spelling, so that no flavour drops reasoning a server sends.
 */
export function reasoningReadOrder(flavour: OpenAIFlavour): readonly ReasoningField[] {
  return [
    ...flavour.reasoningFields,
    ...REASONING_FIELDS.filter((field) => !flavour.reasoningFields.includes(field)),
  ];
}

/** The names of the known Chat Completions flavours. */
export type OpenAIFlavourName =
  | "openai"
  | "ollama"
  | "vllm"
  | "llamacpp"
  | "groq"
  | "deepseek"
  | "mistral"
  | "moonshot"
  | "openrouter"
  | "together"
  | "compatible";

const hosted = {
  requiresKey: true,
  includeUsage: false,
  maxTokensField: "max_tokens",
  reasoningEffort: false,
  echoReasoning: false,
} as const;

const local = { ...hosted, requiresKey: false, includeUsage: true } as const;

/**
 * The Chat Completions servers Spool knows, with their defaults. `compatible` is any other server:
 * it needs a `baseURL`, sends a key only when one is given, and reads reasoning from either field.
 * Configuration builds on this table; the adapter reads nothing else about a server.
 */
export const OPENAI_FLAVOURS: Readonly<Record<OpenAIFlavourName, OpenAIFlavour>> = {
  openai: {
    ...hosted,
    baseURL: "https://api.openai.com/v1",
    apiKeyEnv: "OPENAI_API_KEY",
    reasoningFields: [],
    includeUsage: true,
    maxTokensField: "max_completion_tokens",
    reasoningEffort: true,
  },
  ollama: {
    ...local,
    baseURL: "http://127.0.0.1:11434/v1",
    apiKeyEnv: "OLLAMA_API_KEY",
    reasoningFields: ["reasoning"],
  },
  vllm: {
    ...local,
    baseURL: "http://127.0.0.1:8000/v1",
    apiKeyEnv: "VLLM_API_KEY",
    // vLLM renamed `reasoning_content` to `reasoning`; versions in between send both.
    reasoningFields: ["reasoning_content", "reasoning"],
  },
  llamacpp: {
    ...local,
    baseURL: "http://127.0.0.1:8080/v1",
    apiKeyEnv: "LLAMACPP_API_KEY",
    reasoningFields: ["reasoning_content"],
  },
  groq: {
    ...hosted,
    baseURL: "https://api.groq.com/openai/v1",
    apiKeyEnv: "GROQ_API_KEY",
    reasoningFields: ["reasoning"],
  },
  deepseek: {
    ...hosted,
    baseURL: "https://api.deepseek.com",
    apiKeyEnv: "DEEPSEEK_API_KEY",
    reasoningFields: ["reasoning_content"],
    // Thinking mode with tool calls: the reasoning of a tool-calling turn must go back in every
    // later request (else a 400); in other turns the API ignores it. The retired
    // deepseek-reasoner, which refused it, did not call tools.
    echoReasoning: true,
    includeUsage: true,
  },
  mistral: {
    ...hosted,
    baseURL: "https://api.mistral.ai/v1",
    apiKeyEnv: "MISTRAL_API_KEY",
    // Magistral sends thinking as typed parts of `content`, which every flavour decodes.
    reasoningFields: [],
  },
  moonshot: {
    ...hosted,
    baseURL: "https://api.moonshot.ai/v1",
    apiKeyEnv: "MOONSHOT_API_KEY",
    reasoningFields: ["reasoning_content"],
    echoReasoning: true,
  },
  openrouter: {
    ...hosted,
    baseURL: "https://openrouter.ai/api/v1",
    apiKeyEnv: "OPENROUTER_API_KEY",
    reasoningFields: ["reasoning"],
    includeUsage: true,
  },
  together: {
    ...hosted,
    baseURL: "https://api.together.xyz/v1",
    apiKeyEnv: "TOGETHER_API_KEY",
    reasoningFields: ["reasoning"],
  },
  compatible: {
    ...hosted,
    requiresKey: false,
    baseURL: null,
    apiKeyEnv: "OPENAI_COMPATIBLE_API_KEY",
    reasoningFields: ["reasoning_content", "reasoning"],
  },
};

/** The key sent to servers that need none (the SDK always sends an `Authorization` header). */
export const NO_KEY_PLACEHOLDER = "no-key";

/** True when `name` is a key of `OPENAI_FLAVOURS`. */
export function isOpenAIFlavourName(name: string): name is OpenAIFlavourName {
  return Object.hasOwn(OPENAI_FLAVOURS, name);
}

/**
 * The API key to send: the option, else the flavour's environment variable, else (for servers that
 * need none) `NO_KEY_PLACEHOLDER`. Throws a `provider.no-key` ProviderError naming the option and
 * the variable when a hosted server has neither. An empty string counts as absent.
 */
export function resolveApiKey(
  flavourName: OpenAIFlavourName,
  apiKey: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const flavour = OPENAI_FLAVOURS[flavourName];
  const key = apiKey || env[flavour.apiKeyEnv];
  if (key) return key;
  if (!flavour.requiresKey) return NO_KEY_PLACEHOLDER;
  throw new ProviderError({
    code: "provider.no-key",
    message: `${flavourName}: no API key; pass the apiKey option or set ${flavour.apiKeyEnv}`,
    retryable: false,
  });
}

/**
 * The base URL to call: the option, else the flavour's default. Throws a ProviderError
 * (`provider.bad-request`) when neither exists (a `compatible` server without `baseURL`).
 */
export function resolveBaseURL(
  flavourName: OpenAIFlavourName,
  baseURL: string | undefined,
): string {
  const url = baseURL || OPENAI_FLAVOURS[flavourName].baseURL;
  if (url) return url;
  throw new ProviderError({
    code: "provider.bad-request",
    message: `${flavourName}: no base URL; pass the baseURL option (for example http://127.0.0.1:1234/v1)`,
    retryable: false,
  });
}
