import { OPENAI_FLAVOURS, type OpenAIFlavourName } from "../openai/flavours.js";
import type { ProviderFormat } from "../stream-part.js";

/** The providers `SPOOL_PROVIDER` (or the `provider` option) may name. */
export const PROVIDER_NAMES = [
  "anthropic",
  "openai",
  "openai-responses",
  "ollama",
  "vllm",
  "llamacpp",
  "groq",
  "deepseek",
  "mistral",
  "moonshot",
  "openrouter",
  "together",
  "compatible",
  "scripted",
] as const;
/** One of `PROVIDER_NAMES`. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** How one provider is reached when nothing overrides it. */
export interface ProviderDefaults {
  format: ProviderFormat;
  /** The OpenAI-compatible flavour (server quirks), for `openai-*` formats. */
  flavour?: string;
  /** The provider's own key variable (`SPOOL_API_KEY` overrides every one). */
  keyEnv?: string;
  /** Whether a call without a key is refused before it is made. */
  keyRequired: boolean;
  /**
   * The provider's own base-URL variable (`SPOOL_BASE_URL` overrides every one): Anthropic's,
   * OpenAI's, and `OPENAI_BASE_URL` for the local servers and `compatible` too, which is where the
   * guides of Ollama, vLLM, llama.cpp and LM Studio tell OpenAI clients to look.
   */
  baseURLEnv?: string;
  /** Where it listens; absent for `compatible` (a base URL must be given) and `scripted`. */
  defaultBaseURL?: string;
  /** The model used when none is named; absent where the server decides what it serves. */
  defaultModel?: string;
}

/**
 * Defaults per provider. Local servers (Ollama, vLLM, llama.cpp) need no key; a provider's key
 * variable is read only for that provider, so a key is never sent to another host. Hosted
 * OpenAI-compatible providers (Groq, …) ignore `OPENAI_BASE_URL`, so their key never goes there.
 */
export const PROVIDER_DEFAULTS: Readonly<Record<ProviderName, ProviderDefaults>> = {
  anthropic: {
    format: "anthropic",
    keyEnv: "ANTHROPIC_API_KEY",
    keyRequired: true,
    baseURLEnv: "ANTHROPIC_BASE_URL",
    defaultBaseURL: "https://api.anthropic.com",
    defaultModel: "claude-sonnet-5-5",
  },
  openai: {
    format: "openai-chat",
    flavour: "openai",
    keyEnv: "OPENAI_API_KEY",
    keyRequired: true,
    baseURLEnv: "OPENAI_BASE_URL",
    defaultBaseURL: "https://api.openai.com/v1",
    defaultModel: "gpt-5.5",
  },
  "openai-responses": {
    format: "openai-responses",
    flavour: "openai",
    keyEnv: "OPENAI_API_KEY",
    keyRequired: true,
    baseURLEnv: "OPENAI_BASE_URL",
    defaultBaseURL: "https://api.openai.com/v1",
    defaultModel: "gpt-5.5",
  },
  ollama: fromFlavour("ollama"),
  vllm: fromFlavour("vllm"),
  // llama-server answers with whatever model it loaded, whatever the request names.
  llamacpp: fromFlavour("llamacpp", "default"),
  groq: fromFlavour("groq", "llama-3.3-70b-versatile"),
  deepseek: fromFlavour("deepseek", "deepseek-chat"),
  mistral: fromFlavour("mistral", "mistral-large-latest"),
  moonshot: fromFlavour("moonshot", "kimi-k2-0905-preview"),
  openrouter: fromFlavour("openrouter"),
  together: fromFlavour("together"),
  compatible: {
    format: "openai-chat",
    flavour: "compatible",
    keyEnv: "OPENAI_COMPATIBLE_API_KEY",
    keyRequired: false,
    baseURLEnv: "OPENAI_BASE_URL",
  },
  scripted: {
    format: "scripted",
    keyRequired: false,
    defaultModel: "scripted",
  },
};

/** Keys whose presence picks a provider when nothing names one, in this order. */
export const KEY_INFERENCE_ORDER: readonly ProviderName[] = [
  "anthropic",
  "openai",
  "groq",
  "deepseek",
  "mistral",
  "moonshot",
  "openrouter",
];

/**
 * Names people give servers that are not provider names, and the provider to use instead (with
 * what else to set): `SPOOL_PROVIDER=lmstudio` is answered "use compatible …", not just refused.
 */
export const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  claude: "anthropic",
  chatgpt: "openai",
  gpt: "openai",
  "llama.cpp": "llamacpp",
  "llama-cpp": "llamacpp",
  "llama-server": "llamacpp",
  lmstudio: "compatible (with OPENAI_BASE_URL=http://localhost:1234/v1)",
  "lm-studio": "compatible (with OPENAI_BASE_URL=http://localhost:1234/v1)",
  "lm studio": "compatible (with OPENAI_BASE_URL=http://localhost:1234/v1)",
  responses: "openai-responses",
};

/** Whether `name` is one of `PROVIDER_NAMES`. */
export function isProviderName(name: string): name is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(name);
}

/**
 * The defaults of an OpenAI-compatible server, from the adapter's flavour table (one source for
 * base URLs and key variables). A server that needs no key (a local one) reads `OPENAI_BASE_URL`.
 */
function fromFlavour(name: OpenAIFlavourName, defaultModel?: string): ProviderDefaults {
  const flavour = OPENAI_FLAVOURS[name];
  return {
    format: "openai-chat",
    flavour: name,
    keyEnv: flavour.apiKeyEnv,
    keyRequired: flavour.requiresKey,
    ...(flavour.requiresKey ? {} : { baseURLEnv: "OPENAI_BASE_URL" }),
    ...(flavour.baseURL ? { defaultBaseURL: flavour.baseURL } : {}),
    ...(defaultModel ? { defaultModel } : {}),
  };
}
