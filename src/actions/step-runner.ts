import { createProtocolParser, type ProtocolEvent } from "../protocol/index.js";
import { describeError } from "../spec/index.js";
import { OrderedQueue } from "./ordered-queue.js";
import {
  createResponseSubstituter,
  type ResponseSubstituter,
  type SubstitutionPiece,
} from "./response-substitution.js";
import { clampMessage } from "./scheduler-messages.js";
import type { StepError } from "./step-outcome.js";
import type { StepOutputEvent, StepSummary } from "./step-output-event.js";
import {
  createStepScheduler,
  type StepScheduler,
  type StepSchedulerOptions,
} from "./step-scheduler.js";

/** Options of `runStep`: the scheduler's, plus the model's output. */
export interface RunStepOptions extends Omit<StepSchedulerOptions, "observer"> {
  /** The model's output as it streams (text chunks of any size). */
  output: AsyncIterable<string>;
  /** Cancels the step: its actions are cancelled and the stream ends with a cancelled summary. */
  signal?: AbortSignal;
  /** Action ids already taken in this step (native tool calls): reusing one is a parse error. */
  knownIds?: Iterable<string>;
}

/** A running step: the output events, and its scheduler (to cancel detached tasks later). */
export interface StepRun extends AsyncIterable<StepOutputEvent> {
  readonly scheduler: StepScheduler;
}

/**
 * Runs one step: parses the model's output as it streams, submits each action at its
 * `</action>` (inside thoughts too), substitutes `$references` in responses, and yields output
 * events in output order, ending with `step-end` (or `step-failed`).
 *
 * Contract:
 * - A `sync` action holds the processing of everything after it, already parsed events of the
 *   same chunk included, until it has ended; `async` actions run while output goes on;
 *   `fire_and_forget` actions are neither waited for nor reported in the summary.
 * - Every parser `error` is recorded as `protocol.error` and yielded as a `step-error`.
 * - At the end of the output: `scheduler.end()`, then the step waits for its `sync` and `async`
 *   actions, then `step-end` carries the summary.
 * - Work starts when the first event is pulled. Stopping early (`return()`, `break`) cancels the
 *   step's actions. The iterator never throws: a failing output stream or an internal fault
 *   becomes a terminal `step-failed` event.
 */
export function runStep(options: RunStepOptions): StepRun {
  const { output, signal, knownIds, ...schedulerOptions } = options;
  const queue = new OrderedQueue<StepOutputEvent>();
  const errors: StepError[] = [];
  const onError = (error: StepError) => {
    errors.push(error);
    queue.push({ type: "step-error", error });
  };
  const scheduler = createStepScheduler({
    ...schedulerOptions,
    observer: {
      onEvent: (entry) => queue.push({ type: "action-event", entry }),
      onError,
    },
  });
  let started = false;
  /** Ends the pump's wait for the next chunk at once (set while it waits). */
  let interruptRead: (() => void) | undefined;
  let stopReason: string | undefined;
  /** Stops reading output and cancels the step's actions (which releases a sync hold). */
  const halt = (reason: string): Promise<void> => {
    if (stopReason === undefined) {
      stopReason = reason;
      interruptRead?.();
    }
    return scheduler.cancel(stopReason);
  };

  const pump = async () => {
    const parser = createProtocolParser(knownIds ? { knownIds } : {});
    const writes: Promise<void>[] = [];
    let final = false;
    let response: { block: number; substituter: ResponseSubstituter } | undefined;

    const pushPieces = (block: number, pieces: SubstitutionPiece[]) => {
      for (const piece of pieces) {
        const delta = (text: string): StepOutputEvent => ({
          type: "block-delta",
          kind: "response",
          block,
          text,
        });
        queue.push(typeof piece === "string" ? delta(piece) : piece.then(delta));
      }
    };

    const handle = async (events: ProtocolEvent[]) => {
      for (const event of events) {
        if (stopReason !== undefined) return;
        switch (event.type) {
          case "action": {
            queue.push(event);
            await scheduler.submit(event.action);
            break;
          }
          case "error": {
            onError({
              code: event.code,
              message: event.message,
              at: event.at,
              ...(event.actionId !== undefined ? { actionId: event.actionId } : {}),
            });
            writes.push(recordProtocolError(event));
            break;
          }
          case "block-start": {
            if (event.kind === "response") {
              final ||= event.final;
              response = {
                block: event.block,
                substituter: createResponseSubstituter({
                  variables: scheduler.variables,
                  pending: (name) => scheduler.pendingOutput(name),
                }),
              };
            }
            queue.push(event);
            break;
          }
          case "block-delta": {
            if (event.kind === "response" && response?.block === event.block) {
              pushPieces(event.block, response.substituter.push(event.text));
            } else {
              queue.push(event);
            }
            break;
          }
          case "block-end": {
            if (event.kind === "response" && response?.block === event.block) {
              pushPieces(event.block, response.substituter.end());
              response = undefined;
            }
            queue.push(event);
            break;
          }
        }
      }
    };

    const recordProtocolError = (event: Extract<ProtocolEvent, { type: "error" }>) =>
      schedulerOptions.log
        .record("protocol.error", {
          code: event.code,
          message: clampMessage(event.message),
          offset: event.at.offset,
          line: event.at.line,
          column: event.at.column,
          ...(event.expected !== undefined ? { expected: event.expected.slice(0, 500) } : {}),
          ...(event.actionId !== undefined ? { action_id: event.actionId.slice(0, 200) } : {}),
        })
        .catch((error: unknown) =>
          onError({
            code: "log.write-failed",
            message: `protocol.error could not be logged: ${describeError(error)}`,
          }),
        );

    const summary = async (): Promise<StepSummary> => {
      await Promise.all(writes);
      const outcome = await scheduler.settled();
      return { ...outcome, final, errors: [...errors] };
    };

    let chunks: AsyncIterator<string> | undefined;
    /** Set when the output stream itself failed (as opposed to a fault of ours). */
    let outputFailed = false;
    try {
      chunks = output[Symbol.asyncIterator]();
      while (stopReason === undefined) {
        const next = chunks.next();
        // Not Promise.race with a long-lived promise: that would pile up one reaction per chunk.
        const result = await new Promise<IteratorResult<string> | undefined>((resolve, reject) => {
          interruptRead = () => resolve(undefined);
          next.then(resolve, (error: unknown) => {
            outputFailed = true;
            reject(error);
          });
        });
        interruptRead = undefined;
        if (result === undefined || result.done) break;
        await handle(parser.push(result.value));
      }
      if (stopReason === undefined) {
        await handle(parser.end());
        scheduler.end();
      } else {
        void Promise.resolve(chunks.return?.()).catch(() => {});
        await scheduler.cancel(stopReason);
      }
      queue.push({ type: "step-end", summary: await summary() });
    } catch (error) {
      if (!outputFailed) void Promise.resolve(chunks?.return?.()).catch(() => {});
      const failure = {
        code: outputFailed ? "step.output-failed" : "step.internal",
        message: clampMessage(describeError(error)),
      };
      await scheduler.cancel(`the step failed: ${failure.message}`);
      queue.push({ type: "step-failed", error: failure, summary: await summary() });
    }
    queue.close();
  };

  const start = () => {
    if (started) return;
    started = true;
    const onAbort = () => void halt(abortReason(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    void pump()
      .catch((error: unknown) => {
        queue.push({
          type: "step-failed",
          error: { code: "step.internal", message: clampMessage(describeError(error)) },
          summary: { actions: [], errors: [...errors], cancelled: true, final: false },
        });
        queue.close();
      })
      .finally(() => signal?.removeEventListener("abort", onAbort));
  };

  return {
    scheduler,
    [Symbol.asyncIterator]() {
      return {
        next: () => {
          start();
          return queue.next();
        },
        return: async () => {
          queue.close();
          if (started) await halt("the step's output stopped being read");
          return { value: undefined, done: true };
        },
      };
    },
  };
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return clampMessage(reason.message);
  return typeof reason === "string" && reason !== ""
    ? clampMessage(reason)
    : "the step was cancelled";
}
