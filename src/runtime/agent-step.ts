import {
  type ActionExecutor,
  type ActionLog,
  type CheckedActionExecutor,
  createStoreActionLog,
  OrderedQueue,
  runStep,
  type StepSummary,
  type TaskSet,
  type VariableStore,
} from "../actions/index.js";
import { type AppendBatchOptions, type EventStore, isSeqMoved } from "../log/index.js";
import type { ActionRequest } from "../protocol/index.js";
import type {
  AssembledMessage,
  CursorCall,
  Provider,
  ProviderRequest,
  StreamPart,
  TokenEstimator,
} from "../providers/index.js";
import type { NewEvent } from "../spec/index.js";
import type {
  CheckpointSigner,
  KnowledgeSink,
  StartCarry,
  StreamSink,
  TranscriptSink,
} from "../transcript/index.js";
import { runModelStep, stepStreamId } from "../transcript/index.js";
import type { RunObserver } from "./run-notice.js";

/** What one step of the loop needs. */
export interface AgentStepOptions {
  store: EventStore;
  continuity: string;
  thread: string;
  index: number;
  provider: Provider;
  /** The request, or a call that continues the provider's conversation from a cursor. */
  request: ProviderRequest | CursorCall;
  /** Events committed with the step's `step.started` (its `context.compiled`). */
  preamble?: readonly NewEvent[];
  /** The step's executors, made for it (internal actions and child agents need its log and id). */
  executors: ExecutorFactory;
  variables: VariableStore;
  estimator?: TokenEstimator;
  signer?: CheckpointSigner;
  transcript?: TranscriptSink;
  /** The thread's knowledge.md (deltas live, re-rendered from `threadStartSeq` after the step). */
  knowledge?: KnowledgeSink;
  /** The seq of the thread's `thread.started`, for the knowledge re-render. */
  threadStartSeq?: number;
  observer?: RunObserver;
  signal?: AbortSignal;
  /** Jitter for action retry backoff (seeded in replay). */
  random?: () => number;
  /** Native tool name → the tool's own name (`fs_read` → `fs.read`). */
  nativeNames?: ReadonlyMap<string, string>;
  /**
   * Where the step's `fire_and_forget` actions live on after the step (the continuity's tasks).
   * Without it nobody waits for them or stops them once the step has ended.
   */
  tasks?: TaskSet;
  /**
   * The events that conclude the step (the loop's decision), given its outcome once the model
   * and every `sync`/`async` action have finished: committed in one batch with `step.completed`.
   * `undefined` leaves them to the caller (`concluded` is then false).
   */
  conclude?: (outcome: AgentStepResult) => readonly NewEvent[] | undefined;
  /** How the step's start is appended (see `runModelStep`'s `start`). */
  start?: AppendBatchOptions;
  /** Return before the step's end is written (see `runModelStep`'s `endLater`). */
  endLater?: boolean;
  /** A model call kept across a refused start (see `runModelStep`'s `carry`). */
  carry?: StartCarry;
}

/** What an executor factory is given: the step's id, action log and variables. */
export interface StepScope {
  step: string;
  log: ActionLog;
  variables: VariableStore;
}

/** Makes the executors of one step. */
export type ExecutorFactory = (
  scope: StepScope,
) => readonly (ActionExecutor | CheckedActionExecutor)[];

/** How a step ended: the model's message and the outcome of its actions. */
export interface AgentStepResult {
  step: string;
  message: AssembledMessage;
  summary: StepSummary;
  /** The response text the user saw (after `$name` substitution), all response blocks joined. */
  response: string;
  /** True when the output had a `<response>` block. */
  responded: boolean;
  /** Plain text outside any protocol tag (a model that ignores the protocol writes only this). */
  plainText: string;
  /** Native tool calls the model made. */
  nativeCalls: number;
  /** True when `conclude`'s events were committed with `step.completed`. */
  concluded: boolean;
  /** With `endLater`: settles once the step's end is written. */
  ended?: Promise<unknown>;
}

/**
 * Runs one step: the model call (`runModelStep`: log, transcript, checkpoint) with its text
 * streamed into the step runner as it arrives, so each action starts at its `</action>` while
 * the model is still talking; native tool calls enter the same scheduler as `async` tool actions
 * when their input is complete. Resolves once the model has finished and every `sync` and
 * `async` action has ended; `fire_and_forget` actions go on as tasks of `options.tasks`.
 */
export async function runAgentStep(options: AgentStepOptions): Promise<AgentStepResult> {
  const { store, continuity, thread, index, observer } = options;
  const step = stepStreamId(thread, index);
  const text = new OrderedQueue<string>();
  const native: ActionRequest[] = [];
  const nativeNames = new Map<string, string>();
  let submitNative: ((request: ActionRequest) => void) | undefined;
  const bridge: StreamSink = {
    name: "runtime",
    write(part: StreamPart) {
      if (part.type === "text") text.push(part.text);
      else if (part.type === "tool-call-start" && !part.server) {
        nativeNames.set(part.id, options.nativeNames?.get(part.name) ?? part.name);
      } else if (part.type === "tool-call-end") {
        const name = nativeNames.get(part.id);
        if (name === undefined) return;
        const request = nativeRequest(part, name);
        native.push(request);
        // An input that did not parse (cut off by the output limit) is never run with made-up
        // parameters: the call goes back to the model as failed.
        if (part.inputError === undefined) submitNative?.(request);
      } else if (part.type === "retry") {
        notify(observer, {
          type: "retry",
          step,
          attempt: part.attempt,
          delayMs: part.delayMs,
          message: part.error.message,
        });
      }
    },
    async close() {
      text.close();
    },
  };

  const log = createStoreActionLog({ store, continuity, step });
  const run = runStep({
    log,
    executors: options.executors({ step, log, variables: options.variables }),
    variables: options.variables,
    ...(options.random ? { random: options.random } : {}),
    output: { [Symbol.asyncIterator]: () => ({ next: () => text.next() }) },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  submitNative = (request) => void run.scheduler.submit(request);
  options.tasks?.adopt(step, run.scheduler);

  let response = "";
  let responded = false;
  let plainText = "";
  let summary: StepSummary | undefined;
  const consume = (async () => {
    for await (const event of run) {
      notify(observer, { type: "output", step, event });
      if (event.type === "block-start" && event.kind === "response") responded = true;
      if (event.type === "block-delta") {
        if (event.kind === "response") response += event.text;
        else if (event.kind === "text") plainText += event.text;
      }
      if (event.type === "step-end" || event.type === "step-failed") summary = event.summary;
    }
  })();

  const outcomeOf = (message: AssembledMessage): AgentStepResult => ({
    step,
    message,
    summary: summary ?? { actions: [], errors: [], cancelled: true, final: false },
    response,
    responded,
    plainText,
    nativeCalls: native.length,
    concluded: false,
  });
  let concluded = false;
  // The step's actions end before `step.completed`, so the loop's decision goes in its commit.
  const beforeCompleted = async (message: AssembledMessage) => {
    text.close();
    await consume;
    const events = options.conclude?.(outcomeOf(message));
    concluded = events !== undefined;
    return events ?? [];
  };
  let model: Awaited<ReturnType<typeof runModelStep>>;
  try {
    model = await runModelStep({
      store,
      continuity,
      thread,
      index,
      provider: options.provider,
      request: options.request,
      ...(options.preamble ? { preamble: options.preamble } : {}),
      sinks: [bridge],
      beforeCompleted,
      ...(options.estimator ? { estimator: options.estimator } : {}),
      ...(options.signer ? { signer: options.signer } : {}),
      ...(options.transcript ? { transcript: options.transcript } : {}),
      ...(options.knowledge ? { knowledge: options.knowledge } : {}),
      ...(options.threadStartSeq !== undefined ? { threadStartSeq: options.threadStartSeq } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.start ? { start: options.start } : {}),
      ...(options.endLater ? { endLater: true } : {}),
      ...(options.carry ? { carry: options.carry } : {}),
    });
  } catch (error) {
    // The step never started (its start was refused): its scheduler ends with nothing run.
    if (isSeqMoved(error)) {
      text.close();
      await consume;
    }
    throw error;
  }
  text.close();
  await consume;
  return {
    ...outcomeOf(model.message),
    concluded,
    ...(model.ended !== undefined ? { ended: model.ended } : {}),
  };
}

const NO_POSITION = { offset: 0, line: 1, column: 1 };

function nativeRequest(
  part: Extract<StreamPart, { type: "tool-call-end" }>,
  name: string,
): ActionRequest {
  const input = part.input;
  return {
    id: part.id,
    type: "tool",
    mode: "async",
    name,
    parameters:
      typeof input === "object" && input !== null && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : {},
    dependsOn: [],
    retry: 0,
    onError: "fail",
    inThought: false,
    span: { start: NO_POSITION, end: NO_POSITION },
  };
}

/** Calls an observer, ignoring whatever it throws (its contract says it must not). */
export function notify(observer: RunObserver | undefined, notice: Parameters<RunObserver>[0]) {
  if (!observer) return;
  try {
    observer(notice);
  } catch {
    // An observer's fault must not stop the run.
  }
}
