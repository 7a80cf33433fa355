import type { BackoffPolicy } from "../actions/index.js";
import { classifyProviderError } from "./classify-error.js";
import { MODEL_RETRY, modelRetryDelay } from "./model-retry.js";
import type { Provider, ProviderRequest, StreamOptions } from "./provider.js";
import { ProviderError, type ProviderErrorInfo } from "./provider-error.js";
import type { ProviderFormat, StreamPart } from "./stream-part.js";

/** The reason a stream's request is aborted with once the stream has ended (its cleanup). */
const STREAM_ENDED = "the stream ended";

/**
 * What an adapter supplies: how to send a request with its SDK, and how to turn the SDK's
 * events into stream parts. Everything else (retries, idle timeout, cancellation, errors) is
 * shared, so every provider behaves the same way when things go wrong.
 */
export interface SdkAdapter<E> {
  readonly name: string;
  readonly format: ProviderFormat;
  /**
   * Sends the request and resolves once the response began, with the SDK's event stream.
   * Rejects with the SDK's error (a status error, a connection error) when it could not start.
   */
  open(request: ProviderRequest, signal: AbortSignal): Promise<AsyncIterable<E>>;
  /**
   * Maps the SDK's events to parts: `start` first, then content, then `stop`. Throws what the SDK
   * throws mid-stream; the runner turns it into the terminal `error` part. Must not emit `error`,
   * `retry` or `raw` parts itself.
   */
  decode(events: AsyncIterable<E>): AsyncIterable<StreamPart>;
  /** Provider-specific error reading, tried before the shared classification. */
  classify?(error: unknown): ProviderErrorInfo | undefined;
  /** The base URL the SDK sends to: a connection failure names it (`connectionMessage`). */
  readonly baseURL?: string;
  /** A URL that answers a plain GET when the server is up, offered as a `curl` to try. */
  readonly checkURL?: string;
}

/**
 * How a provider retries and when it gives up on a silent stream. The retry settings default to
 * `MODEL_RETRY`, the one model retry policy (override them only in tests and tools).
 */
export interface TransportOptions {
  /** Attempts before the first byte, the first included (default `MODEL_RETRY.maxAttempts`, 4). */
  maxAttempts?: number;
  /** Backoff between them (default `MODEL_RETRY.backoff`, `PROVIDER_BACKOFF`). */
  backoff?: BackoffPolicy;
  /**
   * Silence (no SDK event, pings included) for between this long and twice this long ends the
   * stream with `provider.idle-timeout` (default 120 s; 0 turns it off).
   */
  idleTimeoutMs?: number;
  /** Keys to scrub from error messages. */
  secrets?: readonly string[];
  /** In [0, 1); jitter source (default `Math.random`). */
  random?: () => number;
  /** Waits between attempts (default a timer that the call's signal cancels). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Builds a `Provider` from an SDK adapter. The stream it returns keeps the `Provider` contract:
 * attempts that fail before the first part are retried (retryable errors only, honouring the
 * provider's `retry-after`, with jittered backoff: `modelRetryDelay`) and reported as `retry`
 * parts; anything after that ends the stream with one `error` part. When the attempts are spent
 * on a retryable failure, that `error` part says so and has `retryable: false`: the model retry
 * policy is applied here, and no layer above may send the request again (which would multiply
 * it). Aborting the signal closes the HTTP request.
 */
export function createSdkProvider<E>(
  adapter: SdkAdapter<E>,
  options: TransportOptions = {},
): Provider {
  return {
    name: adapter.name,
    format: adapter.format,
    stream: (request, streamOptions) => runStream(adapter, options, request, streamOptions ?? {}),
  };
}

async function* runStream<E>(
  adapter: SdkAdapter<E>,
  options: TransportOptions,
  request: ProviderRequest,
  streamOptions: StreamOptions,
): AsyncGenerator<StreamPart> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? MODEL_RETRY.maxAttempts);
  const policy = { maxAttempts, backoff: options.backoff ?? MODEL_RETRY.backoff };
  const idleMs = options.idleTimeoutMs ?? 120_000;
  const context = {
    provider: adapter.name,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(adapter.baseURL ? { baseURL: adapter.baseURL } : {}),
    ...(adapter.checkURL ? { checkURL: adapter.checkURL } : {}),
  };
  const classify = (error: unknown, signal: AbortSignal): ProviderErrorInfo =>
    adapter.classify?.(error) ?? classifyProviderError(error, { ...context, signal });

  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    const outer = streamOptions.signal;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) controller.abort(outer.reason);
    else outer?.addEventListener("abort", onAbort, { once: true });
    const idle = new IdleWatch(idleMs, controller);
    let produced = false;
    let failure: ProviderErrorInfo | undefined;
    try {
      idle.arm();
      const events = await adapter.open(request, controller.signal);
      const watched = watchEvents(events, idle, streamOptions.raw === true);
      for await (const part of adapter.decode(watched.events)) {
        if (streamOptions.raw) for (const raw of watched.takeRaw()) yield raw;
        produced = true;
        yield part;
        if (part.type === "stop") return;
      }
      for (const raw of watched.takeRaw()) yield raw;
      // Some SDKs end an aborted stream quietly instead of throwing: tell why it ended.
      if (controller.signal.aborted) throw controller.signal.reason ?? new Error("aborted");
      failure = {
        code: "provider.connection",
        message: `${adapter.name}: the stream ended before the model finished (no stop event); the connection was probably cut`,
        retryable: true,
      };
    } catch (error) {
      failure = idle.fired
        ? {
            code: "provider.idle-timeout",
            message: `${adapter.name}: no data for ${idleMs} ms; the stream was closed. Raise idleTimeoutMs if the model is slow to start`,
            retryable: true,
          }
        : classify(error, controller.signal);
    } finally {
      idle.disarm();
      outer?.removeEventListener("abort", onAbort);
      // A reason given: a bare `abort()` builds a DOMException (and its stack) on every stream.
      if (!controller.signal.aborted) controller.abort(STREAM_ENDED);
    }
    if (produced || !failure.retryable || outer?.aborted) {
      yield { type: "error", error: failure };
      return;
    }
    if (attempt >= maxAttempts) {
      yield { type: "error", error: spent(failure, attempt) };
      return;
    }
    const delayMs = modelRetryDelay(
      attempt,
      failure.retryAfterMs,
      options.random ?? Math.random,
      policy,
    );
    yield { type: "retry", attempt, delayMs, error: failure };
    try {
      await (options.sleep ?? abortableSleep)(delayMs, outer ?? new AbortController().signal);
    } catch {
      yield {
        type: "error",
        error: {
          code: "provider.cancelled",
          message: `${adapter.name}: the call was cancelled`,
          retryable: false,
        },
      };
      return;
    }
  }
}

/** A retryable failure after the policy's last attempt: final, and saying why. */
function spent(failure: ProviderErrorInfo, attempts: number): ProviderErrorInfo {
  const tried = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  return {
    ...failure,
    message: `${failure.message} (gave up after ${tried}, the model retry policy's limit)`,
    retryable: false,
  };
}

/**
 * Ends a silent stream: a timer checks every `ms` whether an event arrived since its last look,
 * and aborts the request when none did (so a stream is cut after `ms` to `2 × ms` of silence).
 * Counting an event is one increment; no timer is touched per event.
 */
class IdleWatch {
  fired = false;
  #events = 0;
  #seen = -1;
  #timer: NodeJS.Timeout | undefined;
  constructor(
    readonly ms: number,
    readonly controller: AbortController,
  ) {}
  arm(): void {
    if (this.ms <= 0 || !Number.isFinite(this.ms)) return;
    this.#timer = setInterval(() => {
      if (this.#events !== this.#seen) {
        this.#seen = this.#events;
        return;
      }
      this.fired = true;
      clearInterval(this.#timer);
      this.controller.abort(
        new ProviderError({ code: "provider.idle-timeout", message: "idle", retryable: true }),
      );
    }, this.ms);
    this.#timer.unref?.();
  }
  tick(): void {
    this.#events++;
  }
  disarm(): void {
    clearInterval(this.#timer);
  }
}

/**
 * The SDK's events, counted for the idle watch. Without `raw` this is a thin iterator (no async
 * generator, no promise of its own per event); with it, each event is also kept as a `raw` part.
 */
function watchEvents<E>(events: AsyncIterable<E>, idle: IdleWatch, raw: boolean) {
  let pending: StreamPart[] = [];
  const counted: AsyncIterable<E> = {
    [Symbol.asyncIterator]() {
      const inner = events[Symbol.asyncIterator]();
      return {
        next() {
          idle.tick();
          if (!raw) return inner.next();
          return inner.next().then((result) => {
            if (!result.done) pending.push({ type: "raw", event: result.value });
            return result;
          });
        },
        return(value?: unknown) {
          return inner.return
            ? inner.return(value)
            : Promise.resolve({ done: true as const, value: value as E });
        },
      };
    },
  };
  return {
    events: counted,
    takeRaw(): StreamPart[] {
      if (pending.length === 0) return NO_PARTS;
      const out = pending;
      pending = [];
      return out;
    },
  };
}

const NO_PARTS: StreamPart[] = [];

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
