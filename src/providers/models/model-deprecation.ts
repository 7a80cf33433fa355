import type { ModelInfo } from "./model-catalogue.js";

/**
 * The one line a run shows for a deprecated model (one whose catalogue entry has `retires`), or
 * undefined for a current one: when its maker retires it (or that it was retired, and calls to it
 * fail), and what to use instead. `today` is a `YYYY-MM-DD` day (UTC).
 */
export function deprecationNotice(info: ModelInfo, today: string): string | undefined {
  if (info.retires === undefined) return undefined;
  const instead = info.replacement
    ? `; use ${info.replacement} (SPOOL_MODEL, or the tier's model in .ai/config.yaml)`
    : "";
  if (info.retires <= today) {
    return `${info.id} was retired on ${info.retires}: calls to it fail${instead}`;
  }
  const days = Math.round((Date.parse(info.retires) - Date.parse(today)) / 86_400_000);
  const when = days === 1 ? "tomorrow" : `in ${days} days`;
  return `${info.id} is deprecated: its maker retires it on ${info.retires} (${when})${instead}`;
}
