import { ConfigError } from "../spec/index.js";
import { createAnthropicProvider } from "./anthropic/index.js";
import {
  createModelCatalogue,
  type DiscoveryKind,
  discoverModelWindow,
  type ModelCatalogue,
} from "./models/index.js";
import {
  createOpenAIChatProvider,
  createOpenAIResponsesProvider,
  isOpenAIFlavourName,
  OPENAI_FLAVOURS,
} from "./openai/index.js";
import type { Provider } from "./provider.js";
import { createScriptedProvider, type ScriptedProviderOptions } from "./scripted/index.js";
import type { TransportOptions } from "./sdk-provider.js";
import type { ProviderSettings } from "./settings/index.js";

/** The servers whose context windows Spool asks for (hosted APIs are in the catalogue). */
const DISCOVERY_KINDS: Partial<Record<string, DiscoveryKind>> = {
  vllm: "vllm",
  ollama: "ollama",
  llamacpp: "llamacpp",
  compatible: "any",
};

/** What `createProvider` needs besides the resolved settings. */
export interface CreateProviderOptions {
  transport?: TransportOptions;
  /** The `fetch` the SDK uses (proxies, tests). */
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
  /** Where output limits come from (default: the built-in catalogue). */
  catalogue?: ModelCatalogue;
  /** The script of a `scripted` provider. */
  scripted?: Omit<ScriptedProviderOptions, "transport">;
}

/**
 * The provider that `settings` (from `resolveProviderSettings`) describe: Anthropic Messages,
 * OpenAI Chat Completions (OpenAI itself or a compatible server by flavour), OpenAI Responses, or
 * the scripted provider. The key goes to the SDK client and nowhere else.
 */
export function createProvider(
  settings: ProviderSettings,
  options: CreateProviderOptions = {},
): Provider {
  const common = {
    name: settings.name,
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
  };
  switch (settings.format) {
    case "anthropic": {
      const known = (options.catalogue ?? createModelCatalogue()).lookup(settings.model);
      return createAnthropicProvider({
        ...common,
        apiKey: settings.apiKey ?? "",
        ...(known ? { defaultMaxOutputTokens: known.maxOutputTokens } : {}),
      });
    }
    case "openai-chat": {
      const flavour = settings.flavour ?? "openai";
      if (!isOpenAIFlavourName(flavour)) {
        throw new ConfigError(
          "provider.unknown-flavour",
          `unknown OpenAI-compatible flavour ${JSON.stringify(flavour)}`,
          {
            hint: "Use one of openai, ollama, vllm, llamacpp, groq, deepseek, mistral, moonshot, openrouter, together, compatible",
          },
        );
      }
      // The settings already read the environment; the adapter must not read it again.
      const provider = createOpenAIChatProvider({ ...common, flavour, env: {} });
      const kind = DISCOVERY_KINDS[flavour];
      const baseURL = settings.baseURL ?? OPENAI_FLAVOURS[flavour].baseURL;
      if (!kind || !baseURL) return provider;
      return {
        ...provider,
        stream: provider.stream.bind(provider),
        describeModel: (model, describe) =>
          discoverModelWindow({
            baseURL,
            model,
            kind,
            ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
            ...(options.fetch ? { fetch: options.fetch } : {}),
            ...(describe?.signal ? { signal: describe.signal } : {}),
          }),
      };
    }
    case "openai-responses":
      return createOpenAIResponsesProvider({ ...common, env: {} });
    case "scripted":
      if (!options.scripted) {
        throw new ConfigError("provider.no-script", "the scripted provider needs a script", {
          hint: "Pass scripted: { script: [...] } (or a script file where the command accepts one)",
        });
      }
      return createScriptedProvider({
        ...options.scripted,
        model: options.scripted.model ?? settings.model,
        ...(options.transport ? { transport: options.transport } : {}),
      });
  }
}
