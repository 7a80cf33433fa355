import type { Projection } from "../log/index.js";
import type { NewEventOf, SpoolEvent } from "../spec/index.js";
import type { Provider, ProviderMessage, ProviderRequest, StreamOptions } from "./provider.js";
import type { StreamPart } from "./stream-part.js";

/**
 * Where a thread's provider-side conversation stands: the last response id an OpenAI Responses
 * call returned, which the next call may continue from with `previous_response_id`. A cache of the
 * log, never the truth: dropping it only means sending the whole context again.
 */
export interface ProviderCursor {
  responseId: string;
  /** The provider name that issued it; a cursor is only good with the same provider. */
  provider: string;
  /** The step whose `message.completed` carried it. */
  step: string;
}

interface CursorState {
  steps: Set<string>;
  cursor: ProviderCursor | null;
}

/**
 * A projection of a continuity's events to `thread`'s current provider cursor: the response id of
 * its newest `message.completed` in the `openai-responses` format, unless a later
 * `provider.cursor-rotated` dropped it (or a later call in another format ended the lineage).
 */
export function providerCursorProjection(thread: string): Projection<CursorState> & {
  cursor(state: CursorState): ProviderCursor | null;
} {
  return {
    initial: () => ({ steps: new Set<string>(), cursor: null }),
    reduce(state, event: SpoolEvent) {
      if (event.type === "step.started") {
        const data = event.data as { kind?: string; thread?: string };
        if (data.kind === "model" && data.thread === thread) state.steps.add(event.stream.id);
      } else if (event.type === "message.completed" && state.steps.has(event.stream.id)) {
        const data = event.data as { format: string; response_id: string | null; provider: string };
        state.cursor =
          data.format === "openai-responses" && data.response_id
            ? { responseId: data.response_id, provider: data.provider, step: event.stream.id }
            : null;
      } else if (
        event.type === "provider.cursor-rotated" &&
        event.stream.kind === "thread" &&
        event.stream.id === thread
      ) {
        state.cursor = null;
      }
      return state;
    },
    cursor: (state) => state.cursor,
  };
}

/** How `streamWithCursor` may continue a conversation, and how it rebuilds one. */
export interface CursorCall {
  /** The whole request, rebuilt from the log: what is sent when there is no usable cursor. */
  rebuild: () => ProviderRequest | Promise<ProviderRequest>;
  /** The thread's cursor, if any. */
  cursor: ProviderCursor | null;
  /** The messages the provider has not seen yet (after the cursor's response). */
  newMessages: ProviderMessage[];
  /** The request's settings (model, tools, limits) for a continued call; messages are replaced. */
  settings: Omit<ProviderRequest, "messages" | "previousResponseId">;
  /** Called once when the cursor is dropped; log the `provider.cursor-rotated` event here. */
  onRotate: (rotation: CursorRotation) => void | Promise<void>;
  /**
   * The whole request, when the caller has it at hand: what the call's input tokens are estimated
   * from (the provider counts the conversation it continues as input).
   */
  whole?: ProviderRequest;
}

/** Why and how a cursor was dropped. */
export interface CursorRotation {
  previousResponseId: string;
  reason: "expired" | "provider-changed";
  /** Messages in the rebuilt request. */
  rebuiltMessages: number;
}

/**
 * Streams one model call, continuing from the thread's provider cursor when there is one and the
 * provider can use it. When the provider no longer knows the id (`provider.cursor-expired`, before
 * any output), the cursor is rotated (`onRotate`) and the call is sent again with the whole context
 * rebuilt from the log; the failed attempt's parts are not passed on. A cursor from another
 * provider is rotated before the call.
 */
export async function* streamWithCursor(
  provider: Provider,
  call: CursorCall,
  options: StreamOptions = {},
): AsyncGenerator<StreamPart> {
  const cursor = call.cursor;
  if (cursor && provider.format === "openai-responses") {
    if (cursor.provider === provider.name) {
      // Retries before the first real part are held back: if the call then fails because the
      // cursor expired, they belong to an attempt the caller never sees.
      const held: StreamPart[] = [];
      let started = false;
      let expired = false;
      const continued = continuedRequest(call.settings, call.newMessages, cursor);
      for await (const part of provider.stream(continued, options)) {
        if (!started && part.type === "retry") {
          held.push(part);
          continue;
        }
        if (!started && part.type === "error" && part.error.code === "provider.cursor-expired") {
          expired = true;
          break;
        }
        if (!started) {
          started = true;
          yield* held;
        }
        yield part;
      }
      if (!expired) return;
      yield* rebuilt(provider, call, cursor, "expired", options);
      return;
    }
    yield* rebuilt(provider, call, cursor, "provider-changed", options);
    return;
  }
  yield* provider.stream(await call.rebuild(), options);
}

/**
 * The request a continued call sends: the settings, only the new messages, and the cursor's id as
 * `previousResponseId`. `streamWithCursor` sends exactly this, so a caller can log its digest.
 */
export function continuedRequest(
  settings: CursorCall["settings"],
  newMessages: ProviderMessage[],
  cursor: ProviderCursor,
): ProviderRequest {
  return { ...settings, messages: newMessages, previousResponseId: cursor.responseId };
}

async function* rebuilt(
  provider: Provider,
  call: CursorCall,
  cursor: ProviderCursor,
  reason: CursorRotation["reason"],
  options: StreamOptions,
): AsyncGenerator<StreamPart> {
  const request = await call.rebuild();
  await call.onRotate({
    previousResponseId: cursor.responseId,
    reason,
    rebuiltMessages: request.messages.length,
  });
  const { previousResponseId: _dropped, ...whole } = request;
  yield* provider.stream(whole, options);
}

/** The `provider.cursor-rotated` event for a rotation of `thread`'s cursor. */
export function cursorRotatedEvent(
  continuity: string,
  thread: string,
  rotation: CursorRotation,
  step?: string,
): NewEventOf<"provider.cursor-rotated"> {
  return {
    continuity,
    stream: { kind: "thread", id: thread },
    type: "provider.cursor-rotated",
    data: {
      previous_response_id: rotation.previousResponseId,
      reason: rotation.reason,
      ...(step ? { step } : {}),
      rebuilt_messages: rotation.rebuiltMessages,
    },
  };
}
