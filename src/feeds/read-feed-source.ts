import type { ActionExecutor } from "../actions/index.js";
import type { FeedEnv } from "./env-expansion.js";
import type { EnvironmentPolicy } from "./environment-policy.js";
import type { FeedClock, FeedTimers } from "./feed-clock.js";
import type { FeedDefinition } from "./feed-definition.js";
import { FeedError } from "./feed-error.js";
import { type InternalSources, prepareInternalSource } from "./internal-source.js";

/** Everything a source read needs, injected by the engine. */
export interface SourceDependencies {
  internalSources: InternalSources;
  /** One executor per action type (`tool`, `relic`, `workflow`, `llm`). */
  executors: ReadonlyMap<string, ActionExecutor>;
  clock: FeedClock;
  timers: FeedTimers;
  random: () => number;
  env: FeedEnv;
  environment: EnvironmentPolicy;
  /** How long a read may take before it fails with `feed.timeout`. */
  timeoutMs: number;
}

/**
 * Reads a feed's source once: an internal source directly, any other type through the
 * `ActionExecutor` of that type with the call `{ actionId: "feed:<id>", type, name, parameters:
 * params, attempt: 1, signal, progress: no-op }`.
 *
 * Settles soon after `cancel` aborts (rejecting with its reason) or after `timeoutMs` (rejecting
 * with `FeedError("feed.timeout")`), whether or not the source heeds the signal it was given.
 * Rejects with `feed.no-executor` when no executor of the type was registered, and
 * `feed.unknown-source` when the source does not exist.
 */
export async function readFeedSource(
  definition: FeedDefinition,
  deps: SourceDependencies,
  cancel: AbortSignal,
): Promise<unknown> {
  const controller = new AbortController();
  const onCancel = () => controller.abort(cancel.reason);
  if (cancel.aborted) onCancel();
  else cancel.addEventListener("abort", onCancel, { once: true });
  const timer = deps.timers.setTimeout(() => {
    controller.abort(
      new FeedError(
        "feed.timeout",
        `feed "${definition.id}": its ${definition.source.type} source did not answer within ${deps.timeoutMs} ms`,
        {
          retryable: true,
          hint: "Make the source faster, or raise sourceTimeoutMs in createFeedEngine",
          details: { feed_id: definition.id, timeout_ms: deps.timeoutMs },
        },
      ),
    );
  }, deps.timeoutMs);
  try {
    return await untilAborted(
      () => startRead(definition, deps, controller.signal),
      controller.signal,
    );
  } finally {
    deps.timers.clearTimeout(timer);
    cancel.removeEventListener("abort", onCancel);
  }
}

function startRead(
  definition: FeedDefinition,
  deps: SourceDependencies,
  signal: AbortSignal,
): unknown {
  const { id, source } = definition;
  if (source.type === "internal") {
    const prepared = prepareInternalSource(deps.internalSources, source, {
      feedId: id,
      environment: deps.environment,
    });
    return prepared.source.read(prepared.params, {
      feedId: id,
      now: deps.clock.now(),
      random: deps.random,
      env: deps.env,
      environment: deps.environment,
      signal,
    });
  }
  const executor = deps.executors.get(source.type);
  if (!executor) {
    throw new FeedError(
      "feed.no-executor",
      `feed "${id}": no ${source.type} executor is registered, so ${source.type} "${source.name}" cannot run`,
      {
        hint: `Register an ActionExecutor with type "${source.type}" in createFeedEngine({ executors })`,
        details: { feed_id: id, type: source.type, name: source.name },
      },
    );
  }
  if (executor.canRun && !executor.canRun(source.name)) {
    throw new FeedError(
      "feed.unknown-source",
      `feed "${id}": the ${source.type} executor has no ${source.type} called "${source.name}"`,
      {
        hint: `Name a ${source.type} the executor knows, or register "${source.name}" with it`,
        details: { feed_id: id, type: source.type, name: source.name },
      },
    );
  }
  return executor.execute({
    actionId: `feed:${id}`,
    type: source.type,
    name: source.name,
    parameters: structuredClone(source.params),
    attempt: 1,
    signal,
    progress: () => {},
  });
}

/** Runs `start` and settles with it, or rejects with `signal.reason` as soon as `signal` aborts. */
function untilAborted(start: () => unknown, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const done = () => signal.removeEventListener("abort", onAbort);
    new Promise((inner) => inner(start())).then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}
