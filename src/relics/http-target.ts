import { RelicError } from "./relic-error.js";

/**
 * The URL a request goes to. A relative `path` is appended to the base URL's path
 * (`https://h/api` + `users/1` → `https://h/api/users/1`, a leading `/` or not); an absolute
 * `http(s)://…` or protocol-relative `//…` path stands for itself. `query` values are appended
 * as search parameters. Throws `relic.http.bad-url` for anything that is not http(s).
 */
export function resolveRequestUrl(
  base: URL,
  path: string,
  query: Readonly<Record<string, string | number | boolean>> | undefined,
): URL {
  let url: URL;
  try {
    if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith("//")) {
      url = new URL(path, base);
    } else {
      url = new URL(base.href);
      const [pathPart = "", search] = splitOnce(path, "?");
      url.pathname = `${base.pathname.replace(/\/+$/, "")}/${pathPart.replace(/^\/+/, "")}`;
      if (search !== undefined) url.search = search;
    }
  } catch (error) {
    throw new RelicError("relic.http.bad-url", `"${path}" is not a valid URL path`, {
      cause: error,
      hint: "Pass a path such as users/1, or a full https:// URL on an allowed host",
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RelicError("relic.http.bad-url", `"${url.protocol}" URLs are not supported`, {
      hint: "Use an http:// or https:// URL",
    });
  }
  for (const [name, value] of Object.entries(query ?? {}))
    url.searchParams.append(name, String(value));
  return url;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** Reads at most `maxBytes` of a body; throws `relic.http.response-too-large` past that. */
export async function readLimited(response: Response, maxBytes: number): Promise<Uint8Array> {
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new RelicError(
        "relic.http.response-too-large",
        `the response body is larger than ${maxBytes} bytes`,
        { hint: "Ask for less (a narrower query, a page of results)" },
      );
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * A body as the model reads it: parsed JSON, text (text types, or valid UTF-8 without a declared
 * type), or base64 for anything binary.
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string,
): { body: unknown; encoding: "json" | "text" | "base64" } {
  const type = contentType.toLowerCase();
  const text = () => new TextDecoder().decode(bytes);
  if (type.includes("json")) {
    try {
      return { body: JSON.parse(text()) as unknown, encoding: "json" };
    } catch {
      return { body: text(), encoding: "text" };
    }
  }
  if (bytes.byteLength === 0 || /^text\/|xml|javascript|x-www-form-urlencoded/.test(type)) {
    return { body: text(), encoding: "text" };
  }
  if (type === "") {
    // No declared type: text when the bytes are valid UTF-8.
    try {
      return { body: new TextDecoder("utf-8", { fatal: true }).decode(bytes), encoding: "text" };
    } catch {
      // Not UTF-8: binary.
    }
  }
  return { body: Buffer.from(bytes).toString("base64"), encoding: "base64" };
}
