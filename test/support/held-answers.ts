import { anthropicTextFrames } from "./anthropic-sse.js";
import type { ReplayResponse } from "./replay-server.js";

/**
 * An Anthropic text answer for the loopback replay server; with `hold`, its first chunk waits for
 * it, and `arrived` is called once the model call is open (the caller's run is live then).
 */
export function heldAnswer(
  text: string,
  hold?: Promise<void>,
  arrived?: () => void,
): ReplayResponse {
  return {
    chunks: anthropicTextFrames([text]),
    ...(hold !== undefined
      ? {
          beforeChunk: async (index: number) => {
            if (index > 0) return;
            arrived?.();
            await hold;
          },
        }
      : {}),
  };
}

/** A promise and the function that resolves it. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
