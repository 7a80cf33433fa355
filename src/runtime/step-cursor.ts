import { type ContextBundle, mergeUserMessages, requestDigest } from "../continuity/index.js";
import {
  type CursorCall,
  type CursorRotation,
  continuedRequest,
  type Provider,
  type ProviderRequest,
} from "../providers/index.js";
import type { EventData } from "../spec/index.js";
import type { ThreadCursor } from "./thread-history.js";

/** What `context.compiled` records of a call that continues from a cursor. */
export type CompiledCursor = NonNullable<EventData<"context.compiled">["cursor"]>;

/** The request of one step: what `runModelStep` is given, and what `context.compiled` records. */
export interface StepRequest {
  request: ProviderRequest | CursorCall;
  /** Set when the call continues the provider's conversation from the cursor. */
  cursor?: CompiledCursor;
}

/** What `stepRequest` decides from. */
export interface StepRequestInput {
  bundle: ContextBundle;
  /** The thread's messages as compiled (`ThreadHistory.view().messages`). */
  messages: readonly {
    message: ProviderRequest["messages"][number];
    seq: number;
    /** When a later event changed the message (a newer snapshot shrank it, a cut). */
    revised?: number;
  }[];
  cursor: ThreadCursor | null;
  provider: Pick<Provider, "name" | "format">;
  /** Logs the `provider.cursor-rotated` of a dropped cursor. */
  onRotate: (rotation: CursorRotation) => void | Promise<void>;
}

/**
 * Decides whether a step continues the provider's conversation (OpenAI Responses
 * `previous_response_id`) or sends its whole compiled context. Pure: the same log gives the same
 * answer, so replay sends the same requests.
 *
 * It continues when the thread has a cursor from this provider, the provider speaks Responses,
 * the compile left nothing out and holds no context feeds (both would make the provider's
 * conversation differ from the compiled one), no message the provider already saw has changed
 * since (a newer browser snapshot shrank an older one to its line, a cut), the cursor's own
 * message is in the context, and messages came after it: only those are sent. A cursor from another provider is handed to
 * `streamWithCursor`, which rotates it and sends the whole context. In every other case the whole
 * context is sent as compiled.
 */
export function stepRequest(input: StepRequestInput): StepRequest {
  const { bundle, cursor, provider } = input;
  const whole = bundle.request;
  if (!cursor || provider.format !== "openai-responses") return { request: whole };
  const { messages: _all, ...settings } = whole;
  const call = (newMessages: ProviderRequest["messages"]): CursorCall => ({
    rebuild: () => whole,
    cursor,
    newMessages,
    settings,
    onRotate: input.onRotate,
    whole,
  });
  if (cursor.provider !== provider.name) return { request: call([]) };
  if (bundle.omitted > 0 || bundle.feeds !== undefined) return { request: whole };
  if (!input.messages.some((entry) => entry.seq === cursor.seq)) return { request: whole };
  // The provider's conversation holds these messages as they were when it saw them.
  const changed = input.messages.some(
    (entry) => entry.seq <= cursor.seq && entry.revised !== undefined && entry.revised > cursor.seq,
  );
  if (changed) return { request: whole };
  const newMessages = mergeUserMessages(
    input.messages.filter((entry) => entry.seq > cursor.seq).map((entry) => entry.message),
  );
  if (newMessages.length === 0) return { request: whole };
  return {
    request: call(newMessages),
    cursor: {
      previous_response_id: cursor.responseId,
      messages: newMessages.length,
      digest: requestDigest(continuedRequest(settings, newMessages, cursor)),
    },
  };
}
