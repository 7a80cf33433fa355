import { backoffDelay } from "../actions/index.js";
import { waitUnlessAborted } from "./abortable-wait.js";
import type { LineDelivery } from "./line-delivery.js";
import type { SourceContext, SourceCursor } from "./source-types.js";

/**
 * The delays between a network source's attempts after consecutive failures: `baseMs` after the
 * first, doubling after each further one, at most `maxMs` (never below `baseMs`). Without jitter,
 * so the `retryInMs` a notice announces is the wait that follows. `reset()` after a success.
 * Built on the scheduler's one backoff policy (`backoffDelay`).
 */
export class ReconnectBackoff {
  #failures = 0;
  readonly #baseMs: number;
  readonly #maxMs: number;

  constructor(baseMs: number, maxMs: number) {
    this.#baseMs = baseMs;
    this.#maxMs = Math.max(baseMs, maxMs);
  }

  /** Counts one more failure and returns the wait before the next attempt. */
  next(): number {
    this.#failures += 1;
    return backoffDelay(
      this.#failures,
      { baseMs: this.#baseMs, factor: 2, maxMs: this.#maxMs, jitter: 0 },
      () => 0,
    );
  }

  /** Forgets the failures: the next failure waits `baseMs` again. */
  reset(): void {
    this.#failures = 0;
  }
}

/** How one connection of a network source ended. */
export type ConnectionEnd =
  | { kind: "retry"; code: string; message: string }
  | { kind: "exhausted" }
  | { kind: "aborted" };

/** What `reconnectLoop` needs of a network source's run. */
export interface ReconnectingRun {
  delivery: Pick<LineDelivery, "stopped" | "fault" | "report">;
  options: { retry_ms: number; max_backoff_ms: number };
  context: Pick<SourceContext, "signal">;
}

/**
 * Connects again and again until the source stops: after a connection that ends to be retried,
 * a `notice` says why and when it retries (`ReconnectBackoff` over `retry_ms`, reset after a
 * connection that delivered anything), then it waits; a connection that ends the input reports
 * `exhausted`. A fault of the delivery (an internal error) is thrown.
 */
export async function reconnectLoop<Run extends ReconnectingRun>(
  run: Run,
  connectOnce: (run: Run) => Promise<{ end: ConnectionEnd; delivered: boolean }>,
  lastCursor: (run: Run) => SourceCursor,
): Promise<void> {
  const { delivery, options, context } = run;
  const backoff = new ReconnectBackoff(options.retry_ms, options.max_backoff_ms);
  while (!delivery.stopped) {
    const { end, delivered } = await connectOnce(run);
    if (delivery.fault !== undefined) throw delivery.fault;
    if (end.kind === "aborted" || delivery.stopped) return;
    if (end.kind === "exhausted") {
      await delivery.report({ type: "exhausted", cursor: lastCursor(run) });
      return;
    }
    if (delivered) backoff.reset();
    const wait = backoff.next();
    await delivery.report({
      type: "notice",
      code: end.code,
      message: end.message,
      retryInMs: wait,
    });
    if (!(await waitUnlessAborted(wait, context.signal))) return;
  }
}
