/** Spool provider names whose GenAI convention name differs. */
const WELL_KNOWN: Record<string, string> = {
  mistral: "mistral_ai",
  gemini: "gcp.gemini",
  xai: "x_ai",
  bedrock: "aws.bedrock",
};

/**
 * `gen_ai.provider.name` for a Spool provider name (`anthropic`, `openai`, `groq`, `ollama`,
 * `compatible`, `scripted`, …): the conventions' well-known value where one exists, otherwise
 * Spool's own name (the conventions allow custom values).
 */
export function genAiProviderName(provider: string): string {
  return WELL_KNOWN[provider] ?? provider;
}
