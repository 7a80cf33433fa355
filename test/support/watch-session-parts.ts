/**
 * Parts of the stream-watch session tests: real JPEG frames made with sharp, a scripted vision
 * model that answers notes and commentary by what each request asks (and keeps every request),
 * and a wait for a logged event by subscribing to the store (no sleeps).
 */
import sharp from "sharp";
import type { EventStore } from "../../src/log/index.js";
import type { Provider, ProviderRequest } from "../../src/providers/index.js";
import { type EventOf, type EventType, isEvent } from "../../src/spec/index.js";
import { answeringProvider } from "./continuity-run.js";

/** A real 64×36 JPEG of one colour. */
export function jpeg(rgb: readonly [number, number, number]): Promise<Buffer> {
  const [r, g, b] = rgb;
  return sharp({ create: { width: 64, height: 36, channels: 3, background: { r, g, b } } })
    .jpeg()
    .toBuffer();
}

/** A scripted vision model for a watch: queues of answers for notes and for commentary. */
export interface ScriptedVision {
  readonly provider: Provider;
  /** Answers of the note-taker's calls, in order (then `a screen`). */
  readonly notes: string[];
  /** Answers of the commentary calls, in order (then `[SKIP]`). */
  readonly comments: string[];
  /** Every commentary request, in order. */
  readonly commentaryRequests: ProviderRequest[];
}

/** A scripted vision model (scripted provider turns built per request); see `ScriptedVision`. */
export function scriptedVision(model = "vision-small"): ScriptedVision {
  const notes: string[] = [];
  const comments: string[] = [];
  const commentaryRequests: ProviderRequest[] = [];
  const provider = answeringProvider((request) => {
    if (request.system?.includes("You take notes")) return notes.shift() ?? "a screen";
    if (request.system?.includes("running summary")) return "the summary so far";
    commentaryRequests.push(request);
    return comments.shift() ?? "[SKIP]";
  }, model);
  return { provider, notes, comments, commentaryRequests };
}

/** Resolves with the first event of `type` after seq `after` that `match` accepts. */
export async function nextEvent<T extends EventType>(
  store: EventStore,
  continuity: string,
  type: T,
  after = 0,
  match: (event: EventOf<T>) => boolean = () => true,
): Promise<EventOf<T>> {
  const stop = new AbortController();
  for await (const message of store.subscribe({
    continuity,
    types: [type],
    after,
    signal: stop.signal,
  })) {
    if (message.type !== "event") continue;
    const { event } = message;
    if (isEvent(event, type) && match(event)) {
      stop.abort();
      return event;
    }
  }
  throw new Error(`the log ended without ${type}`);
}
