import type { FetchLike, FetchLikeResponse } from "eventsource";

/** What the `fetch` handed to one `EventSource` needs from its source. */
export interface SseFetchControl {
  /** Headers sent with every request (the definition's `headers`). */
  headers: Readonly<Record<string, string>>;
  /** The id to send as `Last-Event-ID`, if any: the last one the source delivered. */
  lastEventId(): string | undefined;
  /** Resolves when the source is ready for more of the stream (or the connection is over). */
  ready(): Promise<void>;
  /** Bytes one message (everything since the last blank line) may take. */
  maxMessageBytes: number;
  /** Called once when a message grew past `maxMessageBytes`: the stream then fails. */
  onTooLarge(): void;
  /** The source's signal: aborting it aborts the request and the body. */
  signal: AbortSignal;
}

/**
 * The `fetch` an `EventSource` of the `eventsource` package is built with (its documented way to
 * change requests). It adds the source's headers and `Last-Event-ID` (so a new `EventSource`
 * resumes where the last one, or the last process, stopped), and hands the package a body that
 * (1) is read from the socket only when `ready()` resolves, so nothing more is read while the
 * source's emissions wait (TCP backpressure reaches the server), and (2) fails once one message
 * exceeds `maxMessageBytes`, which the package would otherwise buffer without bound. A response
 * the package will refuse (not 200, not `text/event-stream`) has its body cancelled at once, so
 * its connection is not left open.
 */
export function createSseFetch(control: SseFetchControl, fetchImpl: typeof fetch): FetchLike {
  return async (input, init): Promise<FetchLikeResponse> => {
    const headers = new Headers(control.headers);
    for (const [name, value] of Object.entries(init.headers)) headers.set(name, value);
    const id = control.lastEventId();
    // A header carries bytes: the id goes as its UTF-8 bytes, as browsers send it.
    if (id !== undefined && id !== "") {
      headers.set("last-event-id", Buffer.from(id, "utf8").toString("latin1"));
    }
    const signal = AbortSignal.any([init.signal as AbortSignal, control.signal]);
    const response = await fetchImpl(input, { headers, signal, redirect: init.redirect });
    const type = response.headers.get("content-type") ?? "";
    const readable = response.status === 200 && type.startsWith("text/event-stream");
    if (!readable) await response.body?.cancel().catch(() => undefined);
    return {
      status: response.status,
      headers: response.headers,
      url: response.url,
      redirected: response.redirected,
      body: readable && response.body !== null ? gatedBody(response.body, control) : null,
    };
  };
}

/** `body`, read on only when the source is ready, failing past the message bound. */
function gatedBody(
  body: ReadableStream<Uint8Array>,
  control: SseFetchControl,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const bound = new MessageBound(control.maxMessageBytes);
  let overflowed = false;
  const fail = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    control.onTooLarge();
    await reader.cancel().catch(() => undefined);
    controller.error(new Error(`a message exceeded ${control.maxMessageBytes} bytes`));
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // The whole messages before the oversized one went on first; now the stream fails.
        if (overflowed) return fail(controller);
        await control.ready();
        const { done, value } = await reader.read();
        if (done) return controller.close();
        const accepted = bound.take(value);
        if (accepted === value.length) return controller.enqueue(value);
        overflowed = true;
        if (accepted > 0) return controller.enqueue(value.subarray(0, accepted));
        return fail(controller);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of the message being received: everything since the last blank line (two line
 * ends in a row, where a line end is CR, LF or CRLF), which is what a message's fields and its
 * partial line take in the parser. Only finds blank lines; the parsing is the package's.
 */
class MessageBound {
  readonly #max: number;
  #bytes = 0;
  #atLineStart = true;
  #afterCr = false;
  /** The last CR ended a blank line (so its LF, if one follows, belongs to that end). */
  #blankCr = false;

  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Takes `bytes` of the stream: all of them (their length) while the message under way stays
   * within the bound; else how many to pass on, up to the end of the last whole message.
   */
  take(bytes: Uint8Array): number {
    let lastEnd = 0;
    for (let index = 0; index < bytes.length; index += 1) {
      const byte = bytes[index];
      this.#bytes += 1;
      if (byte === LF && this.#afterCr) {
        // The LF of a CRLF: part of the line end the CR made.
        this.#afterCr = false;
        if (this.#blankCr) {
          this.#bytes = 0;
          lastEnd = index + 1;
        }
        continue;
      }
      this.#afterCr = byte === CR;
      this.#blankCr = false;
      if (byte === LF || byte === CR) {
        if (this.#atLineStart) {
          this.#bytes = 0;
          lastEnd = index + 1;
          this.#blankCr = byte === CR;
        }
        this.#atLineStart = true;
      } else {
        this.#atLineStart = false;
        if (this.#bytes > this.#max) return lastEnd;
      }
    }
    return bytes.length;
  }
}
