import type { FeedSnapshot, FeedSnapshotEntry } from "./feed-snapshot.js";

const FEED_TAG = /<(?=\s*\/?\s*context_feed)/gi;
const SAFE_CODE = /^[A-Za-z0-9._:-]+$/;

/**
 * Makes `text` unable to open or close a `<context_feed>` block: every `<` that starts
 * `context_feed` or `/context_feed` (any case, spaces allowed after `<` and `/`) becomes `&lt;`.
 * Nothing else changes, so JSON, code and markdown in a value read exactly as the source wrote
 * them.
 */
export function neutraliseFeedTags(text: string): string {
  return text.replace(FEED_TAG, "&lt;");
}

function block(entry: FeedSnapshotEntry): string | undefined {
  const code =
    entry.error && SAFE_CODE.test(entry.error.code) ? ` error="${entry.error.code}"` : "";
  if (entry.value !== undefined) {
    const status = entry.error ? ` status="stale"${code}` : "";
    return `<context_feed id="${entry.id}"${status}>\n${neutraliseFeedTags(entry.value)}\n</context_feed>`;
  }
  if (entry.error) {
    return `<context_feed id="${entry.id}" status="unavailable"${code}>\n${neutraliseFeedTags(`[no value: ${entry.error.message}]`)}\n</context_feed>`;
  }
  return undefined;
}

/**
 * The prompt text of a snapshot: one block per feed, separated by a blank line,
 *
 * ```
 * <context_feed id="current_datetime">
 * 2024-06-15T12:34:56Z
 * </context_feed>
 * ```
 *
 * A value whose latest refresh failed is marked `status="stale" error="<code>"`; a feed that has
 * only failed shows `status="unavailable"` and the failure message; a feed never fetched is left
 * out. Values are neutralised with `neutraliseFeedTags`, so no value can end its block or fake
 * another. Ids are feed ids (letters, digits, `_`) and need no escaping. Empty snapshot: `""`.
 */
export function renderFeeds(snapshot: FeedSnapshot): string {
  return snapshot
    .map(block)
    .filter((text): text is string => text !== undefined)
    .join("\n\n");
}
