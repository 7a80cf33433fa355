/** The most bytes of an error body read to see its shape (an error body is small). */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * A `fetch` whose JSON error responses always have OpenAI's shape, `{ "error": { … } }`.
 *
 * Why: some compatible servers (vLLM before its errors were wrapped, some proxies) answer an
 * error as a bare `{ "message", "type", "code" }`. The `openai` SDK reads only the `error` field
 * of an error body, so it dropped their message ("400 status code (no body)") and with it what
 * the failure was (a context too long, a bad parameter). Successful responses pass untouched.
 */
export function wrappedErrorFetch(fetchImpl: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (response.ok || !type.includes("json")) return response;
    const text = await response.text();
    let body: unknown;
    try {
      body = text.length <= MAX_ERROR_BODY ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const bare =
      body !== null &&
      typeof body === "object" &&
      !Array.isArray(body) &&
      !("error" in body) &&
      typeof (body as { message?: unknown }).message === "string";
    // The body is decoded and may change length: its encoding and length headers no longer hold.
    const headers = new Headers(response.headers);
    headers.delete("content-length");
    headers.delete("content-encoding");
    return new Response(bare ? JSON.stringify({ error: body }) : text, {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
}
