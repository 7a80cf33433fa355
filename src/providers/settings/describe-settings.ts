import { redactKeys } from "../redact-keys.js";
import type { ProviderSettings } from "./provider-settings.js";

/** Known non-secret key prefixes, longest first. */
const KEY_PREFIXES = ["sk-ant-", "sk-proj-", "sk-or-v1-", "sk-", "gsk_"];

/**
 * A key as it may be shown: its known prefix and last four characters (`sk-ant-…abcd`), or
 * `[set]` for a key too short to show any of it; undefined when there is none.
 */
export function maskKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (key.length < 16) return "[set]";
  const prefix = KEY_PREFIXES.find((p) => key.startsWith(p)) ?? "";
  return `${prefix}…${key.slice(-4)}`;
}

/** `url` with any password (and user name) replaced, for display. Unparseable text is redacted. */
export function displayURL(url: string, secrets: readonly string[] = []): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = parsed.username ? "***" : "";
      parsed.password = parsed.password ? "***" : "";
      return parsed.toString();
    }
  } catch {
    // Shown redacted below.
  }
  const shown = redactKeys(url, secrets);
  return shown.length > 80 ? `${shown.slice(0, 77)}…` : shown;
}

/**
 * One line describing `settings` for logs and `spool doctor`-style output, with the key masked:
 * `provider=anthropic format=anthropic model=claude-sonnet-4-5 baseURL=https://api.anthropic.com
 * key=sk-ant-…abcd (ANTHROPIC_API_KEY)`.
 */
export function describeSettings(settings: ProviderSettings): string {
  const parts = [`provider=${settings.name}`, `format=${settings.format}`];
  if (settings.flavour && settings.flavour !== settings.name) {
    parts.push(`flavour=${settings.flavour}`);
  }
  parts.push(`model=${settings.model}`);
  if (settings.baseURL) parts.push(`baseURL=${displayURL(settings.baseURL)}`);
  const key = maskKey(settings.apiKey);
  const from = settings.sources.apiKey ? ` (${settings.sources.apiKey})` : "";
  parts.push(`key=${key ? `${key}${from}` : "none"}`);
  return parts.join(" ");
}

/** The settings as JSON-safe data, the key masked: what `JSON.stringify(settings)` writes. */
export function settingsJSON(settings: ProviderSettings): Record<string, unknown> {
  return {
    name: settings.name,
    format: settings.format,
    ...(settings.flavour !== undefined ? { flavour: settings.flavour } : {}),
    model: settings.model,
    ...(settings.baseURL !== undefined ? { baseURL: displayURL(settings.baseURL) } : {}),
    ...(settings.apiKey !== undefined ? { apiKey: maskKey(settings.apiKey) } : {}),
    sources: settings.sources,
  };
}
