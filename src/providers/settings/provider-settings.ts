import { ConfigError } from "../../spec/index.js";
import { createModelCatalogue, type ModelCatalogue } from "../models/index.js";
import { redactKeys } from "../redact-keys.js";
import { PROVIDER_FORMATS, type ProviderFormat } from "../stream-part.js";
import { describeSettings, settingsJSON } from "./describe-settings.js";
import {
  isProviderName,
  KEY_INFERENCE_ORDER,
  PROVIDER_DEFAULTS,
  type ProviderName,
} from "./provider-table.js";
import {
  checkBaseURL,
  checkServerPath,
  noKeyError,
  noModelError,
  type Shown,
  unknownProviderError,
  unspecifiedProviderError,
} from "./settings-errors.js";

/** What the caller says explicitly (command-line flags, configuration); each wins over the environment. */
export interface ProviderSettingsInput {
  provider?: string;
  model?: string;
  apiKey?: string;
  baseURL?: string;
  flavour?: string;
  format?: ProviderFormat;
}

/** The environment to read (`process.env` in the runtime, a plain object in tests). */
export type SettingsEnv = Readonly<Record<string, string | undefined>>;

/** Where each setting came from: an option (`the \`model\` option`), a variable, or a default. */
export interface SettingsSources {
  provider: string;
  model: string;
  apiKey?: string;
  baseURL?: string;
}

/**
 * How to reach a model. Contract: `apiKey` is readable but not enumerable, and `toJSON`,
 * `toString` and `util.inspect` show it masked (`sk-…abcd`), so spreading, logging or serialising
 * the settings never writes the key; read `settings.apiKey` where the SDK client is built.
 */
export interface ProviderSettings {
  readonly name: ProviderName;
  readonly format: ProviderFormat;
  readonly flavour?: string;
  readonly apiKey?: string;
  readonly baseURL?: string;
  /** The model id as given: sent to the provider verbatim. */
  readonly model: string;
  readonly sources: SettingsSources;
}

/** Options of `resolveProviderSettings`. */
export interface ResolveSettingsOptions {
  /** For inferring the provider from a model id; the built-in catalogue by default. */
  catalogue?: ModelCatalogue;
}

type Sourced = { value: string; source: string } | undefined;

/**
 * Resolves provider, model, key and base URL: each from its explicit option, then the
 * environment, then a default, else a `ConfigError` saying what to set. No error message, detail
 * or serialisation contains the key.
 *
 * - provider: the `provider` option, `SPOOL_PROVIDER`, a `<provider>/` prefix of the model id
 *   (`groq/llama-3.3-70b-versatile`), the model's maker in the catalogue (`claude-*` → anthropic,
 *   `gpt-*`/`o*` → openai; not for open-weight models, which many hosts serve), then
 *   `OPENAI_BASE_URL` without `OPENAI_API_KEY` (a keyless local server: `compatible`), then the
 *   first key present of `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GROQ_API_KEY`, …, then
 *   `SPOOL_BASE_URL` (or the `baseURL` option) alone (`compatible`). Never `scripted` unless named.
 *   An unknown name is `provider.unknown`, with the nearest valid one.
 * - model: the `model` option, `SPOOL_MODEL`, the provider's default.
 * - key: the `apiKey` option, `SPOOL_API_KEY`, the provider's own variable; required except for
 *   local servers, `compatible` and `scripted` (`provider.no-key`).
 * - base URL: the `baseURL` option, `SPOOL_BASE_URL`, the provider's own variable
 *   (`ANTHROPIC_BASE_URL`; `OPENAI_BASE_URL` for OpenAI, the local servers and `compatible`), the
 *   provider's default; must be http(s) (`provider.bad-base-url`, with the URL likely meant).
 * - format: the `format` option, else the provider's; `openai` uses the Responses API for models
 *   only it serves (`gpt-5-pro`, `o3-pro`, codex models).
 */
export function resolveProviderSettings(
  input: ProviderSettingsInput,
  env: SettingsEnv,
  options: ResolveSettingsOptions = {},
): ProviderSettings {
  const catalogue = options.catalogue ?? createModelCatalogue();
  const secrets = [input.apiKey, env.SPOOL_API_KEY, ...keyVariables().map((v) => env[v])]
    .map(clean)
    .filter((key): key is string => key !== undefined);
  const shown = (text: string) => {
    const redacted = redactKeys(text, secrets);
    return redacted.length > 80 ? `${redacted.slice(0, 77)}…` : redacted;
  };

  const givenModel = first([input.model, "the `model` option"], [env.SPOOL_MODEL, "SPOOL_MODEL"]);
  const chosen = chooseProvider(input, env, givenModel, catalogue, shown);
  const defaults = PROVIDER_DEFAULTS[chosen.name];

  const baseURL =
    first(
      [input.baseURL, "the `baseURL` option"],
      [env.SPOOL_BASE_URL, "SPOOL_BASE_URL"],
      [defaults.baseURLEnv ? env[defaults.baseURLEnv] : undefined, defaults.baseURLEnv ?? ""],
    ) ?? sourced(defaults.defaultBaseURL, `the ${chosen.name} default`);
  if (baseURL) {
    checkBaseURL(baseURL, shown);
    checkServerPath(chosen.name, baseURL, shown);
  } else if (chosen.name === "compatible") {
    throw new ConfigError("provider.no-base-url", "Provider compatible needs a base URL", {
      hint: "Set OPENAI_BASE_URL (or SPOOL_BASE_URL) to the server's OpenAI-compatible endpoint, e.g. http://localhost:8000/v1, or pass the `baseURL` option",
      details: { provider: chosen.name, setting: "OPENAI_BASE_URL" },
    });
  }

  const model = chosen.model ?? sourced(defaults.defaultModel, `the ${chosen.name} default`);
  if (!model) throw noModelError(chosen.name, chosen.source, baseURL?.value, shown);

  const format = chooseFormat(input.format, chosen.name, model.value, catalogue, shown);

  const key = first(
    [input.apiKey, "the `apiKey` option"],
    [env.SPOOL_API_KEY, "SPOOL_API_KEY"],
    [defaults.keyEnv ? env[defaults.keyEnv] : undefined, defaults.keyEnv ?? ""],
  );
  if (!key && defaults.keyRequired) throw noKeyError(chosen.name, env);

  const flavour = clean(input.flavour) ?? defaults.flavour;
  return makeSettings(
    {
      name: chosen.name,
      format,
      ...(flavour !== undefined ? { flavour } : {}),
      ...(baseURL ? { baseURL: baseURL.value } : {}),
      model: model.value,
      sources: {
        provider: chosen.source,
        model: model.source,
        ...(key ? { apiKey: key.source } : {}),
        ...(baseURL ? { baseURL: baseURL.source } : {}),
      },
    },
    key?.value,
  );
}

function chooseProvider(
  input: ProviderSettingsInput,
  env: SettingsEnv,
  model: Sourced,
  catalogue: ModelCatalogue,
  shown: Shown,
): { name: ProviderName; source: string; model: Sourced } {
  const named = first(
    [input.provider, "the `provider` option"],
    [env.SPOOL_PROVIDER, "SPOOL_PROVIDER"],
  );
  if (named) {
    const name = named.value.toLowerCase();
    if (!isProviderName(name)) throw unknownProviderError(named, shown);
    return { name, source: named.source, model };
  }

  const info = model ? catalogue.lookup(model.value) : undefined;
  if (model) {
    const slash = model.value.indexOf("/");
    const prefix = slash > 0 ? model.value.slice(0, slash).toLowerCase() : "";
    if (isProviderName(prefix) && slash < model.value.length - 1) {
      const rest = { value: model.value.slice(slash + 1), source: model.source };
      return { name: prefix, source: `the prefix of ${model.source}`, model: rest };
    }
    if (info && !info.openWeights && isProviderName(info.provider)) {
      return { name: info.provider, source: `the maker of model ${info.id}`, model };
    }
    if (!info && /^claude-/i.test(model.value)) {
      return { name: "anthropic", source: "the model id's claude- prefix", model };
    }
    if (!info && /^(?:gpt-|chatgpt-|o\d)/i.test(model.value)) {
      return { name: "openai", source: "the model id's OpenAI prefix", model };
    }
  }
  if (keylessServer(env)) {
    return { name: "compatible", source: "OPENAI_BASE_URL without OPENAI_API_KEY", model };
  }
  if (model && info) {
    throw new ConfigError(
      "provider.unspecified",
      `Model ${shown(model.value)} is served by several providers and none was named`,
      {
        hint: "Set SPOOL_PROVIDER (groq, openrouter, ollama, vllm, llamacpp, or compatible with OPENAI_BASE_URL) or pass the `provider` option; or set OPENAI_BASE_URL alone for a local server",
        details: { model: info.id },
      },
    );
  }

  for (const name of KEY_INFERENCE_ORDER) {
    const variable = PROVIDER_DEFAULTS[name].keyEnv;
    if (variable && clean(env[variable])) return { name, source: `${variable} being set`, model };
  }
  const base = first(
    [input.baseURL, "the `baseURL` option"],
    [env.SPOOL_BASE_URL, "SPOOL_BASE_URL"],
  );
  if (base) return { name: "compatible", source: `${base.source} with no provider key`, model };
  throw unspecifiedProviderError(env, model, shown);
}

/**
 * Whether the environment describes a keyless OpenAI-compatible server: `OPENAI_BASE_URL` set
 * and `OPENAI_API_KEY` not (OpenAI itself needs a key, so the URL is someone else's).
 */
function keylessServer(env: SettingsEnv): boolean {
  const url = clean(env.OPENAI_BASE_URL);
  if (url === undefined || clean(env.OPENAI_API_KEY) !== undefined) return false;
  return !/^https?:\/\/api\.openai\.com(?:[/:]|$)/i.test(url);
}

function chooseFormat(
  format: string | undefined,
  name: ProviderName,
  model: string,
  catalogue: ModelCatalogue,
  shown: Shown,
): ProviderFormat {
  const given = clean(format);
  if (given !== undefined) {
    if ((PROVIDER_FORMATS as readonly string[]).includes(given)) return given as ProviderFormat;
    throw new ConfigError("provider.bad-format", `Unknown format "${shown(given)}"`, {
      hint: `Use one of: ${PROVIDER_FORMATS.join(", ")}`,
      details: { accepted: [...PROVIDER_FORMATS] },
    });
  }
  if (name === "openai" && catalogue.lookup(model)?.format === "openai-responses") {
    return "openai-responses";
  }
  return PROVIDER_DEFAULTS[name].format;
}

function makeSettings(
  fields: Omit<ProviderSettings, "apiKey">,
  apiKey: string | undefined,
): ProviderSettings {
  const settings: ProviderSettings = { ...fields, sources: Object.freeze({ ...fields.sources }) };
  const hidden = (value: unknown) => ({ value, enumerable: false, writable: false });
  if (apiKey !== undefined) Object.defineProperty(settings, "apiKey", hidden(apiKey));
  Object.defineProperties(settings, {
    toJSON: hidden(() => settingsJSON(settings)),
    toString: hidden(() => describeSettings(settings)),
    [Symbol.for("nodejs.util.inspect.custom")]: hidden(() => settingsJSON(settings)),
  });
  return Object.freeze(settings);
}

function keyVariables(): string[] {
  return Object.values(PROVIDER_DEFAULTS).flatMap((d) => (d.keyEnv ? [d.keyEnv] : []));
}

function clean(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function sourced(value: string | undefined, source: string): Sourced {
  return value === undefined ? undefined : { value, source };
}

/** The first non-blank value (trimmed) with its source. */
function first(...pairs: [string | undefined, string][]): Sourced {
  for (const [value, source] of pairs) {
    const cleaned = clean(value);
    if (cleaned !== undefined) return { value: cleaned, source };
  }
  return undefined;
}
