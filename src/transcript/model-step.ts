import {
  type AppendBatchOptions,
  type EventStore,
  effectsMayLead,
  isSeqMoved,
} from "../log/index.js";
import type {
  AssembledMessage,
  Provider,
  ProviderRequest,
  StreamPart,
  TokenEstimator,
} from "../providers/index.js";
import { type CursorCall, streamWithCursor, toUsageData } from "../providers/index.js";
import type { NewEvent } from "../spec/index.js";
import { type CheckpointEvent, writeCheckpoint } from "./checkpoint-writer.js";
import { EarlyCall, type StartCarry } from "./early-call.js";
import type { KnowledgeSink } from "./knowledge-sink.js";
import { createLogSink } from "./log-sink.js";
import { createReturnSink } from "./return-sink.js";
import type { CheckpointSigner } from "./signing.js";
import { type SinkReport, type StreamSink, sinkReportEvent } from "./sink.js";
import { createSinkFanout } from "./sink-fanout.js";
import { transcriptDigestOption } from "./thread-boundaries.js";
import { stepStreamId } from "./thread-streams.js";
import type { TranscriptSink } from "./transcript-sink.js";

/** What one model call of a thread needs. */
export interface ModelStepOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  /** The step's index in its thread (0, 1, 2…); the step stream is `${thread}:${index}`. */
  index: number;
  provider: Provider;
  /** The request, or a cursor call that continues a Responses conversation when it can. */
  request: ProviderRequest | CursorCall;
  /** The thread's live transcript (it follows the log and outlives the step). */
  transcript?: TranscriptSink;
  /** The thread's knowledge file: deltas appended live, re-rendered at the step's checkpoint. */
  knowledge?: KnowledgeSink;
  /** Where the thread's events begin, so the knowledge re-render reads only the thread (default 0). */
  threadStartSeq?: number;
  /** More sinks for this step (a UI); they are closed when the step ends. */
  sinks?: StreamSink[];
  /**
   * Estimates the request's input tokens before the call (logged as `estimated_input_tokens` on
   * `step.started`) and learns from the usage the provider reports. A cursor call is estimated
   * from its `whole` request, and not at all without one.
   */
  estimator?: TokenEstimator;
  /** Signs a checkpoint at the step boundary when given. */
  signer?: CheckpointSigner;
  signal?: AbortSignal;
  /** Milliseconds for `duration_ms` (default `performance.now`). */
  now?: () => number;
  /**
   * Events decided before the call (the step's `context.compiled`), committed in one batch with
   * `step.started`: the call begins after one durable commit instead of two.
   */
  preamble?: readonly NewEvent[];
  /**
   * Awaited once the stream has ended, before `step.completed` is appended (a runtime lets the
   * step's actions finish here): the events it gives (the loop's decision) are committed in one
   * batch with `step.completed`, after it. `duration_ms` is the model call's, measured before.
   */
  beforeCompleted?: (message: AssembledMessage) => Promise<readonly NewEvent[]>;
  /** How the preamble and `step.started` are appended (after and predicted from the last step's end). */
  start?: AppendBatchOptions;
  /**
   * Return once the step's end is queued, without waiting for it to be written (`ended` then
   * settles when it is). Without a signer or knowledge file only: those read the log after.
   */
  endLater?: boolean;
  /**
   * Where a call made before a refused start is left for the step compiled again, and taken
   * from when that step sends the same request (see `EarlyCall`).
   */
  carry?: StartCarry;
}

/** How a model step ended. */
export interface ModelStepResult {
  step: string;
  /** The assembled message (with `error` set when the call failed). */
  message: AssembledMessage;
  /** Sinks that failed or lagged during the step (also logged as `sink.*` events). */
  reports: SinkReport[];
  checkpoint?: CheckpointEvent;
  /** With `endLater`: the append of the step's end, settled once it is written. */
  ended?: Promise<unknown>;
}

/**
 * Runs one model call of a thread end to end: `step.started`, the provider's stream fanned out to
 * the log sink, the return sink, the knowledge file and any extra sinks (none can block another),
 * sink reports as events, `step.completed` with usage and stop reason, then, with a signer, a
 * signed checkpoint at the step boundary whose transcript digest covers the thread's
 * transcript.jsonl up to it, and the knowledge file re-rendered from the log.
 *
 * Never throws for a provider failure: the message carries the error and the log holds
 * `message.partial`/`message.failed`; the caller decides whether to retry the step. It throws only
 * when the store itself fails.
 */
export async function runModelStep(options: ModelStepOptions): Promise<ModelStepResult> {
  const { store, continuity, thread, index, provider } = options;
  const now = options.now ?? (() => performance.now());
  const step = stepStreamId(thread, index);
  const stream = { kind: "step" as const, id: step };
  const started = now();
  const model =
    "cursor" in options.request ? options.request.settings.model : options.request.model;
  const identity = { kind: "model" as const, thread, index, provider: provider.name, model };
  const estimated = "cursor" in options.request ? options.request.whole : options.request;
  const estimate =
    options.estimator && estimated ? options.estimator.estimate(model, estimated) : undefined;
  const starting = store.appendBatch(
    [
      ...(options.preamble ?? []),
      {
        continuity,
        stream,
        type: "step.started",
        data: estimate === undefined ? identity : { ...identity, estimated_input_tokens: estimate },
      },
    ],
    options.start,
  );
  const call = callEarly(options);
  try {
    await starting;
  } catch (error) {
    if (call && isSeqMoved(error) && options.carry) options.carry.keep(call);
    else call?.abort();
    throw error;
  }

  const reports: SinkReport[] = [];
  const returned = createReturnSink({ format: provider.format });
  const logSink = createLogSink({
    store,
    continuity,
    step,
    provider: provider.name,
    format: provider.format,
  });
  const sinks: StreamSink[] = [
    logSink,
    returned.sink,
    ...(options.knowledge ? [keepOpen(options.knowledge)] : []),
    ...(options.sinks ?? []),
  ];
  const fanout = createSinkFanout({ sinks, onReport: (report) => reports.push(report) });
  const streamOptions = options.signal ? { signal: options.signal } : {};
  const parts: AsyncIterable<StreamPart> = call
    ? call.parts()
    : "cursor" in options.request
      ? streamWithCursor(provider, options.request, streamOptions)
      : provider.stream(options.request, streamOptions);
  try {
    for await (const part of parts) fanout.push(part);
  } finally {
    call?.ended();
  }
  await fanout.close();
  const message = await returned.message();

  // The log sink appended `message.completed` at the stream's end (while other sinks and running
  // actions went on) without waiting for it: the sinks' reports, `step.completed` and what
  // `beforeCompleted` gives are one batch that is written only with or after it, so the whole
  // step usually ends in one commit, and never stands in the log without its message. Replay
  // may hold that append's answer to re-enact a cancel that landed before the decision: then
  // the decision waits for it.
  const durationMs = Math.max(0, now() - started);
  const completed = logSink.completed();
  if (store.holdsAnswers && completed !== undefined) await completed.catch(() => undefined);
  const after = (await options.beforeCompleted?.(message)) ?? [];
  const later = options.endLater === true && !options.signer && !options.knowledge;
  const concluded = store.appendBatch(
    [
      ...reports.map((report) => sinkReportEvent(report, continuity, stream)),
      {
        continuity,
        stream,
        type: "step.completed",
        data: {
          ...identity,
          model: message.model || model,
          usage: toUsageData(message.usage),
          stop_reason: message.stopReason,
          duration_ms: durationMs,
        },
      },
      ...after,
    ],
    completed === undefined ? undefined : { after: [completed] },
  );
  const ended = Promise.all([concluded, completed]);
  if (later) ended.catch(() => undefined);
  else await ended;

  if (estimate !== undefined && message.usage.inputTokens > 0) {
    options.estimator!.observe(model, estimate, message.usage.inputTokens);
  }
  const result: ModelStepResult = { step, message, reports, ...(later ? { ended } : {}) };
  if (options.signer) {
    result.checkpoint = await writeCheckpoint({
      store,
      signer: options.signer,
      continuity,
      reason: "step",
      thread,
      ...transcriptDigestOption(options.transcript),
    });
  }
  if (options.knowledge) {
    // A knowledge file that cannot be written is a view lost, not the step's failure (its
    // failure while streaming is on the log already, as `sink.failed`).
    await options.knowledge
      .checkpoint({ store, continuity, after: options.threadStartSeq ?? 0 })
      .catch(() => undefined);
  }
  return result;
}

/**
 * The step's model call, made while its start is being written, where the store's
 * durability is `fast`: the request goes out during the commit, and its parts are read only once
 * the start is written. `undefined` where the call waits for the start: a `strict` store (every
 * request is on the log before it is sent), a store that may hold answers (replay), and a call
 * that continues from a provider cursor (it may log a rotation before its first part).
 */
function callEarly(options: ModelStepOptions): EarlyCall | undefined {
  const { store, request } = options;
  if (!effectsMayLead(store) || "cursor" in request) return undefined;
  try {
    return options.carry?.take(request) ?? new EarlyCall(options.provider, request, options.signal);
  } catch {
    // A provider that throws as it is called fails the step as before, once its start is written.
    return undefined;
  }
}

/** A thread-long sink seen by one step's fan-out: written to, not closed, when the step ends. */
function keepOpen(sink: KnowledgeSink): StreamSink {
  return { name: sink.name, write: (part) => sink.write(part), close: () => sink.flushed() };
}
