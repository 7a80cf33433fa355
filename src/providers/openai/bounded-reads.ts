/** The most bytes the `openai` SDK is handed per read. */
export const MAX_READ_BYTES = 4096;

/**
 * A `fetch` whose response bodies arrive in pieces of at most `max` bytes (views, not copies).
 *
 * Why: the `openai` SDK's SSE chunker copies the rest of its buffer after every event it takes
 * out, so one large socket read (64 KiB of small chunks, which a fast server and a busy consumer
 * produce) costs time quadratic in the read's size. Bounded pieces keep it linear; the SDK still
 * does all the SSE parsing.
 */
export function boundedReadFetch(
  fetchImpl: typeof globalThis.fetch,
  max = MAX_READ_BYTES,
): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    let piece = new Uint8Array(0);
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (offset >= piece.length) {
          const { done, value } = await reader.read();
          if (done || value === undefined) return controller.close();
          piece = value;
          offset = 0;
        }
        const end = Math.min(piece.length, offset + max);
        controller.enqueue(piece.subarray(offset, end));
        offset = end;
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
