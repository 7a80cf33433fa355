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
