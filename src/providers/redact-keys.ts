/**
 * Patterns of API keys that may appear in text a provider or SDK produced (an echoed header, a
 * misconfigured URL): Anthropic `sk-ant-…`, OpenAI `sk-…`/`sk-proj-…`, Groq `gsk_…`, bearer tokens.
 */
const KEY_PATTERNS = [
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\bgsk_[A-Za-z0-9]{16,}/g,
  /\b(Bearer|x-api-key:?)\s+[A-Za-z0-9._~+/=-]{12,}/gi,
];

/**
 * `text` with every given secret, and anything shaped like an API key, replaced by `[redacted]`.
 * Every message a provider error carries passes through here before it is shown or logged.
 */
export function redactKeys(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  }
  for (const pattern of KEY_PATTERNS) {
    out = out.replace(pattern, (_match, prefix?: string) =>
      typeof prefix === "string" && /bearer|x-api-key/i.test(prefix)
        ? `${prefix} [redacted]`
        : "[redacted]",
    );
  }
  return out;
}
