/** `1,204`: a whole number with thousands separators. */
export function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** `830 ms`, `4.2 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** `$0.0123`: dollars, four decimals below a cent. */
export function usd(value: number): string {
  return value < 0.01 && value > 0 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** `14:03:22`: the local time of an ISO time or epoch milliseconds. */
export function clock(time: string | number): string {
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : date.toLocaleTimeString("en-GB");
}

/** Any value as one short line of JSON (cut with `…` past `max` characters). */
export function shortJson(value: unknown, max = 160): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
