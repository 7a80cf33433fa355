import type { TurnPart } from "./turn-output.js";

/**
 * One chunk of the AI SDK's UI message stream protocol (v1: `x-vercel-ai-ui-message-stream: v1`),
 * as `useChat` from `@ai-sdk/react` reads it: each is one SSE `data:` line of JSON, and the
 * stream ends with `data: [DONE]`. Actions are dynamic tools (the client declares none).
 */
export type UiChunk =
  | { type: "start"; messageId: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | {
      type: "tool-input-available";
      toolCallId: string;
      toolName: string;
      input: unknown;
      dynamic: true;
    }
  | { type: "tool-output-available"; toolCallId: string; output: unknown; dynamic: true }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; dynamic: true }
  | { type: "error"; errorText: string }
  | { type: "finish"; finishReason: "stop" | "error" | "other" };

/** The headers of a UI message stream answer. */
export const UI_STREAM_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
  "x-vercel-ai-ui-message-stream": "v1",
} as const;

/** The UI chunks of one turn part (none for parts the protocol has no chunk for). */
export function uiChunks(part: TurnPart): UiChunk[] {
  switch (part.type) {
    case "step-start":
      return [{ type: "start-step" }];
    case "step-end":
      return [{ type: "finish-step" }];
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return [{ type: part.type, id: part.id }];
    case "text-delta":
    case "reasoning-delta":
      return [{ type: part.type, id: part.id, delta: part.delta }];
    case "action":
      return [
        {
          type: "tool-input-available",
          toolCallId: part.id,
          toolName: part.name,
          input: part.input,
          dynamic: true,
        },
      ];
    case "action-result":
      return [
        { type: "tool-output-available", toolCallId: part.id, output: part.output, dynamic: true },
      ];
    case "action-error":
      return [
        { type: "tool-output-error", toolCallId: part.id, errorText: part.message, dynamic: true },
      ];
    case "end": {
      const failed = part.status === "failed" || part.status === "limit";
      return [
        ...(failed
          ? [
              {
                type: "error" as const,
                errorText: part.error?.message ?? `the run ended: ${part.status}`,
              },
            ]
          : []),
        {
          type: "finish",
          finishReason: failed ? "error" : part.status === "completed" ? "stop" : "other",
        },
      ];
    }
  }
}

/** One SSE frame of the stream. */
export function uiFrame(chunk: UiChunk | "[DONE]"): string {
  return `data: ${chunk === "[DONE]" ? chunk : JSON.stringify(chunk)}\n\n`;
}

/**
 * The frames of one turn's UI stream, kept while it runs so a client that reloads mid-stream
 * reads it again from the start and then live (`useChat`'s `resume`). Readers never miss a frame
 * and never see one twice: each reader starts at frame 0 of the buffer and follows it.
 */
export class UiStreamBuffer {
  readonly frames: string[] = [];
  #done = false;
  readonly #wakers = new Set<() => void>();

  /** True once the last frame (`[DONE]`) was added. */
  get done(): boolean {
    return this.#done;
  }

  /** Adds a frame (ignored after `[DONE]`). */
  push(frame: string, last = false): void {
    if (this.#done) return;
    this.frames.push(frame);
    if (last) this.#done = true;
    for (const wake of this.#wakers) wake();
    this.#wakers.clear();
  }

  /** A byte stream of every frame from the first, then the new ones, until `[DONE]`. */
  stream(): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    let next = 0;
    let cancelled = false;
    return new ReadableStream({
      pull: async (controller) => {
        while (next >= this.frames.length && !this.#done && !cancelled) {
          await new Promise<void>((resolve) => this.#wakers.add(resolve));
        }
        if (cancelled) return;
        if (next < this.frames.length) {
          controller.enqueue(encoder.encode(this.frames.slice(next).join("")));
          next = this.frames.length;
        }
        if (this.#done && next >= this.frames.length) controller.close();
      },
      cancel: () => {
        cancelled = true;
      },
    });
  }
}
