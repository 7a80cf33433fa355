import type { EventStore } from "../../log/index.js";

/** The id of the first chat continuity, and the prefix of the ones `spool chat --new` starts. */
export const CHAT_PREFIX = "chat";

/** A new chat's continuity id: `chat-` and the time, which sorts and reads well. */
export function newChatId(now: Date = new Date()): string {
  return `${CHAT_PREFIX}-${now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "")}`;
}

/**
 * The chat continuity `spool chat` continues: the store's most recently written one named
 * `chat` or `chat-…`; `undefined` when the store has none yet (a chat then starts `chat`).
 * Reads the continuity heads only.
 */
export async function latestChat(store: EventStore): Promise<string | undefined> {
  const heads = await store.continuities();
  const chats = heads.filter(
    (head) => head.continuity === CHAT_PREFIX || head.continuity.startsWith(`${CHAT_PREFIX}-`),
  );
  chats.sort((a, b) => a.lastSeq - b.lastSeq);
  return chats.at(-1)?.continuity;
}
