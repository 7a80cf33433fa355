import type { Provider, ProviderRequest, StreamOptions, StreamPart } from "../providers/index.js";

/**
 * A model call made while its step's start is still being written (`durability: "fast"` only).
 *
 * The request goes out at once: the call asks for its first part as it opens, so the provider
 * sends the request while the log commits. Nothing of the answer is looked at until the caller
 * takes `parts()`, which it does only once the start is written: every part still follows a
 * durable start, and a call whose start is never written is aborted unseen, or carried over to
 * the same step compiled again (`StartCarry`).
 */
export class EarlyCall {
  /** The request this call sent. */
  readonly request: ProviderRequest;
  readonly #controller = new AbortController();
  readonly #iterator: AsyncIterator<StreamPart>;
  /** The step's signal, followed by the call's own until the call ends. */
  readonly #outer: AbortSignal | undefined;
  readonly #follow = () => this.#controller.abort(this.#outer?.reason);
  #first: Promise<IteratorResult<StreamPart>> | undefined;
  #taken = false;

  constructor(provider: Provider, request: ProviderRequest, signal?: AbortSignal) {
    this.request = request;
    // A listener, not `AbortSignal.any` (tens of µs a call on Node 20), taken off as the call ends.
    this.#outer = signal;
    if (signal?.aborted) this.#follow();
    else signal?.addEventListener("abort", this.#follow, { once: true });
    const options: StreamOptions = { signal: this.#controller.signal };
    this.#iterator = provider.stream(request, options)[Symbol.asyncIterator]();
    this.#first = this.#iterator.next();
    // Looked at only when the parts are taken; an aborted call's failure is nobody's.
    this.#first.catch(() => undefined);
  }

  /**
   * The call's parts, from the first; once. Call `ended()` once they are read (or abandoned):
   * the call then stops following the step's signal.
   */
  parts(): AsyncIterable<StreamPart> {
    if (this.#taken) throw new Error("an early call's parts are taken once");
    this.#taken = true;
    const iterator = this.#iterator;
    // The rest straight from the provider: no extra promise per part.
    const next = (): Promise<IteratorResult<StreamPart>> => {
      const first = this.#first;
      if (first === undefined) return iterator.next();
      this.#first = undefined;
      return first;
    };
    return {
      [Symbol.asyncIterator]: () => ({
        next,
        return: async () => {
          await iterator.return?.();
          return { done: true, value: undefined };
        },
      }),
    };
  }

  /** The parts are read: the call stops following the step's signal. */
  ended(): void {
    this.#unfollow();
  }

  /** Stops the call unseen: its start was not written and nothing will take its parts. */
  abort(): void {
    if (this.#taken) return;
    this.#taken = true;
    this.#first = undefined;
    this.#unfollow();
    this.#controller.abort(new Error("the step's start was not written"));
    this.#iterator.return?.().catch(() => undefined);
  }

  #unfollow(): void {
    this.#outer?.removeEventListener("abort", this.#follow);
  }
}

/**
 * A step's early call across a refused start. `runModelStep` leaves the call it made here when
 * its start was refused (`store.seq-moved`); the step is compiled again, and when the new request
 * is the same, the next attempt takes the call instead of sending it again, so a refusal costs no
 * second request. `release` aborts a call nobody took.
 */
export class StartCarry {
  #call: EarlyCall | undefined;

  /** Leaves `call` for the next attempt. */
  keep(call: EarlyCall): void {
    this.release();
    this.#call = call;
  }

  /** The kept call when it sent `request` (the same text), else `undefined` (and it is aborted). */
  take(request: ProviderRequest): EarlyCall | undefined {
    const call = this.#call;
    this.#call = undefined;
    if (!call) return undefined;
    if (sameRequest(call.request, request)) return call;
    call.abort();
    return undefined;
  }

  /** Aborts a kept call nobody took. */
  release(): void {
    this.#call?.abort();
    this.#call = undefined;
  }
}

function sameRequest(a: ProviderRequest, b: ProviderRequest): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
