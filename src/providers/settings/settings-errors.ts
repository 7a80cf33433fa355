import { ConfigError, editDistance, nearestName } from "../../spec/index.js";
import { displayURL } from "./describe-settings.js";
import {
  PROVIDER_ALIASES,
  PROVIDER_DEFAULTS,
  PROVIDER_NAMES,
  type ProviderName,
} from "./provider-table.js";

/** A setting's value and where it came from (`SPOOL_PROVIDER`, the `provider` option, …). */
export interface SourcedValue {
  value: string;
  source: string;
}

/** Scrubs keys from a value before an error shows it, and shortens it. */
export type Shown = (text: string) => string;

/**
 * The variables that configure a provider: Spool's own, and every provider's key and base-URL
 * variable. When none of them is set (blank counts as unset) nothing is configured, and the CLI
 * runs its built-in demo; when any is set, a configuration that does not resolve is an error.
 */
export const PROVIDER_VARIABLES: readonly string[] = [
  ...new Set([
    "SPOOL_PROVIDER",
    "SPOOL_MODEL",
    "SPOOL_API_KEY",
    "SPOOL_BASE_URL",
    ...Object.values(PROVIDER_DEFAULTS).flatMap((d) => [d.keyEnv ?? "", d.baseURLEnv ?? ""]),
  ]),
].filter((name) => name !== "");

/** The provider variables set in `env` (non-blank), in `PROVIDER_VARIABLES` order. */
export function providerVariablesSet(env: Readonly<Record<string, string | undefined>>): string[] {
  return PROVIDER_VARIABLES.filter((name) => (env[name]?.trim() ?? "") !== "");
}

const SPOOL_VARIABLES = ["SPOOL_PROVIDER", "SPOOL_MODEL", "SPOOL_API_KEY", "SPOOL_BASE_URL"];

/**
 * Variables in `env` whose names are a typo of Spool's provider variables (`SPOOL_PROVDER`), each
 * with the name meant. Only `SPOOL_` names are read: the namespace is Spool's, so a near miss
 * there is a typo, where `GROK_API_KEY` beside `GROQ_API_KEY` may well be another service's key.
 */
export function misspelledVariables(
  env: Readonly<Record<string, string | undefined>>,
): { name: string; meant: string }[] {
  return Object.keys(env)
    .filter((name) => name.startsWith("SPOOL_") && !SPOOL_VARIABLES.includes(name))
    .filter((name) => (env[name]?.trim() ?? "") !== "")
    .flatMap((name) => {
      const meant = nearestName(name, SPOOL_VARIABLES, false);
      return meant ? [{ name, meant }] : [];
    });
}

/**
 * Whether anything in `env` tries to configure a provider: a provider variable set, or a typo of
 * one. Only when this is false may a caller fall back to a demo.
 */
export function isProviderConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  return providerVariablesSet(env).length > 0 || misspelledVariables(env).length > 0;
}

/** `provider.unknown`: names the setting, the accepted names and the nearest one. */
export function unknownProviderError(named: SourcedValue, shown: Shown): ConfigError {
  const typed = named.value.trim().toLowerCase();
  const guess = PROVIDER_ALIASES[typed] ?? nearestName(typed, PROVIDER_NAMES);
  const near = guess ? ` (did you mean ${guess}?)` : "";
  return new ConfigError(
    "provider.unknown",
    `Unknown provider "${shown(named.value)}" from ${named.source}${near}`,
    {
      hint: `Set ${named.source} to one of: ${PROVIDER_NAMES.join(", ")}`,
      details: {
        source: named.source,
        accepted: [...PROVIDER_NAMES],
        ...(guess ? { nearest: guess } : {}),
      },
    },
  );
}

/**
 * `provider.unspecified` when nothing names a provider. Its first sentence is always "No model
 * provider is configured" (the demo's reason line starts with it); the hint says what is set and
 * what would complete it.
 */
export function unspecifiedProviderError(
  env: Readonly<Record<string, string | undefined>>,
  model: SourcedValue | undefined,
  shown: Shown,
): ConfigError {
  const set = providerVariablesSet(env);
  const typos = misspelledVariables(env).map((t) => `${t.name} is set: did you mean ${t.meant}?`);
  const why = model
    ? `: ${model.source} names model "${shown(model.value)}", but nothing says which provider serves it`
    : typos.length > 0
      ? ` (${typos.join("; ")})`
      : set.length > 0
        ? `: ${set.join(", ")} ${set.length === 1 ? "is" : "are"} set, but name no provider`
        : "";
  return new ConfigError("provider.unspecified", `No model provider is configured${why}`, {
    hint: `Set SPOOL_PROVIDER (one of: ${PROVIDER_NAMES.join(", ")}) with its key, e.g. ANTHROPIC_API_KEY; or OPENAI_BASE_URL alone for a local server (http://localhost:11434/v1 for Ollama); for a demo without a key, SPOOL_PROVIDER=scripted`,
    details: { accepted: [...PROVIDER_NAMES], set },
  });
}

/** What to set as the model of `provider`, where the server (not Spool) knows the names. */
const MODEL_ADVICE: Partial<Record<ProviderName, string>> = {
  ollama: "a model you pulled (`ollama list`), e.g. llama3.2",
  vllm: "the model vLLM serves (the one `vllm serve` was started with)",
  llamacpp: "any name: llama-server answers with the model it loaded",
  openrouter: "an OpenRouter model id, e.g. provider/model",
  together: "a Together model id",
};

/** `provider.no-model`: which provider, who chose it, and how to find a name. */
export function noModelError(
  name: ProviderName,
  chosenBy: string,
  baseURL: string | undefined,
  shown: Shown,
): ConfigError {
  const list = baseURL
    ? `; \`curl ${shown(displayURL(trimSlash(baseURL)))}/models\` lists them`
    : "";
  const advice = MODEL_ADVICE[name] ?? "a model id the server serves";
  return new ConfigError(
    "provider.no-model",
    `No model named for provider ${name} (chosen by ${chosenBy})`,
    {
      hint: `Set SPOOL_MODEL (or the \`model\` option) to ${advice}${list}`,
      details: { provider: name, setting: "SPOOL_MODEL" },
    },
  );
}

/** `provider.no-key`: the variable to set, and a variable set under a near-miss name. */
export function noKeyError(
  name: ProviderName,
  env: Readonly<Record<string, string | undefined>>,
): ConfigError {
  const variable = PROVIDER_DEFAULTS[name].keyEnv ?? "SPOOL_API_KEY";
  const setNames = Object.keys(env).filter(
    (key) => key !== variable && (env[key]?.trim() ?? "") !== "",
  );
  const typo = nearestName(variable, setNames, false);
  return new ConfigError(
    "provider.no-key",
    `No API key for provider ${name}${typo ? ` (${typo} is set: did you mean ${variable}?)` : ""}`,
    {
      hint: `Set ${variable} (or SPOOL_API_KEY), or pass the \`apiKey\` option`,
      details: { provider: name, variables: [variable, "SPOOL_API_KEY"] },
    },
  );
}

/**
 * `provider.bad-base-url` unless `baseURL` is an http(s) URL; suggests the URL most likely meant
 * (`localhost:11434/v1` → `http://localhost:11434/v1`).
 */
export function checkBaseURL(baseURL: SourcedValue, shown: Shown): void {
  let protocol = "";
  try {
    protocol = new URL(baseURL.value).protocol;
  } catch {
    // Reported below.
  }
  if (protocol === "http:" || protocol === "https:") return;
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(baseURL.value);
  const problem = hasScheme
    ? `uses ${protocol.slice(0, -1) || "an unknown scheme"}`
    : "has no scheme";
  const guess = suggestURL(baseURL.value);
  const near = guess ? ` (did you mean "${shown(guess)}"?)` : "";
  throw new ConfigError(
    "provider.bad-base-url",
    `The base URL from ${baseURL.source} ${problem}, not http(s): "${shown(baseURL.value)}"${near}`,
    {
      hint: `Set ${baseURL.source} to the server's http:// or https:// address with its path, e.g. https://api.openai.com/v1 or http://localhost:11434/v1`,
      details: { source: baseURL.source, ...(guess ? { nearest: shown(guess) } : {}) },
    },
  );
}

/** Local servers that serve the OpenAI API under `/v1` only (the root answers 404). */
const UNDER_V1: readonly ProviderName[] = ["ollama", "vllm", "llamacpp"];

/**
 * `provider.bad-base-url` when a local server's base URL (already known to be http(s)) has no
 * path: Ollama, vLLM and llama-server answer `/chat/completions` with a 404, under `/v1` only.
 */
export function checkServerPath(name: ProviderName, baseURL: SourcedValue, shown: Shown): void {
  if (!UNDER_V1.includes(name)) return;
  const path = new URL(baseURL.value).pathname;
  if (path !== "/" && path !== "") return;
  const meant = `${baseURL.value.trim().replace(/\/+$/, "")}/v1`;
  throw new ConfigError(
    "provider.bad-base-url",
    `The base URL from ${baseURL.source} has no path: "${shown(baseURL.value)}" (did you mean "${shown(meant)}"?)`,
    {
      hint: `${name} serves the OpenAI API under /v1: set ${baseURL.source} to ${shown(meant)}`,
      details: { source: baseURL.source, nearest: shown(meant) },
    },
  );
}

/** The http(s) URL a malformed base URL most likely meant, if there is a plausible one. */
function suggestURL(value: string): string | undefined {
  const text = value.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.+)$/i.exec(text);
  const rest = scheme ? scheme[2]! : text;
  // A host: localhost, an IPv6 literal, a dotted name or address, or a bare name with a port.
  const host =
    /^(?:localhost|\[[\d:a-f]+\]|[\w-]+(?:\.[\w-]+)+|[\w-]+(?=:\d))(?::\d+)?(?:[/?#]|$)/i;
  if (!host.test(rest)) return undefined;
  const wanted = scheme?.[1]?.toLowerCase() ?? "";
  // Loopback, private addresses and single-label names are on the user's network: plain http.
  const local =
    /^(?:localhost|127\.|0\.0\.0\.0|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|\[::1\]|host\.docker\.internal|[\w-]+(?=[:/]|$))/i.test(
      rest,
    );
  // A misspelt http(s) keeps its meaning; anything else (none, ftp, ws) by where the host is.
  const typed = editDistance(wanted, "http") <= 1 ? nearestName(wanted, ["https", "http"]) : "";
  const candidate = `${typed || (local ? "http" : "https")}://${rest}`;
  try {
    return new URL(candidate).hostname ? candidate : undefined;
  } catch {
    return undefined;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
