import { requestDigest } from "../continuity/index.js";
import type {
  AssembledMessage,
  Provider,
  ProviderErrorInfo,
  ProviderFormat,
  ProviderRequest,
  StreamOptions,
  StreamPart,
} from "../providers/index.js";
import { fromMessageData } from "../providers/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";

/** A model step's `step.completed` data. */
type ModelStepCompleted = Extract<EventData<"step.completed">, { kind: "model" }>;

/** One model call as the log recorded it. */
interface RecordedCall {
  step: string;
  digest: string;
  /** The message, or the error, the call ended with; absent when a crash cut it off. */
  message?: AssembledMessage;
  failed?: ProviderErrorInfo;
  /** What had arrived before the failure (`message.partial`, droppable: may be missing). */
  before?: AssembledMessage;
  /** The model and usage `step.completed` recorded (a failed call's only record of them). */
  ended?: { model: string; usage: ModelStepCompleted["usage"] };
  /** What streamed before a crash cut the call off (its logged token deltas). */
  partial: string;
  /**
   * The call was sent (its `step.started` is logged, and the runtime sends only after that
   * append): a crash between the compile and the step's start kept it from the model.
   */
  sent: boolean;
  used: boolean;
}

/**
 * A provider that answers each request with the model output the log recorded for it, found by
 * the request's digest (`context.compiled`): replay calls no model. A request no recorded call
 * matches means the compiled context differs; the stream then ends with an error (and the
 * replay has already reported the `context.compiled` that differs). A call a crash cut off plays
 * its logged deltas and then never ends, as the original did not; one the crash kept from being
 * sent (no `step.started`) answers nothing; a call the user cancelled
 * plays what had arrived and ends only when its signal aborts (replay re-enacts the cancel).
 */
export function createReplayProvider(events: readonly SpoolEvent[]): Provider {
  const calls = new Map<string, RecordedCall>();
  const ordered: RecordedCall[] = [];
  const byDigest = new Map<string, RecordedCall[]>();
  let name = "replay";
  let format: ProviderFormat = "anthropic";
  for (const event of events) {
    if (event.stream.kind !== "step") continue;
    const step = event.stream.id;
    if (event.type === "context.compiled") {
      const call: RecordedCall = {
        step,
        digest: (event.data as EventData<"context.compiled">).digest,
        partial: "",
        sent: false,
        used: false,
      };
      calls.set(step, call);
      ordered.push(call);
      continue;
    }
    const call = calls.get(step);
    if (!call) continue;
    if (event.type === "step.started") {
      call.sent = true;
      name = (event.data as EventData<"step.started"> & { provider?: string }).provider ?? name;
    } else if (event.type === "message.completed") {
      call.message = fromMessageData(event.data as EventData<"message.completed">);
      format = call.message.format;
    } else if (event.type === "step.completed") {
      const data = event.data as EventData<"step.completed">;
      if (data.kind === "model") call.ended = { model: data.model, usage: data.usage };
    } else if (event.type === "message.partial") {
      call.before = fromMessageData(event.data as EventData<"message.partial">);
    } else if (event.type === "message.failed") {
      const error = (event.data as EventData<"message.failed">).error;
      call.failed = {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
        ...(error.status !== undefined ? { status: error.status } : {}),
        ...(error.provider_type !== undefined ? { providerType: error.provider_type } : {}),
        ...(error.retry_after_ms !== undefined ? { retryAfterMs: error.retry_after_ms } : {}),
        ...(error.request_id !== undefined ? { requestId: error.request_id } : {}),
      } as ProviderErrorInfo;
    } else if (event.type === "token.delta") {
      const data = event.data as { text?: string; kind?: string };
      if (typeof data.text === "string" && (data.kind === undefined || data.kind === "text")) {
        call.partial += data.text;
      }
    }
  }
  // A call never sent answers no request: a later call with the same context (a summary made
  // again over the same messages after a restart) is the one that was sent.
  for (const call of ordered) {
    if (!call.sent) continue;
    const list = byDigest.get(call.digest) ?? [];
    list.push(call);
    byDigest.set(call.digest, list);
  }
  return {
    get name() {
      return name;
    },
    get format() {
      return format;
    },
    stream: (request: ProviderRequest, options?: StreamOptions) =>
      play(byDigest, request, options?.signal),
  };
}

async function* play(
  byDigest: Map<string, RecordedCall[]>,
  request: ProviderRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamPart> {
  const call = byDigest.get(requestDigest(request))?.find((candidate) => !candidate.used);
  if (!call) {
    yield {
      type: "error",
      error: {
        code: "provider.bad-request",
        message: "replay: no recorded model call has this context",
        retryable: false,
      },
    };
    return;
  }
  call.used = true;
  if (call.message) {
    yield* messageParts(call.message);
    return;
  }
  if (call.failed) {
    if (call.ended) {
      const usage = call.ended.usage;
      yield {
        type: "start",
        responseId: call.before?.responseId ?? null,
        model: call.ended.model,
      };
      if (call.before) {
        for (const part of messageParts(call.before)) {
          if (part.type === "start" || part.type === "usage" || part.type === "stop") continue;
          yield part;
        }
      }
      yield {
        type: "usage",
        usage: {
          inputTokens: usage.input_tokens,
          outputTokens: usage.output_tokens,
          cacheReadTokens: usage.cache_read_tokens,
          cacheWriteTokens: usage.cache_write_tokens,
          ...(usage.reasoning_tokens !== undefined
            ? { reasoningTokens: usage.reasoning_tokens }
            : {}),
        },
      };
    }
    // A call the user cancelled (Ctrl-C) ends when the replay re-enacts that cancel at its place
    // in the log, not when its recorded output runs out: the runtime is cancelled mid-call, as
    // the original was, rather than handed output that stops in the middle of a tag.
    if (call.failed.code === "provider.cancelled") await aborted(signal);
    yield { type: "error", error: { ...call.failed } };
    return;
  }
  // Cut off by a crash: what was logged, then silence until the replay re-enacts the crash.
  yield { type: "start", responseId: null, model: request.model };
  if (call.partial !== "") yield { type: "text", block: 0, text: call.partial };
  await aborted(signal);
  yield {
    type: "error",
    error: {
      code: "provider.cancelled",
      message: "replay: the call was cut off",
      retryable: false,
    },
  };
}

/** Resolves once `signal` aborts (never without one). */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) =>
    signal?.addEventListener("abort", () => resolve(), { once: true }),
  );
}

/** The stream parts that assemble back into `message`. */
export function* messageParts(message: AssembledMessage): Generator<StreamPart> {
  yield { type: "start", responseId: message.responseId, model: message.model };
  let block = 0;
  for (const content of message.content) {
    switch (content.type) {
      case "text":
        yield { type: "text", block, text: content.text };
        break;
      case "reasoning":
        yield {
          type: "reasoning",
          block,
          text: content.text,
          ...(content.summary ? { summary: true } : {}),
        };
        if (content.signature !== undefined) {
          yield { type: "reasoning-signature", block, signature: content.signature };
        }
        break;
      case "redacted-reasoning":
        yield { type: "redacted-reasoning", block, data: content.data };
        break;
      case "tool-call":
        yield {
          type: "tool-call-start",
          block,
          id: content.id,
          name: content.name,
          ...(content.server ? { server: true } : {}),
        };
        if (content.inputText !== "") {
          yield { type: "tool-call-delta", block, id: content.id, inputText: content.inputText };
        }
        yield {
          type: "tool-call-end",
          block,
          id: content.id,
          inputText: content.inputText,
          ...(content.input !== undefined ? { input: content.input } : {}),
          ...(content.inputError !== undefined ? { inputError: content.inputError } : {}),
        };
        break;
      case "refusal":
        yield { type: "refusal", block, text: content.text };
        break;
      case "provider":
        yield { type: "provider-block", block, kind: content.kind, data: content.data };
        break;
    }
    block += 1;
  }
  yield { type: "usage", usage: { ...message.usage } };
  yield { type: "stop", reason: message.stopReason, providerReason: message.providerStopReason };
}
