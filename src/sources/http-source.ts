/**
 * The `http` source: polls one URL and delivers its body's lines whenever the body changes.
 *
 * Each poll is a conditional GET (the last ETag as `If-None-Match`, the last `Last-Modified` as
 * `If-Modified-Since`). A 304, or a 200 whose body hashes (SHA-256) the same as the last body
 * delivered, delivers nothing. A changed body is split into lines (cut to `maxLineBytes`, invalid
 * UTF-8 replaced and counted) and delivered whole: the held chunk is flushed at its end.
 *
 * Exactly once per body: the chunk that ends a body carries `{ etag?, last_modified?, sha256,
 * polls }`. A chunk that ends inside a body carries the previous body's cursor plus
 * `{ sha256_pending, lines_done }`: a restart from it asks with the previous body's validators,
 * and if the body it gets hashes to `sha256_pending` it skips the `lines_done` lines already
 * logged. If the resource changed again meanwhile, the new body is delivered whole and the rest
 * of the old one is gone (the server no longer has it).
 */
import { z } from "zod";
import { waitUnlessAborted } from "./abortable-wait.js";
import { readBoundedBody } from "./http-body.js";
import { LineDelivery } from "./line-delivery.js";
import { LineSplitter } from "./line-splitter.js";
import {
  byteLimit,
  checkScheme,
  DEFAULT_MAX_MESSAGE_BYTES,
  emitFinal,
  headersOption,
  milliseconds,
  networkHint,
} from "./network-options.js";
import { ReconnectBackoff } from "./reconnect-backoff.js";
import { parseSourceOptions } from "./source-options.js";
import type { Source, SourceContext, SourceCursor, SourceDefinition } from "./source-types.js";

/**
 * The `http` source's `options`: `interval_ms` between polls (default 5,000), `headers` sent with
 * each request, `max_body_bytes` (default 16 MiB; a bigger body is a `source.body-too-large`
 * notice and is retried at the next poll), `max_backoff_ms` (default 60,000): after n failures in a
 * row the next poll waits `interval_ms × 2^(n-1)`, at most this; `timeout_ms` (default 30,000) for
 * one request, body included.
 */
export const httpSourceOptions = z.strictObject({
  interval_ms: milliseconds(5_000),
  headers: headersOption,
  max_body_bytes: byteLimit(DEFAULT_MAX_MESSAGE_BYTES),
  max_backoff_ms: milliseconds(60_000),
  timeout_ms: milliseconds(30_000),
});
type HttpOptions = z.output<typeof httpSourceOptions>;

/** The cursor as read back; tolerant of fields it does not know. */
const httpCursor = z.object({
  etag: z.string().optional(),
  last_modified: z.string().optional(),
  sha256: z.string().optional(),
  polls: z.number().int().nonnegative().optional(),
  sha256_pending: z.string().optional(),
  lines_done: z.number().int().nonnegative().optional(),
});

/** Where the source stands: the last body delivered whole, and a body delivered in part. */
interface HttpState {
  etag?: string;
  lastModified?: string;
  sha256?: string;
  polls: number;
  pending?: { sha256: string; linesDone: number };
}

type PollOutcome =
  | { kind: "not-modified" }
  | { kind: "body"; bytes: Uint8Array; sha256: string; etag?: string; lastModified?: string }
  | { kind: "too-large"; bytes: number }
  | { kind: "status"; status: number; statusText: string }
  | { kind: "unreachable"; message: string }
  | { kind: "aborted" };

/**
 * An `http` source polling `options.url` (the definition's target, parsed) with `options.fetch`
 * (default: the global `fetch`). Its `run` never throws: a wrong option or a URL that is not
 * http(s) is a `failed` emission; an error status, a refused or cut connection, a timeout or a
 * body over `max_body_bytes` is a notice and the source polls on.
 */
export function createHttpSource(
  definition: SourceDefinition,
  options: { url: URL; fetch?: typeof fetch },
): Source {
  return {
    definition,
    run: (context) => runHttpSource(definition, options.url, options.fetch ?? fetch, context),
  };
}

async function runHttpSource(
  definition: SourceDefinition,
  url: URL,
  fetchImpl: typeof fetch,
  context: SourceContext,
): Promise<void> {
  const checked = parseSourceOptions(definition, httpSourceOptions);
  if ("failed" in checked) return emitFinal(context, checked.failed);
  const badTarget = checkScheme(definition, url, ["http:", "https:"]);
  if (badTarget !== undefined) return emitFinal(context, badTarget);
  const delivery = new LineDelivery(definition, context);
  try {
    const state = await startState(context, delivery);
    await pollLoop(
      { definition, url, fetchImpl, context, options: checked.options, delivery },
      state,
    );
  } catch (error) {
    await delivery.report({
      type: "failed",
      code: "source.internal",
      message: `http source ${definition.id} stopped on an internal error: ${describe(error)}`,
    });
  } finally {
    delivery.close();
  }
}

interface Poller {
  definition: SourceDefinition;
  url: URL;
  fetchImpl: typeof fetch;
  context: SourceContext;
  options: HttpOptions;
  delivery: LineDelivery;
}

/** The state a resumed cursor gives; a cursor it cannot read is a notice and a fresh start. */
async function startState(context: SourceContext, delivery: LineDelivery): Promise<HttpState> {
  if (context.cursor === undefined) return { polls: 0 };
  const parsed = httpCursor.safeParse(context.cursor);
  if (!parsed.success) {
    await delivery.report({
      type: "notice",
      code: "source.bad-cursor",
      message: "the logged cursor is not an http cursor; polling from the start",
    });
    return { polls: 0 };
  }
  const cursor = parsed.data;
  const pending =
    cursor.sha256_pending !== undefined
      ? { sha256: cursor.sha256_pending, linesDone: cursor.lines_done ?? 0 }
      : undefined;
  return {
    etag: cursor.etag,
    lastModified: cursor.last_modified,
    sha256: cursor.sha256,
    polls: cursor.polls ?? 0,
    pending,
  };
}

async function pollLoop(poller: Poller, initial: HttpState): Promise<void> {
  const { options, delivery, context } = poller;
  const backoff = new ReconnectBackoff(options.interval_ms, options.max_backoff_ms);
  let state = initial;
  while (!delivery.stopped) {
    state = { ...state, polls: state.polls + 1 };
    const outcome = await pollOnce(poller, state);
    let wait = options.interval_ms;
    if (outcome.kind === "aborted") return;
    if (outcome.kind === "body") {
      backoff.reset();
      state = await deliverBody(poller, state, outcome);
    } else if (outcome.kind === "not-modified") {
      backoff.reset();
    } else if (outcome.kind === "too-large") {
      await delivery.report({
        type: "notice",
        code: "source.body-too-large",
        message: `${poller.url.href} answered a body of ${outcome.bytes} bytes or more, over max_body_bytes (${options.max_body_bytes}); nothing delivered, trying again at the next poll`,
        retryInMs: wait,
      });
    } else {
      wait = backoff.next();
      await delivery.report(failureNotice(poller.url, outcome, wait));
    }
    if (delivery.fault !== undefined) throw delivery.fault;
    if (!(await waitUnlessAborted(wait, context.signal))) return;
  }
}

function failureNotice(
  url: URL,
  outcome: Extract<PollOutcome, { kind: "status" | "unreachable" }>,
  retryInMs: number,
) {
  if (outcome.kind === "status") {
    return {
      type: "notice" as const,
      code: "source.http-status",
      message: `${`${url.href} answered HTTP ${outcome.status} ${outcome.statusText}`.trimEnd()}: ${networkHint("source.http-status", url, outcome.status)}`,
      retryInMs,
    };
  }
  return {
    type: "notice" as const,
    code: "source.unreachable",
    message: `${url.href} could not be read (${outcome.message}): ${networkHint("source.unreachable", url)}`,
    retryInMs,
  };
}

/** One conditional GET, its body read within the limit. Never throws. */
async function pollOnce(poller: Poller, state: HttpState): Promise<PollOutcome> {
  const { options, context } = poller;
  const headers = new Headers(options.headers);
  if (state.etag !== undefined) headers.set("if-none-match", state.etag);
  if (state.lastModified !== undefined) headers.set("if-modified-since", state.lastModified);
  const signal = AbortSignal.any([context.signal, AbortSignal.timeout(options.timeout_ms)]);
  try {
    const response = await poller.fetchImpl(poller.url, { headers, signal });
    if (response.status === 304) {
      await response.body?.cancel().catch(() => undefined);
      return { kind: "not-modified" };
    }
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => undefined);
      return { kind: "status", status: response.status, statusText: response.statusText };
    }
    const body = await readBoundedBody(response, options.max_body_bytes);
    if (body.kind === "too-large") return body;
    return {
      ...body,
      etag: response.headers.get("etag") ?? undefined,
      lastModified: response.headers.get("last-modified") ?? undefined,
    };
  } catch (error) {
    if (context.signal.aborted) return { kind: "aborted" };
    if (signal.aborted) {
      return {
        kind: "unreachable",
        message: `no answer within timeout_ms (${options.timeout_ms})`,
      };
    }
    return { kind: "unreachable", message: describe(error) };
  }
}

/** Delivers a body that differs from the last one delivered; returns the state after it. */
async function deliverBody(
  poller: Poller,
  state: HttpState,
  body: Extract<PollOutcome, { kind: "body" }>,
): Promise<HttpState> {
  const after: HttpState = {
    etag: body.etag,
    lastModified: body.lastModified,
    sha256: body.sha256,
    polls: state.polls,
  };
  if (body.sha256 === state.sha256) return after;
  const splitter = new LineSplitter(poller.definition.batching.maxLineBytes);
  const lines = [...splitter.push(body.bytes), ...splitter.end()];
  const skip = state.pending?.sha256 === body.sha256 ? state.pending.linesDone : 0;
  const before = cursorOf({ ...state, pending: undefined });
  const whole = cursorOf(after);
  const cursorAfter = (linesDone: number): SourceCursor =>
    linesDone >= lines.length
      ? whole
      : { ...before, sha256_pending: body.sha256, lines_done: linesDone };
  await poller.delivery.deliver(lines, cursorAfter, { skip, flush: true });
  return after;
}

function cursorOf(state: HttpState): SourceCursor {
  return {
    ...(state.etag !== undefined ? { etag: state.etag } : {}),
    ...(state.lastModified !== undefined ? { last_modified: state.lastModified } : {}),
    ...(state.sha256 !== undefined ? { sha256: state.sha256 } : {}),
    polls: state.polls,
  };
}

/** An error as one line: undici's "fetch failed" with the cause that says why. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return `${error.message} (${typeof code === "string" ? `${code}: ` : ""}${cause.message})`;
  }
  return error.message;
}
