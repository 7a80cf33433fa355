import type { NewEvent, StreamRef } from "../../src/spec/index.js";

/** A `turn.added` input from `actor` with `text`. */
export function turn(continuity: string, text: string, actor = "ada"): NewEvent {
  return { continuity, type: "turn.added", actor, origin: "test", data: { text } };
}

/** A `continuity.created` event. */
export function created(continuity: string, title = "a chat"): NewEvent {
  return { continuity, type: "continuity.created", actor: "ada", origin: "test", data: { title } };
}

/** A droppable `token.delta` on a step stream. */
export function delta(continuity: string, step: string, text: string, block = "text"): NewEvent {
  const stream: StreamRef = { kind: "step", id: step };
  return { continuity, type: "token.delta", stream, data: { block, text } };
}

/** Collects an async iterable into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export { seededRandom } from "../../src/spec/index.js";

/**
 * A kill test's number of kills: `value` (an environment variable) when set, else `fallback`.
 * Anything but a whole number of at least 1 fails at once, naming the setting.
 */
export function killCount(value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1) {
    throw new Error(
      `a kill count must be a whole number of at least 1, not ${JSON.stringify(value)}`,
    );
  }
  return count;
}
