/**
 * An abort controller whose `AbortSignal` is made only when someone reads `signal`. Making abort
 * signals is a measurable part of dispatching an action, and most executors of short actions
 * never look at theirs.
 *
 * Contract: behaves like an `AbortController` to its readers: a signal read after `abort` is
 * already aborted with the same reason; `abort` twice keeps the first reason.
 */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
