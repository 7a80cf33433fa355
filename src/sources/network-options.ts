/**
 * The options the network sources (http, sse, websocket) share, their checks, and the one way
 * they turn a bad definition into a `failed` emission: what retrying cannot fix.
 */
import { z } from "zod";
import type { SourceContext, SourceDefinition, SourceFailedEmission } from "./source-types.js";

/** 16 MiB: the default bound on one HTTP body or one SSE/WebSocket message. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const positiveMs = z.number().int().min(1).max(86_400_000);

/** Request headers as a record of strings; names and values must be ones `Headers` accepts. */
export const headersOption = z
  .record(z.string(), z.string())
  .default({})
  .superRefine((record, context) => {
    try {
      new Headers(record);
    } catch {
      context.addIssue({
        code: "custom",
        message:
          "a header has an invalid name or value (names: letters, digits, `-`; no line breaks)",
      });
    }
  });

/** Reconnection delays: the first wait (`retry_ms`, default 1,000) doubling up to `max_backoff_ms`. */
export const reconnectOptions = {
  retry_ms: positiveMs.default(1_000),
  max_backoff_ms: positiveMs.default(60_000),
};

/** A byte bound option (at least 1 byte, at most 1 GiB). */
export function byteLimit(defaultBytes: number) {
  return z
    .number()
    .int()
    .min(1)
    .max(1024 ** 3)
    .default(defaultBytes);
}

/** A positive number of milliseconds with a default. */
export function milliseconds(defaultMs: number) {
  return positiveMs.default(defaultMs);
}

/**
 * `undefined` when `url` uses one of `schemes` (with their colons: `"https:"`), else the
 * `failed` emission (`source.bad-target`) that says which schemes the kind reads.
 */
export function checkScheme(
  definition: SourceDefinition,
  url: URL,
  schemes: readonly string[],
): SourceFailedEmission | undefined {
  if (schemes.includes(url.protocol)) return undefined;
  return {
    type: "failed",
    code: "source.bad-target",
    message: `${definition.kind} source ${definition.id} cannot read ${url.protocol} URLs (${url.href}); use ${schemes.map((scheme) => `${scheme}//`).join(" or ")}`,
  };
}

/**
 * Hands a source's last emission (a `failed` before it read anything) to the runner, ignoring a
 * refusal: the run ends after it either way.
 */
export async function emitFinal(
  context: SourceContext,
  emission: SourceFailedEmission,
): Promise<void> {
  try {
    await context.emit(emission);
  } catch {
    // The runner stopped: there is no one left to tell.
  }
}

/**
 * What to do about a network source's trouble, to end its notice's message: by the notice's
 * `code` and, for `source.http-status`, the status. The source retries on its own either way.
 */
export function networkHint(code: string, url: URL, status?: number): string {
  const again = "the source tries again on its own";
  if (code === "source.http-status" && status !== undefined) {
    if (status >= 500) return `the server at ${url.host} failed (its own logs say why); ${again}`;
    if (status === 401 || status === 403 || status === 407) {
      return `the server refused the request: check the credentials in the source's headers option; ${again}`;
    }
    if (status === 404 || status === 410) return `check the source's URL (its target); ${again}`;
    if (status === 429) return `the server limits requests: raise the source's interval; ${again}`;
    return `check the source's URL and headers; ${again}`;
  }
  if (code === "source.unreachable") {
    return `check that a server is running at ${url.host} and that the URL is right; ${again}`;
  }
  if (code === "source.disconnected") {
    return `${again}, resuming where it stood; if it keeps happening, look at the server at ${url.host}`;
  }
  if (code === "source.message-too-large") {
    return `raise the source's max_message_bytes if such messages are expected`;
  }
  return again;
}
