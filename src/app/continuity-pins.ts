import type { EventStore } from "../log/index.js";
import { pinId } from "../runtime/index.js";
import type { EventData } from "../spec/index.js";

/** The most characters a pinned text may have (`context.pinned`'s schema). */
export const MAX_PIN_CHARS = 4000;

/** One pinned rule or fact in force, as `spool pins` shows it. */
export interface PinRow {
  id: string;
  kind: "rule" | "fact";
  text: string;
  /** `user`, or the thread whose model pinned it. */
  by: string;
  /** The `context.pinned` event that put it in force (its latest, when pinned again). */
  seq: number;
  ts: string;
}

/**
 * Appends `context.pinned` for `text` (trimmed) on the continuity stream, `by: "user"`; its id
 * is `pinId(text)`. Resolves with the pin; a text the catalog refuses (empty, too long) rejects
 * with `EventValidationError` and appends nothing.
 */
export async function appendPin(
  store: EventStore,
  continuity: string,
  pin: { text: string; kind: "rule" | "fact"; actor: string; origin?: string },
): Promise<PinRow> {
  const text = pin.text.trim();
  const data: EventData<"context.pinned"> = { id: pinId(text), kind: pin.kind, text, by: "user" };
  const stored = await store.append({
    continuity,
    type: "context.pinned",
    actor: pin.actor,
    origin: pin.origin ?? "cli",
    data,
  });
  return { ...data, seq: stored.seq, ts: stored.ts };
}

/**
 * Appends `context.unpinned` (`by: "user"`) when `id` is in force in the continuity; resolves
 * with `ok: false` and appends nothing otherwise.
 */
export async function removePin(
  store: EventStore,
  continuity: string,
  pin: { id: string; actor: string; origin?: string },
): Promise<{ ok: boolean; continuity: string }> {
  const pins = await pinsInForce(store, continuity);
  if (!pins.some((item) => item.id === pin.id)) return { ok: false, continuity };
  await store.append({
    continuity,
    type: "context.unpinned",
    actor: pin.actor,
    origin: pin.origin ?? "cli",
    data: { id: pin.id, by: "user" },
  });
  return { ok: true, continuity };
}

/**
 * The pins in force in a continuity, oldest first: `context.pinned` and `context.unpinned` of
 * every stream folded in log order, as the runtime folds them (pinning an id again moves it to
 * the end with its latest event).
 */
export async function pinsInForce(store: EventStore, continuity: string): Promise<PinRow[]> {
  const pins = new Map<string, PinRow>();
  for await (const event of store.read({
    continuity,
    types: ["context.pinned", "context.unpinned"],
  })) {
    if (event.type === "context.pinned") {
      const data = event.data as EventData<"context.pinned">;
      pins.delete(data.id);
      pins.set(data.id, { ...data, seq: event.seq, ts: event.ts });
    } else {
      pins.delete((event.data as EventData<"context.unpinned">).id);
    }
  }
  return [...pins.values()];
}
